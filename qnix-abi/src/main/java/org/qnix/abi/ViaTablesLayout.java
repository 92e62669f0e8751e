package org.qnix.abi;

/**
 * The VIA tables in NIC internal memory (issue 14), after the Translation and Protection Table: the
 * VI table, the memory-region table, the page translations of the registered regions, and the CQ
 * table. The driver is their only writer, except the words the NIC owns in a VI entry; no process
 * maps them, so no process can forge a ptag, an owner or a peer. Sizes follow the cluster's
 * parameters, so a small test cluster keeps small tables; the per-process and per-descriptor limits are
 * constants.
 *
 * <pre>
 *  +---------------------------------------------------------------+ viTableOffset (64-aligned)
 *  |  VI table: viEntries x ViTableEntry.LENGTH (128)              |
 *  +---------------------------------------------------------------+ regionTableOffset
 *  |  Memory-region table: regionEntries x MemoryRegionEntry (64)  |
 *  +---------------------------------------------------------------+ translationsOffset
 *  |  Page translations: translationEntries x 8 (host page address)|
 *  +---------------------------------------------------------------+ cqTableOffset
 *  |  CQ table: cqEntries x CqTableEntry.LENGTH (64)               |
 *  +---------------------------------------------------------------+ length()
 * </pre>
 *
 * <pre>{@code
 * ViaTablesLayout via = sdramLayout.via();
 * ViTableEntry vi = new ViTableEntry().wrap(sdram, (int)via.viOffset(3));
 * }</pre>
 */
public final class ViaTablesLayout
{
    /** VI table entries per NIC process slot: viEntries = this x P. */
    public static final int VIS_PER_PROCESS_SLOT = 4;
    /** Memory-region entries per NIC process slot: regionEntries = this x P (at most {@link MemoryRegionEntry#MAX_SLOTS}). */
    public static final int REGIONS_PER_PROCESS_SLOT = 16;
    /** CQ entries per NIC process slot: cqEntries = this x P. */
    public static final int CQS_PER_PROCESS_SLOT = 2;
    /** Page translations per page of the node's host memory: the same page may be registered twice. */
    public static final int TRANSLATIONS_PER_HOST_PAGE = 2;

    /** The most VIs one process may hold: its completion counters are in its VIA Process Structures. */
    public static final int MAX_VIS_PER_PROCESS = ViaProcessStructuresLayout.MAX_VIS;
    /** The most ptags one process may hold at once. */
    public static final int MAX_PTAGS_PER_PROCESS = 64;
    /** The most descriptors a work queue may hold posted and not completed (QueryNic MaxDescriptorsPerQueue). */
    public static final int MAX_DESCRIPTORS_PER_QUEUE = 1024;
    /** The most entries of one completion queue (QueryNic MaxCQEntries). */
    public static final int MAX_CQ_ENTRIES = CqRingLayout.MAX_ENTRIES;
    /** The longest discriminator of a VIA network address (QueryNic MaxDiscriminatorLen). */
    public static final int MAX_DISCRIMINATOR_BYTES = 16;

    public static final int TRANSLATION_LENGTH = Long.BYTES;

    private final int viEntries;
    private final int regionEntries;
    private final int translationEntries;
    private final int cqEntries;
    private final long viTableOffset;
    private final long regionTableOffset;
    private final long translationsOffset;
    private final long cqTableOffset;
    private final long end;

    /** @param offset the SDRAM address where the tables start; aligned to 64 here. */
    public ViaTablesLayout(final ClusterParameters params, final long offset)
    {
        final int p = params.maxProcessesPerNic();
        viEntries = VIS_PER_PROCESS_SLOT * p;
        regionEntries = (int)Math.min((long)REGIONS_PER_PROCESS_SLOT * p, MemoryRegionEntry.MAX_SLOTS);
        cqEntries = CQS_PER_PROCESS_SLOT * p;
        translationEntries = (int)Math.min(Integer.MAX_VALUE / TRANSLATION_LENGTH,
            TRANSLATIONS_PER_HOST_PAGE * (params.hostMemoryBytes() / params.pageSize()));
        viTableOffset = VniLayout.align(offset, Sizes.CACHE_LINE);
        regionTableOffset = viTableOffset + (long)viEntries * ViTableEntry.LENGTH;
        translationsOffset = regionTableOffset + (long)regionEntries * MemoryRegionEntry.LENGTH;
        cqTableOffset = VniLayout.align(translationsOffset + (long)translationEntries * TRANSLATION_LENGTH,
            Sizes.CACHE_LINE);
        end = cqTableOffset + (long)cqEntries * CqTableEntry.LENGTH;
    }

    public int viEntries()
    {
        return viEntries;
    }

    public int regionEntries()
    {
        return regionEntries;
    }

    public int translationEntries()
    {
        return translationEntries;
    }

    public int cqEntries()
    {
        return cqEntries;
    }

    public long viTableOffset()
    {
        return viTableOffset;
    }

    /** @return the SDRAM address of VI table entry {@code vi}. */
    public long viOffset(final int vi)
    {
        return viTableOffset + (long)vi * ViTableEntry.LENGTH;
    }

    public long regionTableOffset()
    {
        return regionTableOffset;
    }

    /** @return the SDRAM address of memory-region entry {@code slot} ({@link MemoryRegionEntry#slot}). */
    public long regionOffset(final int slot)
    {
        return regionTableOffset + (long)slot * MemoryRegionEntry.LENGTH;
    }

    public long translationsOffset()
    {
        return translationsOffset;
    }

    /** @return the SDRAM address of page translation {@code index}: one host page's physical address. */
    public long translationOffset(final int index)
    {
        return translationsOffset + (long)index * TRANSLATION_LENGTH;
    }

    public long cqTableOffset()
    {
        return cqTableOffset;
    }

    public long cqOffset(final int cq)
    {
        return cqTableOffset + (long)cq * CqTableEntry.LENGTH;
    }

    /** @return the SDRAM address just after the tables. */
    public long endOffset()
    {
        return end;
    }
}
