package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.qnix.abi.NicCoordinates;

/**
 * The text table of {@code qnix stat}: every cell stays a column of its own, however large its count (a
 * receiver's "data bytes received" after a few streams ran into its neighbour's 0 as "027,103,626,900").
 */
class StatTableTest
{
    private static final String BYTES = "data bytes sent";
    private static final String PACKETS = "data packets sent";

    @Test
    void countsWiderThanTheUsualColumnStaySeparateCells()
    {
        final NicStatistics before = statistics(0, 0L, 0L);
        final NicStatistics after = statistics(2_000_000_000L, 27_103_626_900L, 0L);

        final List<String> once = print(after, null);
        assertEquals(List.of("node", "0-0", "node", "1-0", "counter"), tokens(once.get(1)));
        assertEquals(List.of("0", "27,103,626,900", "data", "bytes", "sent"), tokens(once.get(2)));
        assertEquals(List.of("0", "6,617,088", "data", "packets", "sent"), tokens(once.get(3)));

        final List<String> watched = print(after, before);
        assertEquals(List.of("0", "(+0/s)", "27,103,626,900", "(+13,551,813,450/s)", "data", "bytes", "sent"),
            tokens(watched.get(2)));
    }

    private static NicStatistics statistics(final long readAtNs, final long bytes, final long otherBytes)
    {
        return new NicStatistics("big", readAtNs, List.of(
            new NicStatistics.Node(NicCoordinates.ofIndex(0, 2), "running", 1, counters(otherBytes, 0)),
            new NicStatistics.Node(NicCoordinates.ofIndex(1, 2), "running", 1, counters(bytes, 0 == bytes ? 0 : 6_617_088L))));
    }

    private static Map<String, Long> counters(final long bytes, final long packets)
    {
        final Map<String, Long> counters = new LinkedHashMap<>();
        counters.put(BYTES, bytes);
        counters.put(PACKETS, packets);
        return counters;
    }

    private static List<String> print(final NicStatistics now, final NicStatistics previous)
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StatCommand.print(new PrintStream(bytes, true, StandardCharsets.UTF_8), now, previous, null);
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static List<String> tokens(final String line)
    {
        return Arrays.asList(line.trim().split("\\s+"));
    }
}
