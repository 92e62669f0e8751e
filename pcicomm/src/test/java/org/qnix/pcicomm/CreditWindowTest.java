package org.qnix.pcicomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * The receive-slot credits: the reserves kept for CREDIT and DISCONNECT, what a peer may return, and a
 * stepped exchange between two ends sending as fast as their credits allow, in random interleavings,
 * that never sends into a slot that is not posted and never stops with data left to send.
 */
class CreditWindowTest
{
    @Test
    void dataLeavesTwoCreditsCreditLeavesOneDisconnectTakesTheLast()
    {
        final CreditWindow w = new CreditWindow(4);
        assertTrue(w.canSend(CreditWindow.KEEP_FOR_DATA));
        w.sent();
        assertTrue(w.canSend(CreditWindow.KEEP_FOR_DATA));
        w.sent();
        assertFalse(w.canSend(CreditWindow.KEEP_FOR_DATA), "two left: for CREDIT and DISCONNECT");
        assertTrue(w.canSend(CreditWindow.KEEP_FOR_CREDIT));
        w.sent();
        assertFalse(w.canSend(CreditWindow.KEEP_FOR_CREDIT));
        assertTrue(w.canSend(CreditWindow.KEEP_FOR_DISCONNECT));
        w.sent();
        assertThrows(IllegalStateException.class, w::sent);
        assertFalse(w.returned(5), "more than the peer could owe");
        assertTrue(w.returned(4));
        assertEquals(4, w.credits());
    }

    @Test
    void aCountThatWouldWrapPastTheCheckIsRefused()
    {
        final CreditWindow w = new CreditWindow(32);
        w.sent();
        w.sent();
        assertFalse(w.returned(Integer.MAX_VALUE));
        assertFalse(w.returned(0x7FFF_FFF0));
        assertFalse(w.returned(3));
        assertEquals(30, w.credits(), "a refused count changes nothing");
        assertTrue(w.returned(2));
        assertEquals(32, w.credits());
    }

    @Test
    void owedCreditsAreReturnedOnceHalfTheSlotsAreOwed()
    {
        final CreditWindow w = new CreditWindow(32);
        for (int i = 0; i < 15; i++)
        {
            w.reposted();
        }
        assertFalse(w.shouldReturn());
        w.reposted();
        assertTrue(w.shouldReturn());
        assertEquals(16, w.takeOwed());
        assertEquals(0, w.owed());
    }

    @Test
    void twoEndsSendingAsFastAsCreditsAllowNeverOverrunAndNeverStall()
    {
        for (long seed = 0; seed < 50; seed++)
        {
            final Random random = new Random(seed);
            final End a = new End(8);
            final End b = new End(8);
            a.dataLeft = 1 + random.nextInt(500);
            b.dataLeft = random.nextInt(200);
            int idle = 0;
            while (a.dataLeft > 0 || b.dataLeft > 0 || !a.link.isEmpty() || !b.link.isEmpty())
            {
                final boolean moved = random.nextBoolean() ? a.step(b, random) || b.step(a, random) :
                    b.step(a, random) || a.step(b, random);
                idle = moved ? 0 : idle + 1;
                assertTrue(idle < 100, "stalled with seed " + seed + ": a " + a.dataLeft + " left, b " + b.dataLeft);
            }
        }
    }

    /** One end: its window, its receive slots really posted, and the messages in flight towards its peer. */
    private static final class End
    {
        final CreditWindow window;
        /** Messages in flight to the peer: the credits each returns (-1 for data). */
        final ArrayDeque<Integer> link = new ArrayDeque<>();
        /** Our receive slots posted with the NIC; taken ones wait for a repost, which may lag. */
        int posted;
        int taken;
        int dataLeft;

        End(final int slots)
        {
            window = new CreditWindow(slots);
            posted = slots;
        }

        /** Reposts a slot, takes a message of the peer, or sends one. @return true if something moved. */
        boolean step(final End peer, final Random random)
        {
            if (taken > 0 && random.nextInt(4) == 0)
            {
                taken--;
                posted++;
                window.reposted();
                return true;
            }
            if (!peer.link.isEmpty() && random.nextInt(3) > 0)
            {
                // A message of the peer arrives: it needs one of our slots posted (else VIA breaks the connection).
                final int returned = peer.link.pollFirst();
                assertTrue(posted > 0, "a message found no receive posted");
                posted--;
                taken++;
                if (returned > 0)
                {
                    assertTrue(window.returned(returned));
                }
                return true;
            }
            if (dataLeft > 0 && window.canSend(CreditWindow.KEEP_FOR_DATA))
            {
                window.sent();
                link.addLast(-1);
                dataLeft--;
                return true;
            }
            if (window.shouldReturn() && window.canSend(CreditWindow.KEEP_FOR_CREDIT))
            {
                window.sent();
                link.addLast(window.takeOwed());
                return true;
            }
            return taken > 0 && reposted();
        }

        private boolean reposted()
        {
            taken--;
            posted++;
            window.reposted();
            return true;
        }
    }
}
