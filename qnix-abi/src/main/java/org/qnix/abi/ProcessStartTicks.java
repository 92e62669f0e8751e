package org.qnix.abi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * When a process started, as the kernel counts it: clock ticks after boot, field 22 of
 * {@code /proc/PID/stat}. Unlike a start time in wall-clock milliseconds it does not move when the clock
 * is set, so a pid and its start ticks name one process for good: the NIC control program publishes its
 * own ({@link ControlProgramLayout#PROCESS_START_TICKS_OFFSET}), and the driver tells its process from a
 * later one that reused the pid.
 *
 * <pre>{@code
 * long mine = ProcessStartTicks.of(ProcessHandle.current().pid());
 * boolean same = mine != 0 && mine == ProcessStartTicks.of(pid);
 * }</pre>
 */
public final class ProcessStartTicks
{
    /** {@code starttime} is field 22; fields after the command's closing parenthesis start at 3. */
    private static final int FIELD_AFTER_COMMAND = 22 - 3;
    /** How often {@link #awaitExit} looks: a process's exit takes milliseconds. */
    private static final long EXIT_POLL_MS = 20;

    private ProcessStartTicks()
    {
    }

    /** @return the process's start in clock ticks after boot, or 0 if there is no such process (or no /proc). */
    public static long of(final long pid)
    {
        final String[] fields = fields(pid);
        return null == fields ? 0 : start(fields);
    }

    /**
     * @return as {@link #of}, but 0 also for a process that has exited and waits for its parent to reap it
     * (state Z or X): it runs no code and maps nothing any more, though its pid is still taken.
     */
    public static long ofLiving(final long pid)
    {
        final String[] fields = fields(pid);
        return null == fields || fields[0].equals("Z") || fields[0].equals("X") ? 0 : start(fields);
    }

    /**
     * @return true once the process recorded with this pid and start has exited: no process has the pid,
     * a later one has it, or it is a zombie waiting to be reaped. Unlike {@link ProcessHandle#onExit} of a
     * process that is not this one's child, this does not wait for the reap, which may never come when
     * the process's new parent (a container's first process, say) does not reap its orphans.
     */
    public static boolean hasExited(final long pid, final long startTicks)
    {
        return 0 == startTicks || ofLiving(pid) != startTicks;
    }

    /**
     * Waits for a process that was told to stop, by polling {@link #hasExited}. An interrupt does not
     * cut the wait short (the caller's next step, a SIGKILL or a removal, needs the answer); it is kept
     * for the caller to see.
     *
     * <pre>{@code
     * long ticks = ProcessStartTicks.ofLiving(pid);
     * process.destroy();
     * if (!ProcessStartTicks.awaitExit(pid, ticks, 5_000)) { process.destroyForcibly(); }
     * }</pre>
     *
     * @param startTicks as {@link #ofLiving} gave before the process was told to stop (0: gone already).
     * @return true once it has exited, false if it still runs after {@code timeoutMs}.
     */
    public static boolean awaitExit(final long pid, final long startTicks, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        boolean interrupted = false;
        try
        {
            while (!hasExited(pid, startTicks))
            {
                if (System.nanoTime() - deadline >= 0)
                {
                    return false;
                }
                try
                {
                    Thread.sleep(EXIT_POLL_MS);
                }
                catch (final InterruptedException ex)
                {
                    interrupted = true;
                }
            }
            return true;
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the fields of {@code /proc/PID/stat} after the command (the state first), or null. */
    private static String[] fields(final long pid)
    {
        try
        {
            // ISO-8859-1 decodes every byte: a command name in UTF-8 (field 2) must not make the read fail.
            final String stat =
                Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.ISO_8859_1);
            // The command (field 2) is in parentheses and may itself hold spaces and parentheses.
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }

    private static long start(final String[] fields)
    {
        try
        {
            return fields.length > FIELD_AFTER_COMMAND ? Long.parseLong(fields[FIELD_AFTER_COMMAND]) : 0;
        }
        catch (final NumberFormatException ex)
        {
            return 0;
        }
    }
}
