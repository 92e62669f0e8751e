package org.qnix.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A line chart with logarithmic axes as a self-contained SVG document, which any browser or image
 * viewer opens. Points at x = 0 are drawn at x = 1 (a log axis has no 0), labelled as 0.
 */
final class SvgChart
{
    private static final int WIDTH = 800;
    private static final int HEIGHT = 500;
    private static final int LEFT = 80;
    private static final int RIGHT = 170;
    private static final int TOP = 50;
    private static final int BOTTOM = 60;
    private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

    private SvgChart()
    {
    }

    static String render(final String title, final String xLabel, final String yLabel,
        final Map<String, List<double[]>> series)
    {
        double minX = Double.MAX_VALUE;
        double maxX = 1;
        double minY = Double.MAX_VALUE;
        double maxY = Double.MIN_VALUE;
        for (final List<double[]> points : series.values())
        {
            for (final double[] p : points)
            {
                minX = Math.min(minX, Math.max(1, p[0]));
                maxX = Math.max(maxX, Math.max(1, p[0]));
                minY = Math.min(minY, Math.max(1e-3, p[1]));
                maxY = Math.max(maxY, Math.max(1e-3, p[1]));
            }
        }
        final double x0 = Math.floor(Math.log10(Math.max(1, minX)));
        final double x1 = Math.max(x0 + 1, Math.ceil(Math.log10(maxX)));
        final double y0 = Math.floor(Math.log10(minY));
        final double y1 = Math.max(y0 + 1, Math.ceil(Math.log10(maxY)));
        final int plotW = WIDTH - LEFT - RIGHT;
        final int plotH = HEIGHT - TOP - BOTTOM;

        final StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " +
            "font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"25\" font-size=\"15\">%s</text>%n", LEFT, escape(title)));
        for (int d = (int)x0; d <= (int)x1; d++)
        {
            final double x = LEFT + (d - x0) / (x1 - x0) * plotW;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n",
                x, TOP, x, TOP + plotH));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                x, TOP + plotH + 18, 0 == d ? "1" : "1e" + d));
        }
        for (int d = (int)y0; d <= (int)y1; d++)
        {
            final double y = TOP + plotH - (d - y0) / (y1 - y0) * plotH;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n",
                LEFT, y, LEFT + plotW, y));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
                LEFT - 6, y + 4, label(d)));
        }
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" " +
            "stroke=\"black\"/>%n", LEFT, TOP, plotW, plotH));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
            LEFT + plotW / 2, HEIGHT - 15, escape(xLabel)));
        svg.append(String.format(Locale.ROOT, "<text transform=\"translate(18,%d) rotate(-90)\" " +
            "text-anchor=\"middle\">%s</text>%n", TOP + plotH / 2, escape(yLabel)));

        int s = 0;
        for (final Map.Entry<String, List<double[]>> entry : series.entrySet())
        {
            final String colour = COLOURS[s % COLOURS.length];
            final StringBuilder path = new StringBuilder();
            for (final double[] p : entry.getValue())
            {
                final double x = LEFT + (Math.log10(Math.max(1, p[0])) - x0) / (x1 - x0) * plotW;
                final double y = TOP + plotH - (Math.log10(Math.max(1e-3, p[1])) - y0) / (y1 - y0) * plotH;
                path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", x, y));
                svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n",
                    x, y, colour));
            }
            svg.append(String.format(Locale.ROOT, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                path, colour));
            final int ly = TOP + 10 + s * 20;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" " +
                "stroke-width=\"3\"/>%n", LEFT + plotW + 15, ly, LEFT + plotW + 40, ly, colour));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", LEFT + plotW + 46, ly + 4,
                escape(entry.getKey())));
            s++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String label(final int decade)
    {
        return decade >= 0 ? String.format(Locale.ROOT, "%.0f", Math.pow(10, decade)) :
            String.format(Locale.ROOT, "%s", Math.pow(10, decade));
    }

    private static String escape(final String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
