package org.qnix.firmware;

import java.util.HashMap;
import java.util.Map;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.qnix.abi.CountersLayout;

/**
 * The Agrona counters of one NIC, in {@code node-X-Y/counters}: what {@code qnix stat} shows and what
 * tests read to see what the firmware did.
 */
public final class NicCounters
{
    public static final String DRIVER_COMMANDS = "driver commands";
    public static final String DRIVER_COMMANDS_REJECTED = "driver commands rejected";
    public static final String SYSTEM_MESSAGES_SENT = "system messages sent";
    public static final String SYSTEM_MESSAGES_RECEIVED = "system messages received";
    public static final String SYSTEM_MESSAGES_REJECTED = "system messages rejected";
    public static final String PACKETS_SENT = "packets sent";
    public static final String PACKETS_RECEIVED = "packets received";
    public static final String PACKETS_DROPPED = "packets dropped";
    public static final String PACKETS_DEFERRED = "packets deferred (destination FIFO full)";
    public static final String REGISTRATIONS = "registrations completed";
    public static final String REGISTRATIONS_ABORTED = "registrations aborted";
    public static final String DELETIONS = "processes deleted";
    public static final String HEARTBEATS = "heartbeats";
    public static final String COMMANDS = "process commands";
    public static final String COMMANDS_REJECTED = "process commands rejected";
    public static final String DATA_PACKETS_SENT = "data packets sent";
    public static final String DATA_PACKETS_RECEIVED = "data packets received";
    public static final String DATA_BYTES_SENT = "data bytes sent";
    public static final String DATA_BYTES_RECEIVED = "data bytes received";
    public static final String SENDS_COMPLETED = "sends completed";
    public static final String RECEIVES_COMPLETED = "receives completed";
    public static final String PERMISSION_REQUESTS_SENT = "permission requests sent";
    /** Of those, the ones a send without an answer sent again: a send waiting for its receiver. */
    public static final String PERMISSION_RETRIES = "permission requests sent again (no answer yet)";
    public static final String PERMISSION_REQUESTS_RECEIVED = "permission requests received";
    public static final String REQUESTS_DEFERRED_STAGING_FULL = "permission requests deferred (staging memory full)";
    public static final String REQUESTS_DEFERRED_RECEIVER_QUOTA =
        "permission requests deferred (the receiver's staging quota is full)";
    public static final String REQUESTS_DEFERRED_TRANSFER_TABLE = "permission requests deferred (transfer table full)";
    public static final String PERMISSION_DUPLICATES = "duplicate permission requests and replies";
    public static final String MESSAGES_STAGED = "messages staged (arrived before their receive)";
    public static final String STAGING_BYTES_IN_USE = "staging bytes in use";
    public static final String ERROR_COMPLETIONS = "operations completed with an error doorbell";
    public static final String DOORBELL_WAKEUPS = "doorbell futex wake-ups";
    public static final String HOST_BYTES_READ = "host memory bytes DMA-read for sending";
    public static final String CAST_COPIES = "broadcast/multicast copies into managed memory";
    public static final String CASTS_COMPLETED = "broadcasts and multicasts completed";
    public static final String GROUP_JOINS_COMPLETED = "Join_Group operations completed";
    public static final String BARRIERS_COMPLETED = "barriers completed (local processes)";
    public static final String SENDS_ABORTED =
        "sends ended part-way (a sender page no longer locked at DMA time)";
    public static final String TRANSFERS_ABORTED = "transfers ended by their sender's NIC (Transfer_Abort)";
    public static final String EAGER_SHORTS_SENT = "eager short messages sent (Eager_Short)";
    public static final String EAGER_SHORTS_DELIVERED = "eager short messages delivered into a posted receive";
    public static final String EAGER_SHORTS_STAGED = "eager short messages staged";
    public static final String EAGER_SHORTS_FELL_BACK =
        "eager short messages sent back to the permission protocol (no receive, no staging room, or an earlier one did)";
    public static final String REQUESTS_DEFERRED_EAGER_ORDER =
        "permission requests deferred (an older short message of the pair fell back and waits)";
    /** Exceptions thrown inside the duty cycle (see {@link DutyCycleErrorHandler}); appended last. */
    public static final String DUTY_CYCLE_ERRORS = "errors in the duty cycle (packet or command dropped)";
    /** Parks of the thread running this NIC's control program after its hot window (HotWindowIdleStrategy). */
    public static final String IDLE_PARKS = "idle parks (the control program slept)";
    public static final String SLEEPS = "sleeps (idle: the control program waited to be woken)";
    /** Trace records the NIC could not put into its trace ring (the tracer fell behind); appended last. */
    public static final String TRACE_RECORDS_DROPPED = "trace records dropped (trace ring full)";
    public static final String VIA_DESCRIPTORS_COMPLETED = "VIA descriptors completed";
    public static final String VIA_PACKETS_STALE =
        "VIA packets dropped (not for a connected VI on their connection)";
    public static final String VIA_MESSAGES_DROPPED = "VIA messages dropped (Unreliable, no receive posted)";
    public static final String VIA_COMPLETIONS_LOST =
        "VIA completions lost (the descriptor's memory no longer registered and locked)";
    public static final String VIA_ASYNC_EVENTS = "VIA asynchronous events";
    /**
     * Prefix of the counters made on demand, one per cause of duty-cycle errors, e.g.
     * {@code "duty cycle errors caused by: system message Permission_Request"}.
     */
    public static final String ERRORS_CAUSED_BY = "duty cycle errors caused by: ";

