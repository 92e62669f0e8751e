package org.qnix.bench;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** A {@link ChartCanvas} that writes a self-contained SVG document, which any browser opens. */
final class SvgCanvas implements ChartCanvas
{
    private final StringBuilder svg = new StringBuilder();

    SvgCanvas(final int width, final int height)
    {
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " +
            "font-family=\"sans-serif\" font-size=\"12\">%n", width, height));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
    }

    public void line(final double x1, final double y1, final double x2, final double y2, final String colour,
        final float width)
    {
        svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" " +
            "stroke-width=\"%.1f\"/>%n", x1, y1, x2, y2, colour, width));
    }

    public void dot(final double x, final double y, final String colour)
    {
        svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y, colour));
    }

    public void text(final double x, final double y, final String text, final int fontSize, final Anchor anchor)
    {
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\">%s" +
            "</text>%n", x, y, fontSize, switch (anchor)
            {
                case START -> "start";
                case MIDDLE -> "middle";
                case END -> "end";
            }, escape(text)));
    }

    public void verticalText(final double x, final double y, final String text)
    {
        svg.append(String.format(Locale.ROOT, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" " +
            "text-anchor=\"middle\">%s</text>%n", x, y, escape(text)));
    }

    public byte[] finish()
    {
        svg.append("</svg>\n");
        return svg.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String escape(final String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
