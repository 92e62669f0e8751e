package org.qnix.daemon;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.qnix.abi.ClusterParameters;

/** The daemon's mappings against the kernel's limit (issue 17, item 7), on the default limit of 65,530. */
class DaemonMappingsTest
{
    @Test
    void a16x16TorusWithThreadsFitsAndA64x64OneIsRefusedNamingTheLimit()
    {
        final ClusterParameters small = params(16, 16);
        assertTrue(DaemonMappings.estimate(small, "threads") < 65_530, "16x16 with threads");
        assertTrue(DaemonMappings.refusal(small, "threads").isEmpty());

        final Optional<String> refusal = DaemonMappings.refusal(params(64, 64), "threads");
        // A kernel with a raised limit takes it.
        refusal.ifPresent(reason -> assertTrue(reason.startsWith("--torus 64x64 with --firmware threads needs about ") &&
            reason.contains("vm.max_map_count") && reason.contains("use --firmware processes"), reason));
    }

    private static ClusterParameters params(final int width, final int height)
    {
        return ClusterParameters.builder().torus(width, height).processes(4).sdramBytes(5L << 20).hostMemoryBytes(4L << 20).build();
    }
}
