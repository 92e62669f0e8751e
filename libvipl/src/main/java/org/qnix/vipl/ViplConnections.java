package org.qnix.vipl;

import java.util.concurrent.TimeUnit;

import org.qnix.abi.HostClock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.ViaCloseRequest;
import org.qnix.abi.ViplResult;
import org.qnix.host.DriverException;
import org.qnix.host.DriverProxy;
import org.qnix.host.MappingGuard;
import org.qnix.host.RetiredMemory;
import org.qnix.host.ViaDriverException;
import org.qnix.host.ViaPeer;

/**
 * A NIC's VI connections, through VIA's kernel agent (the driver): the client-server calls
 * ({@code VipConnectWait}, {@code VipConnectAccept}, {@code VipConnectReject}, {@code VipConnectRequest}),
 * the peer-to-peer ones ({@code VipConnectPeerRequest}, {@code Done}, {@code Wait}) and
 * {@code VipDisconnect}, and how a close ends the connection waits in the driver. A wait holds the
 * NIC's driver connection up to its timeout, so a close from another thread cannot queue behind it:
 * it writes Close requested in the VIA Process Structures, which the driver's side of each wait looks
 * at, and waits for the waits to leave ({@link #endWaits()}).
 *
 * <pre>{@code
 * // in ViplNic, under its monitor:
 * public synchronized ConnectionRequest connectWait(final byte[] discriminator, final long timeoutMs)
 * {
 *     return connections.connectWait(discriminator, timeoutMs);
 * }
 * }</pre>
 *
 * <p>{@code connectWait}, {@code connectRequest}, {@code connectPeerRequest}, {@code accept},
 * {@code reject} and {@code connectPeerOutcome} run under the NIC's monitor, and so does
 * {@link #retireStructures} (from the NIC's release); {@code disconnect} and {@link #endWaits()} do not.
 * Of these calls only {@code connectWait}, {@code connectRequest} and {@code connectPeerOutcome} wait in
 * the driver, and only they are counted and ended by a close.
 */
final class ViplConnections
{
    /**
     * How long a close waits for the driver to end the connection waits it asked it to end: the driver
     * looks every 50 ms, so only a driver that does not run takes this long.
     */
    private static final long DRIVER_WAITS_END_NS = TimeUnit.SECONDS.toNanos(2);

    private final ViplNic nic;
    /** The NIC's posts, waits and guard: read once here, not on every call. */
    private final ViplDataPath dataPath;
    private final DriverProxy driver;
    private final MappedFile structures;
    /**
     * Connection waits in the driver now: they hold the NIC's monitor up to their timeout, so a close
     * from another thread asks the driver to end them, and waits for them to leave.
     */
    private final MappingGuard driverWaits = new MappingGuard();
    /** Held over the close's write of Close requested and over the release's retire of {@link #structures}. */
    private final Object closeRequestLock = new Object();

    ViplConnections(final ViplNic nic, final DriverProxy driver, final MappedFile structures)
    {
        this.nic = nic;
        this.dataPath = nic.dataPath();
        this.driver = driver;
        this.structures = structures;
    }

    ConnectionRequest connectWait(final byte[] discriminator, final long timeoutMs)
    {
        beginDriverWait();
        try
        {
            final ViaPeer peer = driver.viaConnectWait(discriminator, timeoutMs);
            return new ConnectionRequest(nic, peer.handle(), RemoteVi.of(peer));
        }
        catch (final DriverException ex)
        {
            throw connectionWaitEnded(ex);
        }
        finally
        {
            driverWaits.exit();
        }
    }

    RemoteVi connectRequest(final Vi vi, final ViplAddress remote, final long timeoutMs)
    {
        beginDriverWait();
        try
        {
            nic.checkOwn(vi);
            final RemoteVi server =
                RemoteVi.of(driver.viaConnectRequest(vi.index(), remote.node().packed(), remote.discriminator(), timeoutMs));
            vi.connected(server);
            return server;
        }
        catch (final DriverException ex)
        {
            throw connectionWaitEnded(ex);
        }
        finally
        {
            driverWaits.exit();
        }
    }

