package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;

/**
 * A user process that allocates buffers until refused ends with a {@code QnixException}, not a JVM fatal
 * error (issue 17, item 7): each buffer is a memory mapping, and past the kernel's limit per process
 * the JVM could no longer map its own memory. The limit is lowered to 200 mappings
 * ({@code -Dqnix.maxMappings}) so that the loop takes a second, not the 60,000 buffers of the real one.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MappingLimitTest
{
    @TempDir
    Path workingDirectory;

    @Test
    void allocatingBuffersUntilRefusedEndsInAnException() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("m"), 1, 1, "threads");
        try
        {
            final List<String> worker = ChildCommand.java(BufferLoopWorker.class.getName(), "-Dqnix.maxMappings=200");
            worker.addAll(List.of(dir.name(), "7401"));
            final ChildCommand.Result result = ChildCommand.run(worker,
                Map.of("QNIX_DIR", dir.path().getParent().toString()), workingDirectory);

            assertEquals(0, result.exit(), result.output());
            assertTrue(result.output().contains("refused after 200 buffers: cannot map a buffer of 1 page(s) in 1 run(s): " +
                "it needs 1 memory mapping(s) and this process's buffers already hold 200 of the 200 allowed " +
                "(-Dqnix.maxMappings=200)"), result.output());
            assertTrue(result.output().contains("after freeing one: allocated again"), result.output());
            try (Stream<Path> files = Files.list(workingDirectory))
            {
                assertEquals(List.of(), files.toList(), "no JVM crash file");
            }
            TestClusters.await("the worker de-registered", () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }
}
