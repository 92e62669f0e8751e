package org.qnix.daemon;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

import org.qnix.abi.DriverProtocol;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViplResult;

/**
 * The driver's side of {@link DriverProtocol}'s replies: each reply a process can get, written with its
 * fields in the protocol's order and flushed, so that a reply is never left half in a buffer while the
 * driver waits for the next request. Over a connection's output in the driver; over a byte array in the
 * tests of {@link DriverRequests}.
 *
 * <pre>{@code
 * DriverReplies replies = new DriverReplies(Channels.newOutputStream(channel));
 * replies.lockCount(1);
 * replies.refuse("no buffer region 7 of process (1, 0) on node (0, 0)");
 * }</pre>
 */
final class DriverReplies
{
    private final DataOutputStream out;

    /** @param out where the replies go; buffered here, flushed after each reply. */
    DriverReplies(final OutputStream out)
    {
        this.out = new DataOutputStream(new BufferedOutputStream(out));
    }

    /** FAILED with {@link DriverProtocol#REFUSED}: the driver refused before touching the NIC. */
    void refuse(final String reason) throws IOException
    {
        fail(DriverProtocol.REFUSED, reason);
    }

    /** FAILED with a Doorbell error code or {@link DriverProtocol#NIC_DEAD}. */
    void fail(final int code, final String message) throws IOException
    {
        out.writeInt(DriverProtocol.FAILED);
        out.writeInt(code);
        DriverProtocol.writeText(out, message);
        out.flush();
    }

    /**
     * REGISTERED: where the process maps its VNI and Host Process Structures (thesis 3.4, step 6), and
     * whether it runs on the NICs' CPU ({@link NicCpuPlacement}).
     */
    void registered(final int index, final int nicPid, final long vniAddress, final int vniLength, final long hpsAddress,
        final boolean onNicCpu) throws IOException
    {
        out.writeInt(DriverProtocol.REGISTERED);
        out.writeInt(index);
        out.writeInt(nicPid);
        out.writeLong(vniAddress);
        out.writeInt(vniLength);
        out.writeLong(hpsAddress);
        out.writeInt(DriverProtocol.placement(onNicCpu));
        out.flush();
    }

    /** TIMED_OUT: why, and the members of an application group that never asked to register. */
    void timedOut(final String message, final List<ProcessName> missing) throws IOException
    {
        out.writeInt(DriverProtocol.TIMED_OUT);
        DriverProtocol.writeText(out, message);
        out.writeInt(missing.size());
        for (final ProcessName name : missing)
        {
            out.writeInt(name.ai());
            out.writeInt(name.pi());
        }
        out.flush();
    }

    /**
     * VIA_REGISTERED (issue 14): where the VIA process maps its VNI, Host and VIA Process Structures, and
     * whether it runs on the NICs' CPU ({@link NicCpuPlacement}).
     */
    void viaRegistered(final int index, final int nicPid, final long vniAddress, final int vniLength,
        final long hpsAddress, final long structuresAddress, final int structuresPages, final boolean onNicCpu)
        throws IOException
    {
        out.writeInt(DriverProtocol.VIA_REGISTERED);
        out.writeInt(index);
        out.writeInt(nicPid);
        out.writeLong(vniAddress);
        out.writeInt(vniLength);
        out.writeLong(hpsAddress);
        out.writeLong(structuresAddress);
        out.writeInt(structuresPages);
        out.writeInt(DriverProtocol.placement(onNicCpu));
        out.flush();
    }

    /** VIA_FAILED: the VIPL code the library reports, and why. */
    void viaFailed(final ViplResult result, final String message) throws IOException
    {
        out.writeInt(DriverProtocol.VIA_FAILED);
        out.writeInt(result.code());
        DriverProtocol.writeText(out, message);
        out.flush();
    }

    /** VIA_HANDLE: a ptag or a memory handle. */
    void viaHandle(final int handle) throws IOException
    {
        out.writeInt(DriverProtocol.VIA_HANDLE);
        out.writeInt(handle);
        out.flush();
    }

    /** VIA_CQ: the CQ and the pages of its ring, for the process to map. */
    void viaCq(final ViaResources.Cq cq) throws IOException
    {
        out.writeInt(DriverProtocol.VIA_CQ);
        out.writeInt(cq.cq());
        out.writeInt(cq.ring().pages());
        for (int i = 0; i < cq.ring().pages(); i++)
        {
            out.writeLong(cq.ring().address(i));
        }
        out.flush();
    }

    /** VIA_VI: the VI's index in the NIC's VI table and its number in the process. */
    void viaVi(final ViaResources.Vi vi) throws IOException
    {
        out.writeInt(DriverProtocol.VIA_VI);
        out.writeInt(vi.vi());
        out.writeInt(vi.number());
        out.flush();
    }

    /** VIA_CONNECTION_ASKED: a client's request, asked of this server under its handle. */
    void viaConnectionAsked(final ViaConnections.Request request) throws IOException
    {
        out.writeInt(DriverProtocol.VIA_CONNECTION_ASKED);
        out.writeInt(request.handle());
        endpoint(request.client());
    }

    /** VIA_CONNECTED: the server's end of the new connection. */
    void viaConnected(final ViaConnections.Endpoint server) throws IOException
    {
        out.writeInt(DriverProtocol.VIA_CONNECTED);
        endpoint(server);
    }

    private void endpoint(final ViaConnections.Endpoint end) throws IOException
    {
        out.writeInt(end.node());
        out.writeInt(end.reliability());
        out.writeInt(end.maxTransfer());
        out.writeInt(end.attributes());
        out.flush();
    }

    void deregistered() throws IOException
    {
        out.writeInt(DriverProtocol.DEREGISTERED);
        out.flush();
    }

    /** BUFFER: a region's id and the physical address of each of its pages, in mapping order. */
    void buffer(final ProcessProtectionTable.Entry entry) throws IOException
    {
        out.writeInt(DriverProtocol.BUFFER);
        out.writeInt(entry.id());
        out.writeInt(entry.pages());
        for (int i = 0; i < entry.pages(); i++)
        {
            out.writeLong(entry.address(i));
        }
        out.flush();
    }

    void lockCount(final int lockCount) throws IOException
    {
        out.writeInt(DriverProtocol.LOCK_COUNT);
        out.writeInt(lockCount);
        out.flush();
    }

    void ok() throws IOException
    {
        out.writeInt(DriverProtocol.OK);
        out.flush();
    }

    /** A member of a group as GROUP_INFO lists it: its name and its NIC, packed (-1 if not known). */
    record GroupMember(ProcessName name, int packedNode)
    {
    }

    /** GROUP_INFO: the group's expected size and its members so far; (0, none) for an unknown group. */
    void groupInfo(final int expectedSize, final List<GroupMember> members) throws IOException
    {
        out.writeInt(DriverProtocol.GROUP_INFO);
        out.writeInt(expectedSize);
        out.writeInt(members.size());
        for (final GroupMember member : members)
        {
            out.writeInt(member.name().ai());
            out.writeInt(member.name().pi());
            out.writeInt(member.packedNode());
        }
        out.flush();
    }
}
