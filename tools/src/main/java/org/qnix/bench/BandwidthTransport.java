package org.qnix.bench;

/**
 * One way of streaming messages to a peer JVM, measured by {@link BandwidthRun}: QNIX or a baseline.
 * The peer receives every message and acknowledges the last one of a stream.
 *
 * <pre>{@code
 * try (BandwidthTransport tcp = TcpStreamTransport.start(1 << 20))
 * {
 *     tcp.stream(65536, 1000, 8);
 * }
 * }</pre>
 */
public interface BandwidthTransport extends Transport
{
    /**
     * Sends {@code messages} messages of {@code size} bytes, with at most {@code window} outstanding
     * where the API has a window, and returns when the peer has received the last one.
     */
    void stream(int size, int messages, int window);
}
