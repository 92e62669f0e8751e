package org.qnix.vipl;

import org.qnix.abi.ViplResult;

/**
 * A Virtual Interface ({@code VipCreateVi}): a send queue and a receive queue, each reporting to its
 * completion queue if it has one, to be connected to exactly one remote VI. Created Idle.
 * {@link #close()} is {@code VipDestroyVi}: {@code INVALID_STATE} unless the VI is Idle.
 *
 * <pre>{@code
 * Vi vi = nic.createVi(new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, ptag, false, false), cq, cq);
 * Vi.Query q = vi.query();            // IDLE, and the attributes it was created with
 * nic.connectRequest(vi, new ViplAddress(NicCoordinates.parse("1-0"), "echo".getBytes(US_ASCII)), 10_000);
 * vi.disconnect();
 * vi.close();
 * }</pre>
 */
public final class Vi implements AutoCloseable
{
    private final ViplNic nic;
    private final int vi;
    private final int number;
    private final ViAttributes attributes;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private boolean closed;
    private RemoteVi remote;
    private long peerDeadline;

    /**
     * What {@code VipQueryVi} reports.
     *
     * @param remote the peer's attributes once connected, else null.
     */
    public record Query(ViState state, ViAttributes attributes, RemoteVi remote, boolean sendQueueEmpty,
        boolean receiveQueueEmpty)
    {
    }

    Vi(final ViplNic nic, final int vi, final int number, final ViAttributes attributes, final CompletionQueue sendCq,
        final CompletionQueue receiveCq)
    {
        this.nic = nic;
        this.vi = vi;
        this.number = number;
        this.attributes = attributes;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
    }

    /**
     * {@code VipQueryVi}: the state the NIC's VI table holds (a driver request), so Error, which the NIC
     * or a peer's departure sets, shows; the remote end as the connection reported it.
     */
    public Query query()
    {
        synchronized (nic)
        {
            final ViState state = nic.queryVi(this);
            return new Query(state, attributes, ViState.IDLE == state ? null : remote, true, true);
        }
    }

    /**
     * {@code VipConnectPeerDone}: does not block. @return SUCCESS once connected ({@link #query()} then
     * names the peer), NOT_DONE while the peer has not asked, or why the request failed (TIMEOUT,
     * INVALID_RELIABILITY_LEVEL, INVALID_MTU; INVALID_STATE with no request outstanding).
     */
    public ViplResult connectPeerDone()
    {
        synchronized (nic)
        {
            return nic.connectPeerOutcome(this, false, 0);
        }
    }

    /**
     * {@code VipConnectPeerWait}: blocks until the peer request is matched or its timeout passes.
     *
     * @return the peer's end.
     * @throws ViplException TIMEOUT, a mismatch, or INVALID_STATE with no request outstanding.
     */
    public RemoteVi connectPeerWait()
    {
        synchronized (nic)
        {
            nic.connectPeerOutcome(this, true, peerDeadline - System.currentTimeMillis());
            return remote;
        }
    }

    /** {@code VipDisconnect}: Idle again; a connected peer's VI goes to Error (connection lost). */
    public void disconnect()
    {
        synchronized (nic)
        {
            nic.disconnect(this);
            remote = null;
        }
    }

    public ViAttributes attributes()
    {
        return attributes;
    }

    /** @return the CQ the send queue reports to, or null. */
    public CompletionQueue sendCq()
    {
        return sendCq;
    }

    /** @return the CQ the receive queue reports to, or null. */
    public CompletionQueue receiveCq()
    {
        return receiveCq;
    }

    /** @return the VI's index in its NIC's VI table: its number on the wire. */
    public int index()
    {
        return vi;
    }

    /** @return its position among this process's VIs (where its completion counters are). */
    int number()
    {
        return number;
    }

    void peerRequested(final long deadline)
    {
        peerDeadline = deadline;
    }

    void connected(final RemoteVi peer)
    {
        remote = peer;
    }

    ViplNic nic()
    {
        return nic;
    }

    boolean isClosed()
    {
        return closed;
    }

    /** {@code VipDestroyVi}. Idempotent once it succeeded. */
    public void close()
    {
        synchronized (nic)
        {
            if (!closed)
            {
                if (!nic.isClosed())
                {
                    // After the NIC's close the driver released everything already.
                    nic.destroyVi(this);
                }
                closed = true;
            }
        }
    }
}
