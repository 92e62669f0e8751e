package org.qnix.pcicomm;

/**
 * Flow control of the connection's receive slots. Every message an end sends (a control message, or an
 * RDMA write with immediate data) consumes the head receive descriptor of the peer's VI, and at the
 * reliable levels a message that finds none breaks the connection (issue 14): so an end sends only
 * into slots the peer has told it are posted. Each end starts with {@link #slots} credits (both post
 * that many receives before connecting); a slot the peer reposts comes back as a credit in its next
 * control message, or in a {@link PciCommMessage#CREDIT} once {@link #threshold} are owed.
 *
 * <p>The last credits are kept: one for this end's single {@link PciCommMessage#DISCONNECT}, so that a
 * close never waits for credits, and one more for {@link PciCommMessage#CREDIT}, so that an end can
 * always give the peer back its credits and two ends never wait for each other's (the rule of
 * credit-based VIA transports; seed 004's MPI over VIA). Data and exports use the rest.
 *
 * <pre>{@code
 * CreditWindow w = new CreditWindow(32);
 * if (w.canSend(CreditWindow.KEEP_FOR_DATA)) { message.credits(w.takeOwed()); post(message); w.sent(); }
 * w.reposted();                  // a receive slot of ours completed and went back to the NIC
 * w.returned(message.credits()); // the peer's message gave some back
 * }</pre>
 */
final class CreditWindow
{
    /** Data writes and exports leave the CREDIT and DISCONNECT reserves. */
    static final int KEEP_FOR_DATA = 2;
    /** A CREDIT leaves the DISCONNECT reserve. */
    static final int KEEP_FOR_CREDIT = 1;
    /** The DISCONNECT may take the last credit: nothing follows it. */
    static final int KEEP_FOR_DISCONNECT = 0;

    private final int slots;
    private final int threshold;
    private int credits;
    private int owed;

    CreditWindow(final int slots)
    {
        if (slots <= KEEP_FOR_DATA)
        {
            throw new IllegalArgumentException("a credit window needs more than " + KEEP_FOR_DATA + " slots, not " + slots);
        }
        this.slots = slots;
        this.threshold = Math.max(1, slots / 2);
        this.credits = slots;
    }

    /** @param keep the credits the message must leave: {@link #KEEP_FOR_DATA} and the others. */
    boolean canSend(final int keep)
    {
        return credits > keep;
    }

    void sent()
    {
        if (credits < 1)
        {
            throw new IllegalStateException("a message sent without a credit");
        }
        credits--;
    }

    /** @return the credits owed to the peer, now carried by a message being sent. */
    int takeOwed()
    {
        final int taken = owed;
        owed = 0;
        return taken;
    }

    /** One of our receive slots went back to the NIC: the peer may use it again once told. */
    void reposted()
    {
        owed++;
    }

    /**
     * @return false if the peer returned more credits than it could owe (a broken peer); written so that
     * no count, however large, wraps past the check.
     */
    boolean returned(final int count)
    {
        if (count < 0 || count > slots - credits)
        {
            return false;
        }
        credits += count;
        return true;
    }

    /** @return true when enough is owed to be worth a message of its own. */
    boolean shouldReturn()
    {
        return owed >= threshold;
    }

    int credits()
    {
        return credits;
    }

    int owed()
    {
        return owed;
    }

    int slots()
    {
        return slots;
    }
}
