package org.qnix.abi;

import java.lang.invoke.VarHandle;

import org.agrona.concurrent.AtomicBuffer;

/**
 * Wakes a NIC control program that sleeps because it had nothing to do (issue 13: an idle cluster costs
 * nothing): whoever gives a NIC work rings this after publishing it, a process after a Command Queue
 * entry, the driver after a Driver Command, another NIC after a packet in its FIFO. It costs a fence and
 * a read of the NIC's Asleep flag while the NIC is awake; only an asleep NIC gets the system call.
 *
 * <pre>{@code
 * NicWakeUp wakeUp = new NicWakeUp(control.buffer(), 0, wake.buffer());
 * entry.publish(command, context, group, size);   // release store of the work
 * wakeUp.ring();
 * }</pre>
 *
 * <p>Thread safe; allocation free.
 */
public final class NicWakeUp
{
    private final AtomicBuffer control;
    private final int asleepOffset;
    private final AtomicBuffer wake;
    private final long sequenceAddress;

    /**
     * @param control       a mapping of the NIC's Control Program segment (read-only is enough).
     * @param controlOffset where that segment starts in {@code control}.
     * @param wake          a read-write mapping of the NIC's {@code nic.wake} file, from its start.
     */
    public NicWakeUp(final AtomicBuffer control, final int controlOffset, final AtomicBuffer wake)
    {
        this.control = control;
        this.asleepOffset = controlOffset + ControlProgramLayout.ASLEEP_OFFSET;
        this.wake = wake;
        this.sequenceAddress = wake.addressOffset() + NicWakeLayout.WAKE_SEQUENCE_OFFSET;
    }

    /** Wakes the NIC if it sleeps; call it after the work is published. */
    public void ring()
    {
        // Dekker with the NIC, which sets Asleep and then looks for work once more: the store of the work
        // before this call must be visible before Asleep is read, or both could miss the other.
        VarHandle.fullFence();
        // Writer: the NIC control program, before its last look for work and again when it wakes.
        if (ControlProgramLayout.ASLEEP == control.getIntVolatile(asleepOffset))
        {
            // Reader: the NIC's futex wait, which returns at once when the word moved since its last look.
            wake.getAndAddInt(NicWakeLayout.WAKE_SEQUENCE_OFFSET, 1);
            Futex.wakeAll(sequenceAddress);
        }
    }
}
