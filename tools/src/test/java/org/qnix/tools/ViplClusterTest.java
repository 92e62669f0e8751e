package org.qnix.tools;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.qnix.abi.ClusterDirectory;

/**
 * The cluster the VIPL's multi-JVM tests share within a test class: a 2x1 torus, each NIC's firmware a
 * thread of the daemon, brought up before the class's first test and down after its last. After each
 * test the NICs are clean: staging drained, no packet dropped, every VIA table entry free.
 */
abstract class ViplClusterTest
{
    static ClusterDirectory dir;

    @BeforeAll
    static void up() throws Exception
    {
        dir = TestClusters.up(TestClusters.uniqueName("v"), 2, 1, "threads");
    }

    @AfterEach
    void nicsClean() throws Exception
    {
        TestClusters.assertNicsClean(dir, 2);
    }

    @AfterAll
    static void down() throws Exception
    {
        if (null != dir)
        {
            TestClusters.down(dir);
            dir = null;
        }
    }
}
