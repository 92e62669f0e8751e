package org.qnix.abi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

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
