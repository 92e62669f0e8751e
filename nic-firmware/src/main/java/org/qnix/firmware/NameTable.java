package org.qnix.firmware;

import org.agrona.collections.IntArrayQueue;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.NameTableLayout;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProcessName;
import org.qnix.abi.SequenceLock;

/**
 * The Name Table of thesis 3.3.3: every process registered anywhere in the cluster, by (AI, PI) name,
 * with the NIC it lives on and its NIC PID there. The firmware's working copy is this heap map; every
 * change is mirrored into SDRAM under the table's sequence lock for other processes to read.
 */
final class NameTable
{
    /** One registered process. */
    static final class Entry
    {
        final ProcessName name;
        final NicCoordinates node;
        final int nicPid;
        final int osPid;
        /** Which of the processes its Process Table entry has held this one is (New_Process). */
        final int incarnation;
        final int slot;

        Entry(final ProcessName name, final NicCoordinates node, final int nicPid, final int osPid,
            final int incarnation, final int slot)
        {
            this.name = name;
            this.node = node;
            this.nicPid = nicPid;
            this.osPid = osPid;
            this.incarnation = incarnation;
            this.slot = slot;
        }

        boolean is(final NicCoordinates node, final int nicPid)
        {
            return this.node.equals(node) && this.nicPid == nicPid;
        }
    }

    private final Long2ObjectHashMap<Entry> byName = new Long2ObjectHashMap<>();
    private final IntArrayQueue freeSlots = new IntArrayQueue();
    private final AtomicBuffer sdram;
    private final int base;

    NameTable(final AtomicBuffer sdram, final NicSdramLayout layout)
    {
        this.sdram = sdram;
        this.base = (int)layout.nameTableOffset();
        for (int i = 0; i < layout.parameters().nameTableEntries(); i++)
        {
            freeSlots.addInt(i);
        }
    }

    Entry lookup(final ProcessName name)
    {
        return byName.get(name.key());
    }

    /** Lookup without making a name object (the data path). */
    Entry lookup(final int ai, final int pi)
    {
        return byName.get(((long)ai << 32) | (pi & 0xFFFF_FFFFL));
    }

    int size()
    {
        return byName.size();
    }

    /** @return true if a process of application {@code ai} is registered (its group is then taken). */
    boolean hasApplication(final int ai)
    {
        for (final Entry entry : byName.values())
        {
            if (entry.name.ai() == ai)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Adds or replaces the entry of a name. A replacement happens when a name is registered again
     * before the Delete_Process of its previous owner arrived here.
     *
     * @return the entry, or null if the table is full.
     */
    Entry put(final ProcessName name, final NicCoordinates node, final int nicPid, final int osPid,
        final int incarnation)
    {
        final Entry existing = byName.get(name.key());
        if (null != existing)
        {
            if (existing.is(node, nicPid) && existing.osPid == osPid && existing.incarnation == incarnation)
            {
                return existing;
            }
            final Entry replacement = new Entry(name, node, nicPid, osPid, incarnation, existing.slot);
            byName.put(name.key(), replacement);
            publish(replacement, byName.size());
            return replacement;
        }
        if (freeSlots.isEmpty())
        {
            return null;
        }
        final Entry entry = new Entry(name, node, nicPid, osPid, incarnation, freeSlots.pollInt());
        byName.put(name.key(), entry);
        publish(entry, byName.size());
        return entry;
    }

    /**
     * Removes a name if it still belongs to the given NIC and NIC PID (a stale Delete_Process for an
     * earlier owner of the name changes nothing).
     *
     * @return the removed entry or null.
     */
    Entry remove(final ProcessName name, final NicCoordinates node, final int nicPid)
    {
        final Entry existing = byName.get(name.key());
        if (null == existing || !existing.is(node, nicPid))
        {
            return null;
        }
        byName.remove(name.key());
        freeSlots.addInt(existing.slot);
        final int e = base + NameTableLayout.entryOffset(existing.slot);
        SequenceLock.beginWrite(sdram, base + NameTableLayout.SEQUENCE_OFFSET);
        sdram.putInt(e + NameTableLayout.STATE_OFFSET, NameTableLayout.STATE_FREE);
        sdram.putInt(base + NameTableLayout.COUNT_OFFSET, byName.size());
        SequenceLock.endWrite(sdram, base + NameTableLayout.SEQUENCE_OFFSET);
        return existing;
    }

    private void publish(final Entry entry, final int count)
    {
        final int e = base + NameTableLayout.entryOffset(entry.slot);
        SequenceLock.beginWrite(sdram, base + NameTableLayout.SEQUENCE_OFFSET);
        sdram.putInt(e + NameTableLayout.AI_OFFSET, entry.name.ai());
        sdram.putInt(e + NameTableLayout.PI_OFFSET, entry.name.pi());
        sdram.putInt(e + NameTableLayout.NODE_OFFSET, entry.node.packed());
        sdram.putInt(e + NameTableLayout.NIC_PID_OFFSET, entry.nicPid);
        sdram.putInt(e + NameTableLayout.OS_PID_OFFSET, entry.osPid);
        sdram.putInt(e + NameTableLayout.STATE_OFFSET, NameTableLayout.STATE_USED);
        sdram.putInt(base + NameTableLayout.COUNT_OFFSET, count);
        SequenceLock.endWrite(sdram, base + NameTableLayout.SEQUENCE_OFFSET);
    }
}