    void connectPeerRequest(final Vi vi, final byte[] localDiscriminator, final ViplAddress remote,
        final long timeoutMs)
    {
        nic.ensureOpen();
        nic.checkOwn(vi);
        try
        {
            driver.viaConnectPeerRequest(vi.index(), localDiscriminator, remote.node().packed(), remote.discriminator(),
                timeoutMs);
            vi.peerRequested(HostClock.millis() + timeoutMs);
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    void accept(final ConnectionRequest request, final Vi vi)
    {
        nic.ensureOpen();
        nic.checkOwn(vi);
        try
        {
            driver.viaConnectAccept(request.handle(), vi.index());
            vi.connected(request.remote());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    void reject(final ConnectionRequest request)
    {
        nic.ensureOpen();
        try
        {
            driver.viaConnectReject(request.handle());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    /** @return the outcome of the VI's peer request: SUCCESS (connected), NOT_DONE, or why it failed. */
    ViplResult connectPeerOutcome(final Vi vi, final boolean block, final long timeoutMs)
    {
        beginDriverWait();
        try
        {
            nic.checkOwn(vi);
            vi.connected(RemoteVi.of(driver.viaConnectPeerOutcome(vi.index(), block, timeoutMs)));
            return ViplResult.SUCCESS;
        }
        catch (final ViaDriverException ex)
        {
            // Done reports its outcomes as results, but a dead NIC as Wait does: the request is withdrawn.
            if (block && ViplResult.NOT_DONE != ex.result() ||
                ViplResult.ERROR_RESOURCE == ex.result() && null != dataPath.stoppedOrClosed())
            {
                throw connectionWaitEnded(ex);
            }
            return ex.result();
        }
        catch (final DriverException ex)
        {
            throw connectionWaitEnded(ex);
        }
        finally
        {
            driverWaits.exit();
        }
    }

    void disconnect(final Vi vi)
    {
        nic.ensureOpen();
        nic.checkOwn(vi);
        try
        {
            driver.viaDisconnect(vi.index());
        }
        catch (final DriverException ex)
        {
            throw ViplException.of(ex);
        }
    }

    /**
     * The close's part, without the NIC's monitor (a wait may hold it): refuses every later wait, and
     * ends those in the driver now.
     *
     * @return false if a wait was still in the driver after {@link #DRIVER_WAITS_END_NS}: a driver that
     * does not look (stopped, or stuck).
     */
    boolean endWaits()
    {
        driverWaits.beginClose();
        return 0 == driverWaits.callsInside() || askDriverToEndWaits();
    }

    /**
     * Retires the VIA Process Structures' mapping (RetiredMemory), not while a close writes Close requested
     * into it.
     */
    void retireStructures(final boolean quiescent)
    {
        synchronized (closeRequestLock)
        {
            RetiredMemory.retire(structures, quiescent);
        }
    }

    /**
     * Asks the driver to end this process's connection waits, through the Close requested word of the
     * VIA Process Structures that the driver's side of each wait looks at every 50 ms, and waits for them
     * to leave. The connection stays, so the NIC's release retires every mapping before it de-registers
     * the process over it: the pages the de-registration frees are no longer this process's to read.
     *
     * @return false if a wait was still in the driver after {@link #DRIVER_WAITS_END_NS}.
     */
    private boolean askDriverToEndWaits()
    {
        synchronized (closeRequestLock)
        {
            if (structures.isClosed())
            {
                // Unmapped by a release (where no overlay could be made), which came after every wait left.
                return true;
            }
            new ViaCloseRequest().wrap(structures.buffer(), 0).request();
        }
        return driverWaits.awaitQuiescence(DRIVER_WAITS_END_NS);
    }

    /**
     * @return the exception a connection wait the driver ended throws: the driver ends connectWait,
     * connectRequest and connectPeerWait with ERROR_RESOURCE once it finds this NIC dead (its heartbeat,
     * which this process reads too), and that is the NIC-dead exception the data path's waits throw.
     */
    private ViplException connectionWaitEnded(final DriverException ex)
    {
        if (nic.isClosed())
        {
            // The close from another thread had the driver end the wait (or closed the connection under it).
            return new ViplException(ViplResult.INVALID_STATE, dataPath.closedException().getMessage() +
                " during the connection wait", ex);
        }
        if (ex instanceof ViaDriverException refusal && ViplResult.ERROR_RESOURCE == refusal.result())
        {
            final ViplException stopped = dataPath.stoppedOrClosed();
            if (null != stopped)
            {
                return stopped;
            }
        }
        return ViplException.of(ex);
    }

    /**
     * Counts a driver exchange that may block until its timeout: either a close sees it counted and has the
     * driver end it, or it sees the close. Each call is paired with {@code driverWaits.exit()}.
     *
     * @throws ViplException {@code INVALID_STATE} once the NIC was closed.
     */
    private void beginDriverWait()
    {
        if (!driverWaits.enter())
        {
            throw dataPath.closedException();
        }
    }
}
