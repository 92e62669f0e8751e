package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.JvmFlags;

/**
 * A user's own program, compiled outside the project, run by {@code qnix run} from {@code -cp} and from
 * {@code $CLASSPATH} (issue 17, item 11); the launcher prints each rank's OS pid as it starts.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class UserProgramTest
{
    private static final Pattern STARTED = Pattern.compile("\\[qnix run\\] rank (\\d+) is OS pid (\\d+) on node \\S+");
    private static final Pattern REGISTERED = Pattern.compile("\\[(\\d+)\\] UserMain \\((\\d+),(\\d+)\\) pid (\\d+)");

    @TempDir
    Path temp;

    @Test
    void aUserProgramRunsFromTheClassPathOptionAndFromTheEnvironment() throws Exception
    {
        final Path classes = compile(Map.of(
            "UserMain", """
                public class UserMain
                {
                    public static void main(String[] args) throws Exception
                    {
                        try (org.qnix.lib.Qnix qnix = org.qnix.lib.Qnix.initFromEnvironment())
                        {
                            System.out.println("UserMain " + qnix.name() + " pid " + ProcessHandle.current().pid());
                        }
                    }
                }
                """,
            // Named like an example: given with -cp, the user's own class is the one run.
            "Hello", """
                public class Hello
                {
                    public static void main(String[] args)
                    {
                        System.out.println("the user's Hello");
                    }
                }
                """,
            "MyProgram", readmeProgram()));
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("u"), 2, 1, "threads");
        Process cli = null;
        try
        {
            final CliResult option = CliResult.run("run", "-n", "2", "--cluster", dir.name(), "--ai", "801",
                "-cp", classes.toString(), "--", "UserMain");
            assertEquals(0, option.exit, option.out + option.err);
            assertEachRankRegisteredWithThePidPrinted(option.out, 801);

            // README.md's "a program of your own", as quoted there: every member lists the whole group.
            final CliResult readme = CliResult.run("run", "-n", "2", "--cluster", dir.name(), "--ai", "803",
                "-cp", classes.toString(), "--", "MyProgram");
            assertEquals(0, readme.exit, readme.out + readme.err);
            for (int rank = 0; rank < 2; rank++)
            {
                final String prefix = "[" + rank + "] (803," + rank + ") on node ";
                final String line = readme.out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
                assertTrue(line.contains("(803,0)@0-0") && line.contains("(803,1)@1-0"), readme.out);
            }

            final CliResult shadow = CliResult.run("run", "-n", "1", "--cluster", dir.name(),
                "--classpath", classes.toString(), "--", "Hello");
            assertEquals(0, shadow.exit, shadow.out + shadow.err);
            assertTrue(shadow.out.contains("[0] the user's Hello"), shadow.out);

            // $CLASSPATH is read from the environment of the qnix command, so that one runs as its own JVM.
            final Path output = temp.resolve("cli.out");
            final List<String> command =
                ChildCommand.qnix("run", "-n", "2", "--cluster", dir.name(), "--ai", "802", "--", "UserMain");
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(output.toFile());
            builder.environment().put("CLASSPATH", classes.toString());
            cli = builder.start();
            assertTrue(cli.waitFor(2, TimeUnit.MINUTES), "qnix run ended");
            final String text = Files.readString(output);
            assertEquals(0, cli.exitValue(), text);
            assertEachRankRegisteredWithThePidPrinted(text, 802);
        }
        finally
        {
            if (null != cli)
            {
                cli.destroyForcibly();
                cli.waitFor(1, TimeUnit.MINUTES);
            }
            TestClusters.down(dir);
        }
    }

    /** @return the program README.md shows under "a program of your own", word for word. */
    private static String readmeProgram() throws Exception
    {
        final String readme = Files.readString(Path.of("").toAbsolutePath().getParent().resolve("README.md"));
        final int at = readme.indexOf("public class MyProgram");
        assertTrue(at > 0, "README.md shows MyProgram");
        final String fence = "```java\n";
        return readme.substring(readme.lastIndexOf(fence, at) + fence.length(), readme.indexOf("```", at));
    }

    /** Each rank registered under its name, and its pid is the one the launcher printed for it. */
    private static void assertEachRankRegisteredWithThePidPrinted(final String output, final int ai)
    {
        final Map<Integer, Long> started = new HashMap<>();
        final Map<Integer, Long> registered = new HashMap<>();
        for (final String line : output.lines().toList())
        {
            final Matcher start = STARTED.matcher(line);
            if (start.matches())
            {
                started.put(Integer.parseInt(start.group(1)), Long.parseLong(start.group(2)));
            }
            final Matcher user = REGISTERED.matcher(line);
            if (user.matches())
            {
                final int rank = Integer.parseInt(user.group(1));
                assertEquals(ai, Integer.parseInt(user.group(2)), line);
                assertEquals(rank, Integer.parseInt(user.group(3)), line);
                registered.put(rank, Long.parseLong(user.group(4)));
            }
        }
        assertEquals(Set.of(0, 1), registered.keySet(), output);
        assertEquals(registered, started, output);
    }

    /** Compiles default-package classes, by simple name and source, into a directory of their own. */
    private Path compile(final Map<String, String> sources) throws Exception
    {
        final Path src = Files.createDirectories(temp.resolve("src"));
        final Path classes = Files.createDirectories(temp.resolve("classes"));
        final List<String> args = new ArrayList<>(List.of("-d", classes.toString(), "-cp", JvmFlags.classPath()));
        for (final Map.Entry<String, String> source : sources.entrySet())
        {
            final Path file = src.resolve(source.getKey() + ".java");
            Files.writeString(file, source.getValue());
            args.add(file.toString());
        }
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final ByteArrayOutputStream errors = new ByteArrayOutputStream();
        final int exit = javac.run(null, null, errors, args.toArray(new String[0]));
        assertEquals(0, exit, errors.toString(StandardCharsets.UTF_8));
        return classes;
    }
}
