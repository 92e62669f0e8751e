package org.qnix.bench;

/**
 * One way of moving a message to a peer JVM and back, measured by {@link LatencyRun}: QNIX, or one of
 * the baselines a Java user could use instead (the shared-memory floor, TCP over loopback, Aeron IPC).
 * The peer echoes every message; one round trip is one message each way.
 *
 * <pre>{@code
 * try (LatencyTransport floor = FloorTransport.start(65536))
 * {
 *     floor.roundTrip(64);
 * }
 * }</pre>
 */
public interface LatencyTransport extends Transport
{
    /** Sends {@code size} bytes to the peer and returns when the peer's echo has arrived. */
    void roundTrip(int size);
}
