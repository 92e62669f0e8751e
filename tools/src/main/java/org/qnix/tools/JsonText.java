package org.qnix.tools;

/**
 * The few pieces of JSON the {@code --json} outputs need, written by hand: the tools module has no JSON
 * library, and what it prints is flat (numbers, plain strings, objects and arrays of them).
 */
final class JsonText
{
    private JsonText()
    {
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
