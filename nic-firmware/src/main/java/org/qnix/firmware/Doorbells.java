package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.Futex;
import org.qnix.abi.HostProcessStructuresLayout;

/**
 * The NIC's writes into the Doorbell Arrays of host memory (thesis 3.3.2): the completion of every
 * process operation, point-to-point or collective, ends here.
 */
final class Doorbells
{
    private final AtomicBuffer host;
    private final NicCounters counters;
    private final String nodeName;

    Doorbells(final AtomicBuffer host, final NicCounters counters, final String nodeName)
    {
        this.nodeName = nodeName;
        this.host = host;
        this.counters = counters;
    }

    /**
     * Writes a doorbell with release semantics (the process reads it with acquire) and, if the process
     * sleeps on it, wakes it: the emulated interrupt (DESIGN.md 5).
     *
     * @param doorbellArray host address of the process's Send or Receive Doorbell Array.
     */
    void ring(final long doorbellArray, final int context, final int value)
    {
        final int address = (int)(doorbellArray + (long)context * HostProcessStructuresLayout.DOORBELL_LENGTH);
        // Reader: the owner process polling this doorbell (qx_poll_for_send / qx_poll_for_receive). A
        // volatile write, not just release: with the process's volatile write of Waiters before its
        // last look, one of the two always sees the other (no lost wake-up).
        host.putIntVolatile(address + HostProcessStructuresLayout.DOORBELL_VALUE_OFFSET, value);
        final boolean sleeping = 0 != host.getIntVolatile(address + HostProcessStructuresLayout.DOORBELL_WAITERS_OFFSET);
        if (sleeping)
        {
            Futex.wakeAll(host.addressOffset() + address + HostProcessStructuresLayout.DOORBELL_VALUE_OFFSET);
            counters.doorbellWakeups.increment();
        }
        FirmwareEvents.doorbellRung(nodeName, doorbellArray, context, value, sleeping);
    }
}