    final AtomicCounter driverCommands;
    final AtomicCounter driverCommandsRejected;
    final AtomicCounter systemMessagesSent;
    final AtomicCounter systemMessagesReceived;
    final AtomicCounter systemMessagesRejected;
    final AtomicCounter packetsSent;
    final AtomicCounter packetsReceived;
    final AtomicCounter packetsDropped;
    final AtomicCounter packetsDeferred;
    final AtomicCounter registrations;
    final AtomicCounter registrationsAborted;
    final AtomicCounter deletions;
    final AtomicCounter heartbeats;
    final AtomicCounter commands;
    final AtomicCounter commandsRejected;
    final AtomicCounter dataPacketsSent;
    final AtomicCounter dataPacketsReceived;
    final AtomicCounter dataBytesSent;
    final AtomicCounter dataBytesReceived;
    final AtomicCounter sendsCompleted;
    final AtomicCounter receivesCompleted;
    final AtomicCounter permissionRequestsSent;
    final AtomicCounter permissionRetries;
    final AtomicCounter permissionRequestsReceived;
    final AtomicCounter requestsDeferredStagingFull;
    final AtomicCounter requestsDeferredReceiverQuota;
    final AtomicCounter requestsDeferredTransferTable;
    final AtomicCounter permissionDuplicates;
    final AtomicCounter messagesStaged;
    final AtomicCounter stagingBytesInUse;
    final AtomicCounter errorCompletions;
    final AtomicCounter doorbellWakeups;
    final AtomicCounter hostBytesRead;
    final AtomicCounter castCopies;
    final AtomicCounter castsCompleted;
    final AtomicCounter groupJoinsCompleted;
    final AtomicCounter barriersCompleted;
    final AtomicCounter sendsAborted;
    final AtomicCounter transfersAborted;
    final AtomicCounter eagerShortsSent;
    final AtomicCounter eagerShortsDelivered;
    final AtomicCounter eagerShortsStaged;
    final AtomicCounter eagerShortsFellBack;
    final AtomicCounter requestsDeferredEagerOrder;
    final AtomicCounter dutyCycleErrors;
    final AtomicCounter traceRecordsDropped;
    final AtomicCounter idleParks;
    final AtomicCounter sleeps;
    final AtomicCounter viaDescriptorsCompleted;
    final AtomicCounter viaPacketsStale;
    final AtomicCounter viaMessagesDropped;
    final AtomicCounter viaCompletionsLost;
    final AtomicCounter viaAsyncEvents;
    private final CountersManager manager;
    private final Map<String, AtomicCounter> errorsByCause = new HashMap<>();

