package org.qnix.firmware;

import org.agrona.concurrent.AtomicBuffer;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ContextLayout;
import org.qnix.abi.ContextRegionDescriptor;
import org.qnix.abi.Doorbell;
import org.qnix.abi.NicSdramLayout;
import org.qnix.abi.ProtectionTableLayout;
import org.qnix.abi.VniContext;
import org.qnix.abi.VniLayout;

/**
 * Reads a Send or Receive Context and the page table it names (thesis 3.5.2, Send steps 2.2-2.3) out
 * of a process's Virtual Network Interface, which the process may have filled with anything. Every
 * field is checked, and every page address against the Translation and Protection Table (DESIGN.md 8,
 * item 10), before any byte moves: a bad context yields {@link Doorbell#BAD_CONTEXT}, a page the
 * process has not locked {@link Doorbell#PROTECTION}.
 */
final class ContextReader
{
    private final AtomicBuffer sdram;
    private final NicSdramLayout layout;
    private final VniLayout vni;
    private final int pageSize;
    private final int maxMessage;
    private final int descriptors;
    private final int poolPages;
    private final long hostBytes;
    private final int shortThreshold;
    private final VniContext context = new VniContext();
    private final ContextRegionDescriptor region = new ContextRegionDescriptor();

    ContextReader(final AtomicBuffer sdram, final NicSdramLayout layout)
    {
        final ClusterParameters params = layout.parameters();
        this.sdram = sdram;
        this.layout = layout;
        this.vni = layout.vni();
        this.pageSize = params.pageSize();
        this.maxMessage = params.maxMessageBytes();
        this.descriptors = params.descriptorsPerRegion();
        this.poolPages = params.bufferPoolPages();
        this.hostBytes = params.hostMemoryBytes();
        this.shortThreshold = params.shortThreshold();
    }

    /**
     * Send steps 2.2-2.3 for every kind of send: the message a Send Context describes, as a page list
     * whose {@code firstLength} is the first packet's length. A short message's bytes are in the Context
     * Region, so its list has no pages and one packet holds it all.
     *
     * @return 0, or the error doorbell to complete the operation with.
     */
    int readMessage(final int processIndex, final int nicPid, final int context, final boolean isShort,
        final PageList into)
    {
        final int contextAddress = sendContextAddress(processIndex, context);
        final int length = length(contextAddress);
        if (length < 0 || isShort && length > shortThreshold)
        {
            return Doorbell.BAD_CONTEXT;
        }
        if (isShort)
        {
            into.clear();
            into.length = length;
            into.firstLength = length;
        }
        else
        {
            final int check = readBuffer(processIndex, nicPid, contextAddress, sendRegionAddress(processIndex, context),
                length, into);
            if (0 != check)
            {
                return check;
            }
        }
        final int packets = MessageGeometry.packets(length, into.firstLength, pageSize);
        return packets < 0 || packets > 0xFFFF ? Doorbell.BAD_CONTEXT : 0;
    }

    int sendContextAddress(final int processIndex, final int context)
    {
        return (int)(layout.vniOffset(processIndex) + vni.sendContextOffset(context));
    }

    int receiveContextAddress(final int processIndex, final int context)
    {
        return (int)(layout.vniOffset(processIndex) + vni.receiveContextOffset(context));
    }

    int sendRegionAddress(final int processIndex, final int context)
    {
        return (int)(layout.vniOffset(processIndex) + vni.sendContextRegionOffset(context));
    }

    int receiveRegionAddress(final int processIndex, final int context)
    {
        return (int)(layout.vniOffset(processIndex) + vni.receiveContextRegionOffset(context));
    }

    /** @return the Len field, or -1 if it is outside 0..max message size. */
    int length(final int contextAddress)
    {
        final long len = context.wrap(sdram, contextAddress).length();
        return len < 0 || len > maxMessage ? -1 : (int)len;
    }

