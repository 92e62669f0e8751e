package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.NicCoordinates;

/**
 * The PciCommCat example through {@code qnix run}: a file of odd length streamed from rank 1 (node 1-0)
 * to rank 0 (node 0-0) in buffers smaller than it, checked by SHA-256 and byte by byte in the copy rank 0
 * wrote; and its arguments refused before any JVM starts.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PciCommCatTest extends ViplClusterTest
{
    @AfterAll
    static void removeCidLocks() throws Exception
    {
        PciCommTransferTest.removeCidLocks();
    }

    @Test
    void aFileStreamedFromOneProcessToAnotherArrivesWhole() throws Exception
    {
        final Path file = Files.createTempFile("pcicommcat", ".in");
        final Path copy = Files.createTempFile("pcicommcat", ".out");
        try
        {
            final byte[] bytes = new byte[1_234_567];
            new Random(15).nextBytes(bytes);
            Files.write(file, bytes);
            final String output = TestClusters.run(new ProgramLauncher(dir, 2, "PciCommCat",
                List.of("--file", file.toString(), "--out", copy.toString(), "--buffer", "40000", "--buffers", "3")));
            assertTrue(output.contains("PCICOMMCAT sent bytes=1234567"), output);
            assertTrue(output.contains("PCICOMMCAT received bytes=1234567"), output);
            assertTrue(output.contains("matches=true"), output);
            assertArrayEquals(bytes, Files.readAllBytes(copy));
        }
        finally
        {
            Files.deleteIfExists(file);
            Files.deleteIfExists(copy);
        }
    }

    @Test
    void badArgumentsStartNoJvm()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () ->
            new ProgramLauncher(dir, 2, "PciCommCat", List.of("--file", "/no/such/file")).run(TestClusters.quiet()));
        assertTrue(ex.getMessage().contains("--file /no/such/file"), ex.getMessage());
    }

    /** A copy written over a NIC's SDRAM would cut it short under the firmware, which would die of it. */
    @Test
    void aClusterFileIsNoCopysDestination() throws Exception
    {
        final Path sdram = dir.nicSdram(NicCoordinates.parse("0-0"));
        final long sdramBytes = Files.size(sdram);
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () ->
            new ProgramLauncher(dir, 2, "PciCommCat", List.of("--file", "/etc/services", "--out", sdram.toString()))
                .run(TestClusters.quiet()));
        assertTrue(ex.getMessage().contains("--out " + sdram + ": is in "), ex.getMessage());
        assertEquals(sdramBytes, Files.size(sdram));
    }
}
