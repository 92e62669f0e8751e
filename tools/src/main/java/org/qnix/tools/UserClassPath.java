package org.qnix.tools;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The class path a user's program brings to {@code qnix run}: the entries of {@code -cp}, or else of
 * {@code $CLASSPATH}, as {@code java} takes them (directories, jars, {@code dir/*} for every jar in a
 * directory). It goes after qnix's own class path, so the program always runs on the libqnix that
 * matches the cluster's files, whatever copy of it the user's jars carry.
 *
 * <pre>{@code
 * UserClassPath user = UserClassPath.of("build/classes", System.getenv("CLASSPATH"));
 * if (user.contains("UserMain")) { String cp = user.after(JvmFlags.classPath()); }
 * }</pre>
 */
final class UserClassPath
{
    private static final UserClassPath NONE = new UserClassPath("", List.of());

    private final String origin;
    private final List<String> entries;

    private UserClassPath(final String origin, final List<String> entries)
    {
        this.origin = origin;
        this.entries = entries;
    }

    /**
     * @param option      the {@code -cp} value, or null; when given, {@code $CLASSPATH} is ignored, as by
     *                    {@code java}.
     * @param environment the value of {@code $CLASSPATH}, or null.
     * @throws IllegalArgumentException if an entry of {@code -cp} does not exist. Entries of
     *                                  {@code $CLASSPATH} that do not exist are skipped, as by {@code java}:
     *                                  a stale variable must not stop every program.
     */
    static UserClassPath of(final String option, final String environment)
    {
        if (null != option)
        {
            return parse("-cp", option, true);
        }
        if (null != environment)
        {
            return parse("CLASSPATH", environment, false);
        }
        return NONE;
    }

    private static UserClassPath parse(final String origin, final String text, final boolean strict)
    {
        final List<String> entries = new ArrayList<>();
        for (final String entry : text.split(File.pathSeparator))
        {
            if (entry.isBlank())
            {
                continue;
            }
            final boolean wildcard = entry.equals("*") || entry.endsWith(File.separator + "*");
            final Path path = Path.of(wildcard ? entry.substring(0, entry.length() - 1) : entry).toAbsolutePath();
            if (wildcard ? !Files.isDirectory(path) : !Files.exists(path))
            {
                if (strict)
                {
                    throw new IllegalArgumentException(origin + " " + entry + ": no such " +
                        (wildcard ? "directory" : "directory or jar"));
                }
                continue;
            }
            // Absolute: the ranks must find the same files wherever they are started from.
            entries.add(wildcard ? path + File.separator + "*" : path.toString());
        }
        return new UserClassPath(origin, List.copyOf(entries));
    }

    boolean isEmpty()
    {
        return entries.isEmpty();
    }

    /** @return whether {@code className} is a class of the user's entries (qnix's own are not looked at). */
    boolean contains(final String className)
    {
        if (entries.isEmpty())
        {
            return false;
        }
        final List<URL> urls = new ArrayList<>();
        for (final String entry : entries)
        {
            if (entry.endsWith(File.separator + "*"))
            {
                jarsIn(Path.of(entry.substring(0, entry.length() - 2))).forEach(jar -> urls.add(url(jar)));
            }
            else
            {
                urls.add(url(Path.of(entry)));
            }
        }
        // No parent: only the user's entries are searched, and no class is loaded, only looked up.
        try (URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), null))
        {
            return null != loader.findResource(className.replace('.', '/') + ".class");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read " + origin, ex);
        }
    }

    /** @return {@code qnixClassPath} followed by the user's entries. */
    String after(final String qnixClassPath)
    {
        return entries.isEmpty() ? qnixClassPath :
            qnixClassPath + File.pathSeparator + String.join(File.pathSeparator, entries);
    }

    /** @return where the entries came from and what they are, for messages; empty if none. */
    String describe()
    {
        return entries.isEmpty() ? "" : origin + " " + String.join(File.pathSeparator, entries);
    }

    private static List<Path> jarsIn(final Path directory)
    {
        try (Stream<Path> files = Files.list(directory))
        {
            return files.filter(f -> f.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".jar")).sorted()
                .toList();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot list " + directory, ex);
        }
    }

    private static URL url(final Path path)
    {
        try
        {
            return path.toUri().toURL();
        }
        catch (final MalformedURLException ex)
        {
            throw new IllegalArgumentException("class path entry " + path + ": " + ex.getMessage());
        }
    }
}
