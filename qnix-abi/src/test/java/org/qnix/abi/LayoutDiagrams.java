package org.qnix.abi;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a layout class's ASCII diagram says against what its constants say: the byte offsets the diagram
 * marks at the right of a border line ({@code +---+ 64}) and the values of its static int constants.
 */
final class LayoutDiagrams
{
    private static final Pattern MARKER = Pattern.compile("^\\s*\\*\\s+\\+-+\\+ ([0-9]+)\\s*$");

    private LayoutDiagrams()
    {
    }

    /** @return the offsets the class's diagram marks, read from its source. */
    static List<Long> markers(final Class<?> layout) throws IOException
    {
        final Path source = Path.of("src/main/java", layout.getName().replace('.', '/') + ".java");
        final List<Long> markers = new ArrayList<>();
        for (final String text : Files.readAllLines(source))
        {
            final Matcher m = MARKER.matcher(text);
            if (m.matches())
            {
                markers.add(Long.parseLong(m.group(1)));
            }
        }
        return markers;
    }

    /** @return 0 and the values of the class's public static int constants. */
    static Set<Long> constants(final Class<?> layout) throws IllegalAccessException
    {
        final Set<Long> constants = new HashSet<>(List.of(0L));
        for (final Field field : layout.getFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && int.class == field.getType())
            {
                constants.add((long)field.getInt(null));
            }
        }
        return constants;
    }
}
