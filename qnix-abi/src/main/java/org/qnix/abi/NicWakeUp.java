package org.qnix.abi;

import java.lang.invoke.VarHandle;

import org.agrona.concurrent.AtomicBuffer;

/**
 * Wakes a NIC control program that sleeps because it had nothing to do (issue 13: an idle cluster costs
 * nothing): whoever gives a NIC work rings this after publishing it, a process after a Command Queue
 * entry, the driver after a Driver Command, another NIC after a packet in its FIFO. It costs a fence and
 * a read of the NIC's Asleep flag while the NIC is awake; only an asleep NIC gets the system call
 * ({@link NicWakeLayout}).
 *
 * <pre>{@code
 * NicWakeUp wakeUp = new NicWakeUp(wakeFile.buffer());
 * entry.publish(command, context, group, size);   // release store of the work
 * wakeUp.ring();
 * }</pre>
 *
 * <p>Thread safe; allocation free.
 */
public final class NicWakeUp
{
    private final AtomicBuffer asleep;
    private final int asleepOffset;
    private final AtomicBuffer sequence;
    private final int sequenceOffset;

    /** @param wakeFile a read-write mapping of the whole {@code nic.wake} file. */
    public NicWakeUp(final AtomicBuffer wakeFile)
    {
        this(wakeFile, NicWakeLayout.ASLEEP_OFFSET, wakeFile, NicWakeLayout.WAKE_SEQUENCE_OFFSET);
    }

    /**
     * @param asleep         a mapping of the Asleep flag (read-only is enough).
     * @param asleepOffset   where the flag is in {@code asleep}.
     * @param sequence       a read-write mapping of the Wake Sequence.
     * @param sequenceOffset where the sequence is in {@code sequence}.
     */
    public NicWakeUp(final AtomicBuffer asleep, final int asleepOffset, final AtomicBuffer sequence,
        final int sequenceOffset)
    {
        this.asleep = asleep;
        this.asleepOffset = asleepOffset;
        this.sequence = sequence;
        this.sequenceOffset = sequenceOffset;
    }

    /** Wakes the NIC if it sleeps; call it after the work is published. */
    public void ring()
    {
        // Dekker with the NIC, which sets Asleep and then looks for work once more: the store of the work
        // before this call must be visible before Asleep is read, or both could miss the other.
        VarHandle.fullFence();
        // Writer: the NIC control program, before its last look for work and again when it wakes.
        if (NicWakeLayout.ASLEEP == asleep.getIntVolatile(asleepOffset))
        {
            // Reader: the NIC's futex wait, which returns at once when the word moved since its last look.
            sequence.getAndAddInt(sequenceOffset, 1);
            Futex.wakeAll(sequence.addressOffset() + sequenceOffset);
        }
    }
}
