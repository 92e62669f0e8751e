package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/**
 * README.md's VIPL client/server is the ViplHello example, word for word (without its package line):
 * the build compiles the file, {@link ViplExamplesTest} runs it, and this keeps the quoted text the
 * same program.
 */
class ReadmeViplExampleTest
{
    private static final String FENCE = "```java\n";

    @Test
    void theReadmeQuotesViplHelloAsItIs() throws Exception
    {
        final Path root = Path.of("").toAbsolutePath().getParent();
        final String readme = Files.readString(root.resolve("README.md"));
        final String source = Files.readString(root.resolve("tools/src/main/java/org/qnix/examples/ViplHello.java"));
        final String quoted = source.substring(source.indexOf('\n', source.indexOf("package ")) + 2);
        final int at = readme.indexOf("public final class ViplHello");
        assertTrue(at > 0, "README.md quotes ViplHello");
        final int start = readme.lastIndexOf(FENCE, at) + FENCE.length();
        final int end = readme.indexOf("```", at);
        assertEquals(quoted, readme.substring(start, end));
    }
}
