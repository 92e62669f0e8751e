package org.qnix.bench;

/** What every benchmark transport is: a named link to a peer JVM (or none) that takes messages up to a size. */
public interface Transport extends AutoCloseable
{
    /** @return the name printed in the tables, e.g. {@code tcp}. */
    String name();

    /** @return the largest message it takes. */
    int maxSize();

    /** Stops the peer JVM and frees every file and socket. */
    void close();
}
