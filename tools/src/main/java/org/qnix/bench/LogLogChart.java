package org.qnix.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.qnix.bench.ChartCanvas.Anchor;

/**
 * A line chart with logarithmic axes, one line per series, written as a PNG image or an SVG document
 * depending on the file's name. Points at x = 0 are drawn at x = 1 (a log axis has no 0).
 *
 * <pre>{@code
 * LogLogChart.write(Path.of("latency.png"), "One-way latency", "bytes", "us",
 *     Map.of("qnix", List.of(new double[] {64, 310.0}, new double[] {4096, 420.0})));
 * }</pre>
 */
public final class LogLogChart
{
    private static final int WIDTH = 800;
    private static final int HEIGHT = 500;
    private static final int LEFT = 80;
    private static final int RIGHT = 170;
    private static final int TOP = 50;
    private static final int BOTTOM = 60;
    private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

    private LogLogChart()
    {
    }

    /** @throws IllegalArgumentException unless the file's name ends in .png or .svg. */
    public static void checkFileName(final Path file)
    {
        final String name = String.valueOf(file.getFileName()).toLowerCase(Locale.ROOT);
        if (!name.endsWith(".png") && !name.endsWith(".svg"))
        {
            throw new IllegalArgumentException("chart file " + file + ": its name must end in .png or .svg");
        }
    }

    /** @param series each series' points as {x, y}, drawn in the map's order. */
    public static void write(final Path file, final String title, final String xLabel, final String yLabel,
        final Map<String, List<double[]>> series) throws IOException
    {
        checkFileName(file);
        final ChartCanvas canvas = String.valueOf(file.getFileName()).toLowerCase(Locale.ROOT).endsWith(".png") ?
            new PngCanvas(WIDTH, HEIGHT) : new SvgCanvas(WIDTH, HEIGHT);
        draw(canvas, title, xLabel, yLabel, series);
        Files.write(file, canvas.finish());
    }

    static void draw(final ChartCanvas canvas, final String title, final String xLabel, final String yLabel,
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
        final double y0 = Math.floor(Math.log10(Math.min(minY, maxY)));
        final double y1 = Math.max(y0 + 1, Math.ceil(Math.log10(maxY)));
        final int plotW = WIDTH - LEFT - RIGHT;
        final int plotH = HEIGHT - TOP - BOTTOM;

        canvas.text(LEFT, 25, title, 15, Anchor.START);
        for (int d = (int)x0; d <= (int)x1; d++)
        {
            final double x = LEFT + (d - x0) / (x1 - x0) * plotW;
            canvas.line(x, TOP, x, TOP + plotH, "#dddddd", 1);
            canvas.text(x, TOP + plotH + 18, 0 == d ? "1" : "1e" + d, 12, Anchor.MIDDLE);
        }
        for (int d = (int)y0; d <= (int)y1; d++)
        {
            final double y = TOP + plotH - (d - y0) / (y1 - y0) * plotH;
            canvas.line(LEFT, y, LEFT + plotW, y, "#dddddd", 1);
            canvas.text(LEFT - 6, y + 4, label(d), 12, Anchor.END);
        }
        canvas.line(LEFT, TOP, LEFT + plotW, TOP, "#000000", 1);
        canvas.line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, "#000000", 1);
        canvas.line(LEFT, TOP, LEFT, TOP + plotH, "#000000", 1);
        canvas.line(LEFT + plotW, TOP, LEFT + plotW, TOP + plotH, "#000000", 1);
        canvas.text(LEFT + plotW / 2.0, HEIGHT - 15, xLabel, 12, Anchor.MIDDLE);
        canvas.verticalText(18, TOP + plotH / 2.0, yLabel);

        int s = 0;
        for (final Map.Entry<String, List<double[]>> entry : series.entrySet())
        {
            final String colour = COLOURS[s % COLOURS.length];
            double lastX = Double.NaN;
            double lastY = Double.NaN;
            for (final double[] p : entry.getValue())
            {
                final double x = LEFT + (Math.log10(Math.max(1, p[0])) - x0) / (x1 - x0) * plotW;
                final double y = TOP + plotH - (Math.log10(Math.max(1e-3, p[1])) - y0) / (y1 - y0) * plotH;
                if (!Double.isNaN(lastX))
                {
                    canvas.line(lastX, lastY, x, y, colour, 2);
                }
                canvas.dot(x, y, colour);
                lastX = x;
                lastY = y;
            }
            final int ly = TOP + 10 + s * 20;
            canvas.line(LEFT + plotW + 15, ly, LEFT + plotW + 40, ly, colour, 3);
            canvas.text(LEFT + plotW + 46, ly + 4, entry.getKey(), 12, Anchor.START);
            s++;
        }
    }

    private static String label(final int decade)
    {
        return decade >= 0 ? String.format(Locale.ROOT, "%.0f", Math.pow(10, decade)) :
            String.format(Locale.ROOT, "%s", Math.pow(10, decade));
    }
}
