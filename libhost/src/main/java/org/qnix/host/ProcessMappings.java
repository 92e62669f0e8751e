package org.qnix.host;

import java.io.UncheckedIOException;

import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.HostProcessStructuresLayout;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicMemoryInfo;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.NicWakeUp;

/**
 * What a process registered with its node's driver maps of the node (thesis 3.4; DESIGN.md 5), the same
 * for a QNIX process and a VIA one:
 *
 * <ul>
 *   <li>its Virtual Network Interface in the NIC's SDRAM, read-write;</li>
 *   <li>its Host Process Structures in host memory, read-write, checked to point at that VNI;</li>
 *   <li>the control program's identity and heartbeat ({@link ControlProgramLayout}), read-only like a
 *       status register, so that no wait outlives the firmware;</li>
 *   <li>the node's {@code nic.wake} ({@link NicWakeMapping}): a post wakes a NIC asleep for want of work.</li>
 * </ul>
 *
 * <pre>{@code
 * ProcessMappings nic = ProcessMappings.map(dir, params, node, "demo",
 *     registration.vniAddress(), registration.vniLength(), registration.hpsAddress());
 * NicHeartbeat heartbeat = new NicHeartbeat(nic.control(), 0, node);
 * ...   // post into nic.vni()'s Command Queue, then nic.wakeUp().ring()
 * nic.retire(quiescent);   // at close, before the driver de-registers; calls may still be inside
 * }</pre>
 */
public final class ProcessMappings implements AutoCloseable
{
    private final MappedFile vni;
    private final MappedFile hps;
    private final MappedFile control;
    private final NicWakeMapping wake;
    private boolean retired;

    private ProcessMappings(final MappedFile vni, final MappedFile hps, final MappedFile control,
        final NicWakeMapping wake)
    {
        this.vni = vni;
        this.hps = hps;
        this.control = control;
        this.wake = wake;
    }

    /**
     * Maps what a registration gives.
     *
     * @param clusterName for the message if the cluster's files went meanwhile.
     * @throws DriverException with {@link DriverProtocol#REFUSED} if the Host Process Structures do not
     *                         point at the VNI, with code 0 if the node's files are gone (the cluster was
     *                         taken down after the driver answered).
     */
    public static ProcessMappings map(final ClusterDirectory dir, final ClusterParameters params,
        final NicCoordinates node, final String clusterName, final long vniAddress, final int vniLength,
        final long hpsAddress)
    {
        MappedFile vni = null;
        MappedFile hps = null;
        MappedFile control = null;
        NicWakeMapping wake = null;
        try
        {
            vni = MappedFile.mapExisting(dir.nicSdram(node), vniAddress, vniLength);
            hps = MappedFile.mapExisting(dir.hostMemory(node), hpsAddress,
                (long)HostProcessStructuresLayout.pages(params.contextsPerProcess(), params.pageSize()) *
                params.pageSize());
            // Writer: the driver, before its reply (NicMemoryInfo).
            final long commandQueue = new NicMemoryInfo().wrap(hps.buffer(), 0).commandQueueAddress();
            if (commandQueue != vniAddress)
            {
                throw new DriverException(DriverProtocol.REFUSED, "the Host Process Structures at " + hpsAddress +
                    " point at SDRAM " + commandQueue + ", expected the VNI at " + vniAddress);
            }
            control = MappedFile.mapReadOnly(dir.nicSdram(node), new NicSdramLayout(params).controlProgramOffset(),
                ControlProgramLayout.LENGTH);
            wake = NicWakeMapping.map(dir, node);
            return new ProcessMappings(vni, hps, control, wake);
        }
        catch (final UncheckedIOException ex)
        {
            CloseHelper.closeAll(vni, hps, control, wake);
            throw new DriverException("registered with the driver of node " + node + ", then " + ex.getMessage() +
                ": is cluster '" + clusterName + "' still up?", ex);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.closeAll(vni, hps, control, wake);
            throw ex;
        }
    }

    /** @return the process's Virtual Network Interface in NIC memory. */
    public UnsafeBuffer vni()
    {
        return vni.buffer();
    }

    /** @return the process's Host Process Structures in host memory. */
    public UnsafeBuffer hps()
    {
        return hps.buffer();
    }

    /** @return the control program's area, read-only ({@link ControlProgramLayout}). */
    public UnsafeBuffer control()
    {
        return control.buffer();
    }

    /** @return the waker of the node's NIC. */
    public NicWakeUp wakeUp()
    {
        return wake.wakeUp();
    }

    /** Unmaps everything: only when no call can be inside (a failed open). */
    public void close()
    {
        CloseHelper.closeAll(vni, hps, control, wake);
    }

    /**
     * Retires every mapping ({@link RetiredMemory}) instead of unmapping it: a call still inside reads zeros
     * from then on, never a page the driver gives to another process, and never an unmapped one. Call it
     * before the driver de-registers the process, which frees the pages. Idempotent.
     *
     * @param quiescent false while calls may still be inside: where no overlay can be made, the mappings
     *                  then stay as they are rather than be unmapped under those calls.
     */
    public synchronized void retire(final boolean quiescent)
    {
        if (retired)
        {
            return;
        }
        // Every one, whatever the others did.
        final boolean vniRetired = RetiredMemory.retire(vni, quiescent);
        final boolean hpsRetired = RetiredMemory.retire(hps, quiescent);
        final boolean controlRetired = RetiredMemory.retire(control, quiescent);
        final boolean wakeRetired = wake.retire(quiescent);
        // Left in place (no overlay, calls inside): a later retire, once quiescent, unmaps them.
        retired = quiescent || (vniRetired && hpsRetired && controlRetired && wakeRetired);
    }
}
