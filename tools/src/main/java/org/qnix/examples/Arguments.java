package org.qnix.examples;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import org.qnix.abi.NicCoordinates;

/**
 * Reads an example's options one at a time and refuses a bad one with a single line naming the option
 * and its value, so that {@code qnix run} can check an example's arguments before it starts K JVMs, and
 * an example started by hand fails the same way before it registers.
 *
 * <pre>{@code
 * Arguments a = new Arguments(List.of("--iterations", "500"));
 * while (a.hasNext())
 * {
 *     switch (a.next())
 *     {
 *         case "--iterations": iterations = a.intAtLeast(1); break;
 *         default: throw a.unknown("PingPong [--iterations N]");
 *     }
 * }
 * }</pre>
 */
final class Arguments
{
    private final List<String> args;
    private int next;
    private String option;

    Arguments(final List<String> args)
    {
        this.args = args;
    }

    /**
     * The main method's side: parses, or prints the one line and exits 2 before anything else happens.
     */
    static <T> T parseOrExit(final String program, final Function<List<String>, T> parse, final String[] args)
    {
        try
        {
            return parse.apply(List.of(args));
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println(program + ": " + ex.getMessage());
            System.exit(2);
            throw ex; // not reached
        }
    }

    boolean hasNext()
    {
        return next < args.size();
    }

    /** @return the next option name. */
    String next()
    {
        option = args.get(next++);
        return option;
    }

    /** @return the current option's value. */
    String value()
    {
        if (!hasNext())
        {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args.get(next++);
    }

    int intAtLeast(final int smallest)
    {
        final long value = longAtLeast(smallest);
        if (value > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException(option + " " + value + ": at most " + Integer.MAX_VALUE);
        }
        return (int)value;
    }

    long longAtLeast(final long smallest)
    {
        final String text = value();
        final long value;
        try
        {
            value = Long.parseLong(text.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(option + " " + text + ": not a whole number");
        }
        if (value < smallest)
        {
            throw new IllegalArgumentException(option + " " + text + ": at least " + smallest);
        }
        return value;
    }

    /** @return a comma-separated list of message sizes in bytes, each at least {@code smallest}. */
    int[] sizes(final int smallest)
    {
        final String text = value();
        final int[] sizes;
        try
        {
            sizes = Arrays.stream(text.split(",", -1)).mapToInt(s -> Integer.parseInt(s.trim())).toArray();
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(option + " " + text + ": a comma-separated list of byte counts, " +
                "e.g. 0,64,4096");
        }
        for (final int size : sizes)
        {
            if (size < smallest)
            {
                throw new IllegalArgumentException(option + " " + text + ": each size at least " + smallest);
            }
        }
        return sizes;
    }

    /** @return the current option's value, a node X-Y (as text: it names a node of a cluster not known yet). */
    String node()
    {
        final String text = value();
        try
        {
            NicCoordinates.parse(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(option + " " + text + ": expected a node X-Y, e.g. 0-0");
        }
        return text;
    }

    /** @return the current option's value, one of {@code choices}. */
    String oneOf(final String... choices)
    {
        final String text = value();
        for (final String choice : choices)
        {
            if (choice.equals(text))
            {
                return text;
            }
        }
        throw new IllegalArgumentException(option + " " + text + ": one of " + String.join(", ", choices));
    }

    /** @param usage the example's options, for the message. */
    IllegalArgumentException unknown(final String usage)
    {
        return new IllegalArgumentException(option + ": unknown option; usage: " + usage);
    }
}
