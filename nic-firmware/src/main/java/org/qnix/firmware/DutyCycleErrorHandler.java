package org.qnix.firmware;

import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.AtomicCounter;
import org.qnix.abi.DriverCommand;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessCommand;
import org.qnix.abi.SystemMessage;
import org.qnix.abi.WireMessageType;

/**
 * Where an exception thrown inside the NIC's duty cycle ends (the role of Aeron's driver
 * {@code ErrorHandler} with its errors counter): the packet or command that caused it is dropped,
 * the loop goes on (DESIGN.md 4), and the error is
 *
 * <ul>
 *   <li>counted in {@link NicCounters#DUTY_CYCLE_ERRORS} and in a counter named after its cause
 *       ({@link NicCounters#ERRORS_CAUSED_BY} + "system message Permission_Request", "process command
 *       Send", ...), made the first time that cause is seen while the counters file has room;</li>
 *   <li>logged with its stack trace the first time its kind is seen: the exception class and where it
 *       was thrown. A packet that keeps coming back cannot fill the log.</li>
 * </ul>
 *
 * <p>Only the error path allocates (the cause's name, the kind's key).
 *
 * <pre>{@code
 * try { onSystemMessage(code, buffer, payload, length); }
 * catch (RuntimeException ex) { errors.onSystemMessageError(ex, code); }
 * }</pre>
 */
public final class DutyCycleErrorHandler implements ErrorHandler
{
    private final NicCoordinates node;
    private final NicCounters counters;
    private final PrintStream log;
    private final Set<String> kindsLogged = new HashSet<>();

    DutyCycleErrorHandler(final NicCoordinates node, final NicCounters counters, final PrintStream log)
    {
        this.node = node;
        this.counters = counters;
        this.log = log;
    }

    /** An error no role caught: from the loop itself (the {@code AgentRunner}'s error handler). */
    public void onError(final Throwable error)
    {
        onError(error, "the duty cycle");
    }

    void onSystemMessageError(final Throwable error, final int code)
    {
        onError(error, "system message " + SystemMessage.name(code));
    }

    void onDataPacketError(final Throwable error)
    {
        onError(error, "data packet");
    }

    void onWireMessageError(final Throwable error, final int messageType)
    {
        onError(error, WireMessageType.SYSTEM_MESSAGE == messageType ? "system message (header)" :
            WireMessageType.DATA_PACKET == messageType ? "data packet (header)" : "wire message type " + messageType);
    }

    /** TX steps 1-4 and 7: the Scheduling Queues, a data packet, a repeated request, a completion. */
    void onTransmitError(final Throwable error)
    {
        onError(error, "TX");
    }

    void onWaitingCastError(final Throwable error)
    {
        onError(error, "a cast waiting for Scheduling Queue entries");
    }

    void onProcessCommandError(final Throwable error, final int command)
    {
        onError(error, "process command " + ProcessCommand.name(command));
    }

    void onDriverCommandError(final Throwable error, final int command)
    {
        onError(error, "driver command " + DriverCommand.name(command));
    }

    /**
     * @param cause what the loop was doing: the kind of packet or command that caused the error.
     */
    void onError(final Throwable error, final String cause)
    {
        counters.dutyCycleErrors.increment();
        final AtomicCounter byCause = counters.errorsCausedBy(cause);
        if (null != byCause)
        {
            byCause.increment();
        }
        final String kind = kind(error);
        if (kindsLogged.add(kind))
        {
            // Wall-clock ms, as a log line is read beside the daemon's and the programs' output.
            log.println(System.currentTimeMillis() + " NIC " + node + ": error in the duty cycle, caused by " + cause +
                " (dropped; the loop goes on; further errors of this kind are only counted): " + kind);
            error.printStackTrace(log);
        }
    }

    /** The exception class and where it was thrown. */
    static String kind(final Throwable error)
    {
        final StackTraceElement[] trace = error.getStackTrace();
        return error.getClass().getName() + " at " + (trace.length > 0 ? trace[0].toString() : "(no stack trace)");
    }
}
