package org.qnix.firmware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** A daemon's or firmware's log keeps every line up to its cap, then says so once and drops the rest. */
class CappedLogTest
{
    @Test
    void linesPastTheCapAreDroppedAfterOneNotice() throws IOException
    {
        final ByteArrayOutputStream file = new ByteArrayOutputStream();
        final CappedLog log = new CappedLog(file, 25);
        final PrintStream out = new PrintStream(log, true, StandardCharsets.UTF_8);

        out.println("line one.");   // 10 bytes
        out.println("line two.");   // 20
        assertFalse(log.isCapped());
        out.println("line three");  // would make 31: the cap
        out.println("line four.");
        out.flush();

        assertTrue(log.isCapped());
        final String written = file.toString(StandardCharsets.UTF_8);
        assertEquals("line one.\nline two.\n\n[log capped at 25 bytes: later lines are dropped]\n", written);
    }
}
