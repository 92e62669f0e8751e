package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ViplResult;
import org.qnix.lib.QnixDriverException;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplException;

/**
 * {@code Qnix.init} whose node's files go after the driver registered it (the cluster taken down in
 * between, as `cluster down` does it under a program starting up): a {@link QnixDriverException} that
 * says so, not the mapping's UncheckedIOException, and the registration is undone rather than held
 * until the process exits. {@code VipOpenNic} likewise ends in a ViplException.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class InitWithFilesGoneTest
{
    @Test
    void aNodeFileGoneAfterTheRegistrationIsADriverExceptionAndTheRegistrationIsUndone() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("w"), 2, 1, "threads");
        try
        {
            // The daemon and the firmware keep their mappings of the unlinked file; a new process cannot map it.
            Files.delete(dir.nicWake(new NicCoordinates(0, 0)));
            final QnixDriverException gone =
                assertThrows(QnixDriverException.class, () -> TestClusters.registerAlone(dir, 901, "0-0"));
            assertTrue(gone.getMessage().contains("registered with the driver of node 0-0, then cannot map") &&
                gone.getMessage().contains("still up?"), gone.getMessage());
            TestClusters.await("the registration undone", () -> ClusterStatus.read(dir).registered().isEmpty());
            assertEquals(0, ClusterStatus.read(dir).registered().size());

            // VipOpenNic the same: the VIPL's own exception.
            final ViplException viaGone = assertThrows(ViplException.class, () -> Vipl.openNic("0-0", dir.name()));
            assertEquals(ViplResult.ERROR_RESOURCE, viaGone.result(), viaGone.getMessage());
            assertTrue(viaGone.getMessage().contains("still up?"), viaGone.getMessage());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
