package org.qnix.abi;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The JVM flags every QNIX JVM needs on Java 17 (Agrona and Chronicle Bytes reach into the JDK). They
 * are defined once, as {@code qnix.jvm.flags} in the parent POM, and filtered into this module's
 * resources; every launcher that starts a JVM (daemon, firmware, {@code qnix run}) takes them from
 * here.
 *
 * <pre>{@code
 * List<String> command = new ArrayList<>();
 * command.add(JvmFlags.javaExecutable());
 * command.addAll(JvmFlags.flags());
 * }</pre>
 */
public final class JvmFlags
{
    /**
     * The system property whose value is the absolute path of the cluster a JVM was started for; as a
     * {@link #clusterMarker} flag it is what tells that cluster's JVMs from any other process.
     */
    public static final String CLUSTER_PROPERTY = "qnix.cluster";
    /**
     * The flag after the {@link #clusterMarker} on the daemon's command line, and so within what the
     * JDK reads back: it tells a stale cluster's daemon from its firmware JVMs when they are stopped.
     */
    public static final String DAEMON_ROLE = "-Dqnix.role=daemon";

    private static final String RESOURCE = "jvm.flags";

    private JvmFlags()
    {
    }

    /** @return the flags, in order. */
    public static List<String> flags()
    {
        try (InputStream in = JvmFlags.class.getResourceAsStream(RESOURCE))
        {
            if (null == in)
            {
                throw new IllegalStateException("org/qnix/abi/" + RESOURCE + " is missing from the classpath");
            }
            final String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            if (text.contains("${"))
            {
                throw new IllegalStateException("org/qnix/abi/" + RESOURCE + " was not filtered by Maven: " + text);
            }
            return new ArrayList<>(Arrays.asList(text.split("\\s+")));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @return the system property that marks a JVM as belonging to a cluster, placed first on its
     * command line (the JDK may truncate long command lines read back from {@code /proc}), so that a
     * stale cluster's leftovers can be found and stopped.
     */
    public static String clusterMarker(final Path clusterDirectory)
    {
        return "-D" + CLUSTER_PROPERTY + "=" + clusterDirectory.toAbsolutePath();
    }

    /**
     * @return the flags that send a cluster JVM's crash report and replay data into the cluster
     * directory, where {@code cluster down} knows to remove them, instead of the working directory.
     */
    public static List<String> crashFiles(final ClusterDirectory dir)
    {
        return List.of("-XX:ErrorFile=" + dir.errorFile(), "-XX:ReplayDataFile=" + dir.replayFile());
    }

    /** @return the {@code java} of the running JVM, so that children run on the same runtime. */
    public static String javaExecutable()
    {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * @return the class path to give a child JVM: {@code qnix.classpath} if set (the {@code ./qnix}
     * script sets it), else this JVM's own.
     */
    public static String classPath()
    {
        final String explicit = System.getProperty("qnix.classpath");
        return null != explicit && !explicit.isBlank() ? explicit : System.getProperty("java.class.path");
    }
}
