package org.qnix.bench;

/**
 * The shared file of the floor baseline: two JVMs ping-ponging through one mapping, one cache line
 * per direction (the ping's length travels in its sequence's line), then the two message areas.
 *
 * <pre>
 *  0      Ping sequence (64 bits; -1 tells the peer to stop), written by the pinger
 *  8      Message length (32 bits), written by the pinger before its sequence, same cache line
 *  64     Pong sequence (64 bits), written by the peer, alone in its cache line
 *  4096   Ping area: maxSize bytes, pinger to peer
 *  4096 + maxSize   Pong area: maxSize bytes, peer to pinger
 * </pre>
 */
final class FloorLayout
{
    static final int PING_SEQUENCE_OFFSET = 0;
    static final int LENGTH_OFFSET = PING_SEQUENCE_OFFSET + Long.BYTES;
    static final int PONG_SEQUENCE_OFFSET = PING_SEQUENCE_OFFSET + 64;
    static final int PING_AREA_OFFSET = 4096;
    static final long STOP = -1;

    private FloorLayout()
    {
    }

    static int pongAreaOffset(final int maxSize)
    {
        return PING_AREA_OFFSET + maxSize;
    }

    static long length(final int maxSize)
    {
        return pongAreaOffset(maxSize) + (long)maxSize;
    }
}
