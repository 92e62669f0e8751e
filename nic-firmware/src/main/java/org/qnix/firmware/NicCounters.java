package org.qnix.firmware;

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
    }

    private static AtomicCounter counter(final CountersManager manager, final String label)
    {
        return manager.newCounter(label, CountersLayout.NIC_COUNTER_TYPE_ID);
    }
}
