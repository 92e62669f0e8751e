package org.qnix.host;

import java.util.Locale;

/**
 * How a process waits for a doorbell to complete (thesis 3.3.2: the process polls the doorbell of
 * its context; the NIC writes it last). Each trades latency against a core, which matters when the
 * NICs' control programs share a small machine with the programs:
 *
 * <ul>
 *   <li>{@link #BUSY}: spin on the doorbell word and nothing else. The fastest reaction, and a core
 *       taken for the whole wait.</li>
 *   <li>{@link #YIELD}: look, then {@code Thread.yield()}. Gives the core away whenever another thread
 *       is runnable, at the cost of a system call per look.</li>
 *   <li>{@link #BACKOFF}: spin, then yield, then park: 50 us at a time, growing to 3.2 ms once the wait
 *   has lasted about 0.2 s ({@link BackOff}), so a completion after that is seen up to 3.2 ms late and
 *   a stopped NIC up to 0.8 s after its heartbeat timeout. Cheap when a wait is long.</li>
 *   <li>{@link #SLEEP}: spin, then sleep on the doorbell word (futex) until the NIC wakes this process,
 *       the emulated interrupt. No CPU while waiting; a wake-up in latency.</li>
 * </ul>
 *
 * <pre>{@code
 * qnix.awaitSend(tx, DoorbellWait.BUSY, 5, TimeUnit.SECONDS);
 * qnix.awaitReceive(rx, status, DoorbellWait.parse("sleep"), 5, TimeUnit.SECONDS);
 * }</pre>
 */
public enum DoorbellWait
{
    BUSY,
    YIELD,
    BACKOFF,
    SLEEP;

    /** @return the lower-case name used on command lines: busy, yield, backoff or sleep. */
    public String label()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param name busy, yield, backoff or sleep (any case).
     * @throws IllegalArgumentException naming the choices.
     */
    public static DoorbellWait parse(final String name)
    {
        for (final DoorbellWait wait : values())
        {
            if (wait.label().equalsIgnoreCase(name))
            {
                return wait;
            }
        }
        throw new IllegalArgumentException("doorbell wait '" + name + "': use busy, yield, backoff or sleep");
    }
}
