package org.qnix.pcicomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The control message's layout: its diagram against its constants, a round trip, and what is refused. */
class PciCommMessageTest
{
    /** The largest transfer the checks are given: any cluster's. */
    private static final int MAX = 1 << 20;
    private static final Pattern MARKER = Pattern.compile("^\\s*\\*\\s+\\+-+\\+ ([0-9]+)\\s*$");

    @Test
    void theDiagramMarksOnlyOffsetsTheConstantsHave() throws Exception
    {
        final List<Long> markers = new ArrayList<>();
        for (final String line : Files.readAllLines(Path.of("src/main/java/org/qnix/pcicomm/PciCommMessage.java")))
        {
            final Matcher m = MARKER.matcher(line);
            if (m.matches())
            {
                markers.add(Long.parseLong(m.group(1)));
            }
        }
        final Set<Long> constants = new HashSet<>(List.of(0L));
        for (final Field field : PciCommMessage.class.getFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && int.class == field.getType())
            {
                constants.add((long)field.getInt(null));
            }
        }
        assertEquals(List.of(0L, 4L, 8L, 12L, 16L), markers);
        assertTrue(constants.containsAll(markers), "markers " + markers + " constants " + constants);
        assertEquals(16, PciCommMessage.ENTRY_LENGTH);
        assertTrue(PciCommMessage.length(PciCommMessage.MAX_ENTRIES) <= PciCommMessage.MAX_LENGTH);
        assertTrue(PciCommMessage.length(PciCommMessage.MAX_ENTRIES + 1) > PciCommMessage.MAX_LENGTH);
    }

    @Test
    void anExportRoundTripsAndChecksWellFormed()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);
        final PciCommMessage m = new PciCommMessage().wrap(buffer, 64);
        m.type(PciCommMessage.EXPORT).credits(5).entryCount(3);
        for (int i = 0; i < 3; i++)
        {
            m.entry(i, 0x17_0000_0000L + i * 4096, 3145729 + i, 100 * (i + 1));
        }
        final PciCommMessage read = new PciCommMessage().wrap(buffer, 64);
        assertEquals(PciCommMessage.EXPORT, read.type());
        assertEquals(5, read.credits());
        assertEquals(3, read.entryCount());
        assertEquals(16 + 3 * 16, read.length());
        for (int i = 0; i < 3; i++)
        {
            assertEquals(0x17_0000_0000L + i * 4096, read.entryAddress(i));
            assertEquals(3145729 + i, read.entryHandle(i));
            assertEquals(100 * (i + 1), read.entryLength(i));
        }
        // Little-endian, like every structure of the project.
        assertEquals(5, buffer.getByte(64 + PciCommMessage.CREDITS_OFFSET));
        assertNull(PciCommMessage.check(buffer, 64, read.length(), MAX));
    }

    @Test
    void malformedMessagesAreNamed()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);
        final PciCommMessage m = new PciCommMessage().wrap(buffer, 0);
        m.type(PciCommMessage.CREDIT).credits(2).entryCount(0);
        assertNull(PciCommMessage.check(buffer, 0, PciCommMessage.HEADER_LENGTH, MAX));
        assertNotNull(PciCommMessage.check(buffer, 0, 8, MAX), "shorter than its header");
        assertNotNull(PciCommMessage.check(buffer, 0, 32, MAX), "a length the entry count does not explain");
        m.type(9);
        assertNotNull(PciCommMessage.check(buffer, 0, PciCommMessage.HEADER_LENGTH, MAX), "an unknown type");
        m.type(PciCommMessage.DISCONNECT).entryCount(1);
        assertNotNull(PciCommMessage.check(buffer, 0, PciCommMessage.length(1), MAX), "entries outside an export");
        m.type(PciCommMessage.EXPORT).entryCount(PciCommMessage.MAX_ENTRIES + 1);
        assertNotNull(PciCommMessage.check(buffer, 0, PciCommMessage.length(PciCommMessage.MAX_ENTRIES + 1), MAX));
        m.type(PciCommMessage.CREDIT).entryCount(0).credits(-1);
        assertFalse(null == PciCommMessage.check(buffer, 0, PciCommMessage.HEADER_LENGTH, MAX), "negative credits");
        m.type(PciCommMessage.EXPORT).credits(0).entryCount(2).entry(0, 0x1000, 7, MAX).entry(1, 0x2000, 7, 1);
        assertNull(PciCommMessage.check(buffer, 0, PciCommMessage.length(2), MAX), "entries of 1 and MAX bytes");
        for (final int bad : new int[] {0, -5, MAX + 1, Integer.MIN_VALUE})
        {
            m.entry(1, 0x2000, 7, bad);
            final String why = PciCommMessage.check(buffer, 0, PciCommMessage.length(2), MAX);
            assertNotNull(why, "an entry of " + bad + " bytes");
            assertTrue(why.contains("export entry of " + bad + " bytes"), why);
        }
    }
}
