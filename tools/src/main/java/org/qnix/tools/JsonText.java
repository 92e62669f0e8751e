package org.qnix.tools;

/**
 * The JSON the {@code --json} outputs need, written by hand: the tools module has no JSON library, and
 * what it prints is plain (numbers, booleans, strings, and objects and arrays of them).
 */
final class JsonText
{
    private JsonText()
    {
    }

    /** @return a tree of maps (string keys), lists, strings, numbers and booleans as one line of JSON. */
    static String write(final Object value)
    {
        final StringBuilder out = new StringBuilder();
        write(out, value);
        return out.toString();
    }

    private static void write(final StringBuilder out, final Object value)
    {
        if (value instanceof java.util.Map<?, ?> map)
        {
            out.append('{');
            boolean first = true;
            for (final java.util.Map.Entry<?, ?> entry : map.entrySet())
            {
                out.append(first ? "" : ",").append(quote(String.valueOf(entry.getKey()))).append(':');
                write(out, entry.getValue());
                first = false;
            }
            out.append('}');
        }
        else if (value instanceof java.util.List<?> list)
        {
            out.append('[');
            for (int i = 0; i < list.size(); i++)
            {
                out.append(i > 0 ? "," : "");
                write(out, list.get(i));
            }
            out.append(']');
        }
        else if (value instanceof Number || value instanceof Boolean)
        {
            out.append(value);
        }
        else
        {
            out.append(null == value ? "null" : quote(value.toString()));
        }
    }

    /** @return {@code text} as a JSON string literal, quotes and control characters escaped. */
    static String quote(final String text)
    {
        final StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        out.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