    /**
     * Fills {@code into} with the buffer of a context: from its Context Region or from the Buffer Pool.
     *
     * @return 0, or the error doorbell to complete the operation with.
     */
    int readBuffer(final int processIndex, final int nicPid, final int contextAddress, final int regionAddress,
        final int length, final PageList into)
    {
        into.clear();
        into.length = length;
        final int poolIndex = context.wrap(sdram, contextAddress).bufferPoolIndex();
        if (0 == length)
        {
            return 0;
        }
        if (ContextLayout.NO_BUFFER_POOL == poolIndex)
        {
            return readRegion(nicPid, contextAddress, regionAddress, length, into);
        }
        final int pages = (length + pageSize - 1) / pageSize;
        if (poolIndex < 0 || poolIndex > poolPages - pages)
        {
            return Doorbell.BAD_CONTEXT;
        }
        final int pool = (int)(layout.vniOffset(processIndex) + vni.bufferPoolOffset());
        for (int i = 0; i < pages; i++)
        {
            // Writer: the driver, before its reply to the process's qx_buffer_pool, so before the command
            // this read follows. Any value is checked: the page must be locked by this process.
            final long address = sdram.getLong(pool + (poolIndex + i) * VniLayout.BUFFER_POOL_ENTRY_LENGTH);
            final int check = checkPage(nicPid, address);
            if (0 != check)
            {
                return check;
            }
            into.pageAddresses[i] = address;
        }
        into.pages = pages;
        into.firstOffset = 0;
        into.firstLength = Math.min(pageSize, length);
        return 0;
    }

    private int readRegion(
        final int nicPid, final int contextAddress, final int regionAddress, final int length, final PageList into)
    {
        final int pages = context.wrap(sdram, contextAddress).pages();
        region.wrap(sdram, regionAddress);
        if (pages < 1 || pages > descriptors || pages > into.pageAddresses.length)
        {
            return Doorbell.BAD_CONTEXT;
        }
        long total = 0;
        for (int i = 0; i < pages; i++)
        {
            final long address = region.address(i);
            final int offset = region.offsetInPage(i);
            final int len = region.length(i);
            if (!region.isValid(i) || len < 1 || offset >= pageSize || len > pageSize - offset)
            {
                return Doorbell.BAD_CONTEXT;
            }
            // One run of bytes: the first page to its end, middle pages whole, the last from its start.
            final boolean first = 0 == i;
            final boolean last = pages - 1 == i;
            if (!first && 0 != offset || !last && offset + len != pageSize)
            {
                return Doorbell.BAD_CONTEXT;
            }
            final int check = checkPage(nicPid, address);
            if (0 != check)
            {
                return check;
            }
            into.pageAddresses[i] = address;
            if (first)
            {
                into.firstOffset = offset;
                into.firstLength = len;
            }
            total += len;
        }
        if (total != length)
        {
            return Doorbell.BAD_CONTEXT;
        }
        into.pages = pages;
        return 0;
    }

    /**
     * The check again at the moment of a DMA write: the process may have unlocked or freed the page
     * after posting its receive, and the driver may already have given it to someone else.
     *
     * @return true if the page holding {@code address} is still locked by the process.
     */
    boolean isLockedBy(final int nicPid, final long address)
    {
        return 0 == checkPage(nicPid, address - address % pageSize);
    }

    /** DESIGN.md 8, item 10: the page must be one the driver locked for this very process. */
    private int checkPage(final int nicPid, final long address)
    {
        if (address <= 0 || address % pageSize != 0 || address > hostBytes - pageSize)
        {
            return Doorbell.PROTECTION;
        }
        // Writer: the driver, when it hands out, locks, unlocks or takes back the page.
        final int entry = sdram.getIntVolatile((int)layout.protectionEntryOffset(address));
        if (ProtectionTableLayout.owner(entry) != nicPid || ProtectionTableLayout.lockCount(entry) == 0)
        {
            return Doorbell.PROTECTION;
        }
        return 0;
    }
}
