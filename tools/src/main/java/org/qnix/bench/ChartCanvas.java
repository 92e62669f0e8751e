package org.qnix.bench;

/**
 * What a {@link LogLogChart} draws on: an SVG document or a PNG image. Coordinates are pixels from
 * the top left corner; colours are {@code #rrggbb}.
 */
interface ChartCanvas
{
    /** Where a text's x coordinate is: its start, its middle or its end. */
    enum Anchor
    {
        START,
        MIDDLE,
        END
    }

    void line(double x1, double y1, double x2, double y2, String colour, float width);

    void dot(double x, double y, String colour);

    /** A text whose baseline is at {@code y}. */
    void text(double x, double y, String text, int fontSize, Anchor anchor);

    /** A text turned a quarter anticlockwise, centred on (x, y): the y axis' label. */
    void verticalText(double x, double y, String text);

    /** @return the file's bytes. */
    byte[] finish();
}