    public NicCounters(final CountersManager manager)
    {
        driverCommands = counter(manager, DRIVER_COMMANDS);
        driverCommandsRejected = counter(manager, DRIVER_COMMANDS_REJECTED);
        systemMessagesSent = counter(manager, SYSTEM_MESSAGES_SENT);
        systemMessagesReceived = counter(manager, SYSTEM_MESSAGES_RECEIVED);
        systemMessagesRejected = counter(manager, SYSTEM_MESSAGES_REJECTED);
        packetsSent = counter(manager, PACKETS_SENT);
        packetsReceived = counter(manager, PACKETS_RECEIVED);
        packetsDropped = counter(manager, PACKETS_DROPPED);
        packetsDeferred = counter(manager, PACKETS_DEFERRED);
        registrations = counter(manager, REGISTRATIONS);
        registrationsAborted = counter(manager, REGISTRATIONS_ABORTED);
        deletions = counter(manager, DELETIONS);
        heartbeats = counter(manager, HEARTBEATS);
        commands = counter(manager, COMMANDS);
        commandsRejected = counter(manager, COMMANDS_REJECTED);
        dataPacketsSent = counter(manager, DATA_PACKETS_SENT);
        dataPacketsReceived = counter(manager, DATA_PACKETS_RECEIVED);
        dataBytesSent = counter(manager, DATA_BYTES_SENT);
        dataBytesReceived = counter(manager, DATA_BYTES_RECEIVED);
        sendsCompleted = counter(manager, SENDS_COMPLETED);
        receivesCompleted = counter(manager, RECEIVES_COMPLETED);
        permissionRequestsSent = counter(manager, PERMISSION_REQUESTS_SENT);
        permissionRetries = counter(manager, PERMISSION_RETRIES);
        permissionRequestsReceived = counter(manager, PERMISSION_REQUESTS_RECEIVED);
        requestsDeferredStagingFull = counter(manager, REQUESTS_DEFERRED_STAGING_FULL);
        requestsDeferredReceiverQuota = counter(manager, REQUESTS_DEFERRED_RECEIVER_QUOTA);
        requestsDeferredTransferTable = counter(manager, REQUESTS_DEFERRED_TRANSFER_TABLE);
        permissionDuplicates = counter(manager, PERMISSION_DUPLICATES);
        messagesStaged = counter(manager, MESSAGES_STAGED);
        stagingBytesInUse = counter(manager, STAGING_BYTES_IN_USE);
        errorCompletions = counter(manager, ERROR_COMPLETIONS);
        doorbellWakeups = counter(manager, DOORBELL_WAKEUPS);
        hostBytesRead = counter(manager, HOST_BYTES_READ);
        castCopies = counter(manager, CAST_COPIES);
        castsCompleted = counter(manager, CASTS_COMPLETED);
        groupJoinsCompleted = counter(manager, GROUP_JOINS_COMPLETED);
        barriersCompleted = counter(manager, BARRIERS_COMPLETED);
        sendsAborted = counter(manager, SENDS_ABORTED);
        transfersAborted = counter(manager, TRANSFERS_ABORTED);
        eagerShortsSent = counter(manager, EAGER_SHORTS_SENT);
        eagerShortsDelivered = counter(manager, EAGER_SHORTS_DELIVERED);
        eagerShortsStaged = counter(manager, EAGER_SHORTS_STAGED);
        eagerShortsFellBack = counter(manager, EAGER_SHORTS_FELL_BACK);
        requestsDeferredEagerOrder = counter(manager, REQUESTS_DEFERRED_EAGER_ORDER);
        dutyCycleErrors = counter(manager, DUTY_CYCLE_ERRORS);
        traceRecordsDropped = counter(manager, TRACE_RECORDS_DROPPED);
        idleParks = counter(manager, IDLE_PARKS);
        sleeps = counter(manager, SLEEPS);
        viaDescriptorsCompleted = counter(manager, VIA_DESCRIPTORS_COMPLETED);
        viaPacketsStale = counter(manager, VIA_PACKETS_STALE);
        viaMessagesDropped = counter(manager, VIA_MESSAGES_DROPPED);
        viaCompletionsLost = counter(manager, VIA_COMPLETIONS_LOST);
        viaAsyncEvents = counter(manager, VIA_ASYNC_EVENTS);
        this.manager = manager;
    }

    /**
     * The counter of duty-cycle errors with this cause, made the first time (error path only).
     *
     * @return null when the counters file has no room left: the error is then counted in
     * {@link #DUTY_CYCLE_ERRORS} alone.
     */
    AtomicCounter errorsCausedBy(final String cause)
    {
        AtomicCounter counter = errorsByCause.get(cause);
        if (null == counter && manager.available() > 0)
        {
            counter = counter(manager, ERRORS_CAUSED_BY + cause);
            errorsByCause.put(cause, counter);
        }
        return counter;
    }

    private static AtomicCounter counter(final CountersManager manager, final String label)
    {
        return manager.newCounter(label, CountersLayout.NIC_COUNTER_TYPE_ID);
    }
}
