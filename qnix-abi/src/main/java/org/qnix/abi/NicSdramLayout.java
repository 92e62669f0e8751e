package org.qnix.abi;

/**
 * The NIC local memory, {@code node-X-Y/nic.sdram}: the six segments of thesis 3.3.4 after the
 * {@link FileDescriptorBlock}. An "SDRAM address" is a byte offset in this file. The NIC Memory Map of
 * the thesis is this object: every segment start, derived from the one before.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  File Descriptor Block (4 KiB)                                |
 *  +---------------------------------------------------------------+ vnisOffset
 *  |  1. Virtual Network Interfaces: P x VniLayout.length()        |
 *  +---------------------------------------------------------------+ processTableOffset
 *  |  2. NIC Process Table: P x ProcessTableLayout.ENTRY_LENGTH    |
 *  +---------------------------------------------------------------+ driverCommandQueueOffset
 *  |  3. Driver Command Queue: D entries, then the Driver Info     |
 *  +---------------------------------------------------------------+ controlProgramOffset
 *  |  4. NIC Control Program area (ControlProgramLayout)           |
 *  +---------------------------------------------------------------+ nicTableOffset
 *  |  5. NIC internal memory: NIC Table, Name Table, Group Table,  |
 *  |     Translation and Protection Table, VIA tables              |
 *  |     (ViaTablesLayout)                                         |
 *  +---------------------------------------------------------------+ managedMemoryOffset
 *  |  6. NIC managed memory: staging and multicast copies, to the  |
 *  |     end of the file                                           |
 *  +---------------------------------------------------------------+ sdramBytes
 * </pre>
 */
public final class NicSdramLayout
{
    private final ClusterParameters params;
    private final VniLayout vni;
    private final long vnisOffset;
    private final long processTableOffset;
    private final long driverCommandQueueOffset;
    private final long driverInfoOffset;
    private final long controlProgramOffset;
    private final long nicTableOffset;
    private final long nameTableOffset;
    private final long groupTableOffset;
    private final long protectionTableOffset;
    private final ViaTablesLayout via;
    private final long managedMemoryOffset;

    public NicSdramLayout(final ClusterParameters params)
    {
        this.params = params;
        vni = new VniLayout(params);
        vnisOffset = FileDescriptorBlock.LENGTH;
        processTableOffset = vnisOffset + (long)params.maxProcessesPerNic() * vni.length();
        driverCommandQueueOffset = processTableOffset +
            (long)params.maxProcessesPerNic() * ProcessTableLayout.ENTRY_LENGTH;
        driverInfoOffset = driverCommandQueueOffset +
            (long)params.driverCommandQueueEntries() * DriverCommandQueueLayout.ENTRY_LENGTH;
        controlProgramOffset = driverCommandQueueOffset + DriverCommandQueueLayout.length(params);
        nicTableOffset = controlProgramOffset + ControlProgramLayout.LENGTH;
        nameTableOffset = VniLayout.align(nicTableOffset + NicTableLayout.length(params), 64);
        groupTableOffset = VniLayout.align(nameTableOffset + NameTableLayout.length(params), 64);
        protectionTableOffset = VniLayout.align(groupTableOffset + GroupTableLayout.length(params), 64);
        via = new ViaTablesLayout(params, protectionTableOffset + ProtectionTableLayout.length(params));
        managedMemoryOffset = VniLayout.align(via.endOffset(), params.pageSize());
    }

    public ClusterParameters parameters()
    {
        return params;
    }

    public VniLayout vni()
    {
        return vni;
    }

    public int vniLength()
    {
        return vni.length();
    }

    public long vnisOffset()
    {
        return vnisOffset;
    }

    /** @return SDRAM address of VNI {@code index} (thesis 3.4 registration step 3). */
    public long vniOffset(final int index)
    {
        return vnisOffset + (long)index * vni.length();
    }

    public long processTableOffset()
    {
        return processTableOffset;
    }

    public long processEntryOffset(final int index)
    {
        return processTableOffset + (long)index * ProcessTableLayout.ENTRY_LENGTH;
    }

    public long driverCommandQueueOffset()
    {
        return driverCommandQueueOffset;
    }

    public long driverCommandOffset(final int position)
    {
        return driverCommandQueueOffset + (long)position * DriverCommandQueueLayout.ENTRY_LENGTH;
    }

    public long driverInfoOffset()
    {
        return driverInfoOffset;
    }

    public long controlProgramOffset()
    {
        return controlProgramOffset;
    }

    public long nicTableOffset()
    {
        return nicTableOffset;
    }

    public long nameTableOffset()
    {
        return nameTableOffset;
    }

    public long groupTableOffset()
    {
        return groupTableOffset;
    }

    public long protectionTableOffset()
    {
        return protectionTableOffset;
    }

    /** @return SDRAM address of the protection entry of the host page holding a physical address. */
    public long protectionEntryOffset(final long physicalAddress)
    {
        return protectionTableOffset + ProtectionTableLayout.entryOffset(params, physicalAddress);
    }

    /** @return the VIA tables (VI, memory-region, page translations, CQ), after the Protection Table. */
    public ViaTablesLayout via()
    {
        return via;
    }

    public long managedMemoryOffset()
    {
        return managedMemoryOffset;
    }

    public long managedMemoryLength()
    {
        return params.sdramBytes() - managedMemoryOffset;
    }

    /** @return the smallest SDRAM that holds every segment and one maximum-size message of staging. */
    public long minimumSdramBytes()
    {
        return managedMemoryOffset + params.maxMessageBytes();
    }
}
