package org.qnix.bench;

/**
 * The shared file of the relay baseline: three JVMs, A -> relay -> B and back, each hop a sequence in a
 * cache line of its writer's (the hop's length in the same line) and a message area of its own.
 *
 * <pre>
 *  0        A -> relay sequence (64 bits; -1 stops everyone), then the length (32 bits): written by A
 *  64       relay -> B sequence, then the length: written by the relay
 *  128      B -> relay sequence, then the length: written by B
 *  192      relay -> A sequence, then the length: written by the relay
 *  4096     four message areas of maxSize bytes, in the same order
 * </pre>
 */
final class RelayLayout
{
    static final int A_TO_RELAY = 0;
    static final int RELAY_TO_B = 1;
    static final int B_TO_RELAY = 2;
    static final int RELAY_TO_A = 3;
    static final int LINE = 64;
    static final int LENGTH_OFFSET = Long.BYTES;
    static final int AREAS_OFFSET = 4096;
    static final long STOP = -1;

    private RelayLayout()
    {
    }

    static int sequenceOffset(final int hop)
    {
        return hop * LINE;
    }

    static int lengthOffset(final int hop)
    {
        return sequenceOffset(hop) + LENGTH_OFFSET;
    }

    static int areaOffset(final int hop, final int maxSize)
    {
        return AREAS_OFFSET + hop * maxSize;
    }

    static long length(final int maxSize)
    {
        return AREAS_OFFSET + 4L * Math.max(1, maxSize);
    }
}
