package org.qnix.vipl;

/**
 * A client's connection request as a server's {@code VipConnectWait} returns it: who asks, and the
 * answer, {@link #accept(Vi)} ({@code VipConnectAccept}) or {@link #reject()}
 * ({@code VipConnectReject}). A request is answered once.
 *
 * <pre>{@code
 * ConnectionRequest request = nic.connectWait("echo".getBytes(US_ASCII), 10_000);
 * if (request.remote().reliability() == vi.attributes().reliability()) { request.accept(vi); }
 * else { request.reject(); }
 * }</pre>
 */
public final class ConnectionRequest
{
    private final ViplNic nic;
    private final int handle;
    private final RemoteVi remote;

    ConnectionRequest(final ViplNic nic, final int handle, final RemoteVi remote)
    {
        this.nic = nic;
        this.handle = handle;
        this.remote = remote;
    }

    /**
     * @return the client's end: its NIC and its VI's attributes.
     *
     * <pre>{@code
     * if (request.remote().maxTransferSize() > 65536) { request.reject(); }
     * }</pre>
     */
    public RemoteVi remote()
    {
        return remote;
    }

    /**
     * {@code VipConnectAccept}: {@code vi}, Idle, and the client's VI become Connected. Attributes that
     * do not match the client's end the request on both sides ({@code INVALID_RELIABILITY_LEVEL},
     * {@code INVALID_MTU}).
     *
     * <pre>{@code
     * nic.connectWait(key, 10_000).accept(vi);
     * }</pre>
     */
    public void accept(final Vi vi)
    {
        nic.accept(this, vi);
    }

    /**
     * {@code VipConnectReject}: the client's request ends {@code REJECT}.
     *
     * <pre>{@code
     * nic.connectWait(key, 10_000).reject();
     * }</pre>
     */
    public void reject()
    {
        nic.reject(this);
    }

    int handle()
    {
        return handle;
    }
}
