package org.qnix.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

import javax.imageio.ImageIO;

/** A {@link ChartCanvas} that paints a PNG image with Java 2D, headless. */
final class PngCanvas implements ChartCanvas
{
    private final BufferedImage image;
    private final Graphics2D g;

    PngCanvas(final int width, final int height)
    {
        // No display is needed, nor wanted: benchmarks run on servers.
        System.setProperty("java.awt.headless", "true");
        image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
    }

    public void line(final double x1, final double y1, final double x2, final double y2, final String colour,
        final float width)
    {
        g.setColor(Color.decode(colour));
        g.setStroke(new BasicStroke(width));
        g.draw(new Line2D.Double(x1, y1, x2, y2));
    }

    public void dot(final double x, final double y, final String colour)
    {
        g.setColor(Color.decode(colour));
        g.fill(new Ellipse2D.Double(x - 3, y - 3, 6, 6));
    }

    public void text(final double x, final double y, final String text, final int fontSize, final Anchor anchor)
    {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, fontSize));
        final int width = g.getFontMetrics().stringWidth(text);
        final double left = switch (anchor)
        {
            case START -> x;
            case MIDDLE -> x - width / 2.0;
            case END -> x - width;
        };
        g.drawString(text, (float)left, (float)y);
    }

    public void verticalText(final double x, final double y, final String text)
    {
        final AffineTransform saved = g.getTransform();
        g.translate(x, y);
        g.rotate(-Math.PI / 2);
        text(0, 0, text, 12, Anchor.MIDDLE);
        g.setTransform(saved);
    }

    public byte[] finish()
    {
        g.dispose();
        final ByteArrayOutputStream png = new ByteArrayOutputStream();
        try
        {
            ImageIO.write(image, "png", png);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return png.toByteArray();
    }
}
