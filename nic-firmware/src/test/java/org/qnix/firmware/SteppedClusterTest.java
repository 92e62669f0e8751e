package org.qnix.firmware;

import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every stepped test of a {@link SteppedCluster} shares: a directory for its node images, the
 * cluster, closed after each test however it ended, and its counters by label.
 */
abstract class SteppedClusterTest
{
    @TempDir
    Path base;

    SteppedCluster cluster;

    @AfterEach
    void closeCluster()
    {
        if (null != cluster)
        {
            cluster.close();
        }
    }

    long counter(final int node, final String label)
    {
        return cluster.counter(node, label);
    }
}
