package org.qnix.daemon;

/**
 * Whether a process the driver waits on behalf of still lives: a wait for a dead one ends at once, as
 * nobody is left to read its reply.
 *
 * <pre>{@code
 * if (!Processes.isAlive(osPid)) { giveUp(); }
 * }</pre>
 */
final class Processes
{
    private Processes()
    {
    }

    /** @return true if a process with that pid exists and has not exited, as {@link ProcessHandle} sees it. */
    static boolean isAlive(final long pid)
    {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
}
