package org.qnix.abi;

/**
 * A NIC's wake-up line, {@code node-X-Y/nic.wake}: the {@link FileDescriptorBlock}, the Asleep flag and
 * the Wake Sequence, each on a page of its own. The NIC polls its queues while it is busy (thesis 3.3.3)
 * and sleeps only once it has been idle for a while: it sets Asleep and waits on the Wake Sequence with a
 * futex; whoever gives it work and finds Asleep set bumps the sequence and wakes it ({@link NicWakeUp}).
 * This is the emulated doorbell interrupt the other way round: an idle cluster costs no CPU and its first
 * message no delay.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ ASLEEP_OFFSET
 *  |  Asleep (32 bits): 1 from the NIC's last look for work before |
 *  |  a sleep until it wakes. Written by the NIC only.             |
 *  +---------------------------------------------------------------+ WAKE_SEQUENCE_OFFSET
 *  |  Wake Sequence (32 bits): bumped by every waker of an asleep  |
 *  |  NIC, so that a wake between the NIC's last look for work and |
 *  |  its futex wait changes the word and the wait returns at once |
 *  +---------------------------------------------------------------+ FILE_LENGTH
 * </pre>
 *
 * <p>A page each, so that a process maps Asleep read-only and the Wake Sequence read-write: a process
 * that scribbles on the sequence only wakes the NIC for nothing, which costs CPU as spinning would; it
 * cannot hide a sleeping NIC from the others. Other NICs and the driver map the whole file.
 */
public final class NicWakeLayout
{
    public static final int PAGE = 4096;
    public static final int ASLEEP_OFFSET = FileDescriptorBlock.LENGTH;
    public static final int WAKE_SEQUENCE_OFFSET = ASLEEP_OFFSET + PAGE;
    public static final int FILE_LENGTH = WAKE_SEQUENCE_OFFSET + PAGE;

    public static final int AWAKE = 0;
    public static final int ASLEEP = 1;

    private NicWakeLayout()
    {
    }
}
