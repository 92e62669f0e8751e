package org.qnix.abi;

/**
 * A NIC's wake-up line, {@code node-X-Y/nic.wake}: the {@link FileDescriptorBlock}, then the Wake
 * Sequence, the word a sleeping NIC control program waits on with a futex and that whoever gives it
 * work bumps before waking it ({@link NicWakeUp}). The NIC polls its queues while it is busy (thesis
 * 3.3.3) and only sleeps once it has been idle for a while; this is the emulated doorbell interrupt
 * the other way round, so that an idle cluster costs no CPU and its first message no delay.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ WAKE_SEQUENCE_OFFSET
 *  |  Wake Sequence (32 bits): bumped by every waker of an asleep  |
 *  |  NIC, so that a wake between the NIC's last look for work and |
 *  |  its futex wait changes the word and the wait returns at once |
 *  +---------------------------------------------------------------+
 *  |  Padding to a cache line                                      |
 *  +---------------------------------------------------------------+ FILE_LENGTH
 * </pre>
 *
 * <p>Processes map it read-write (a waker must change the word); the flag that says the NIC sleeps is
 * in the read-only Control Program segment ({@link ControlProgramLayout#ASLEEP_OFFSET}). A process that
 * scribbles here can only wake the NIC for nothing, which costs CPU, as spinning would.
 */
public final class NicWakeLayout
{
    public static final int WAKE_SEQUENCE_OFFSET = FileDescriptorBlock.LENGTH;
    public static final int FILE_LENGTH = WAKE_SEQUENCE_OFFSET + Sizes.CACHE_LINE;

    private NicWakeLayout()
    {
    }
}
