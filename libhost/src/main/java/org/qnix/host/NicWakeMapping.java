package org.qnix.host;

import org.agrona.CloseHelper;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.FileDescriptorBlock;
import org.qnix.abi.MappedFile;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicWakeLayout;
import org.qnix.abi.NicWakeUp;

/**
 * A user process's mappings of its node's {@code nic.wake} ({@link NicWakeLayout}): the file read-only
 * (its descriptor and the NIC's Asleep flag, which no process may forge) and the Wake Sequence's page
 * read-write, so that a process that posts work wakes a sleeping NIC ({@link NicWakeUp}).
 *
 * <pre>{@code
 * try (NicWakeMapping wake = NicWakeMapping.map(dir, node))
 * {
 *     commandQueue.publish(...);
 *     wake.wakeUp().ring();
 * }
 * }</pre>
 */
public final class NicWakeMapping implements AutoCloseable
{
    private final MappedFile file;
    private final MappedFile sequence;
    private final NicWakeUp wakeUp;

    private NicWakeMapping(final MappedFile file, final MappedFile sequence)
    {
        this.file = file;
        this.sequence = sequence;
        this.wakeUp = new NicWakeUp(file.buffer(), NicWakeLayout.ASLEEP_OFFSET, sequence.buffer(), 0);
    }

    /**
     * @throws IllegalStateException if the file is not a ready {@code nic.wake} of this layout version.
     */
    public static NicWakeMapping map(final ClusterDirectory dir, final NicCoordinates node)
    {
        MappedFile file = null;
        MappedFile sequence = null;
        try
        {
            file = MappedFile.mapReadOnly(dir.nicWake(node), 0, NicWakeLayout.FILE_LENGTH);
            FileDescriptorBlock.verify(file.buffer(), FileDescriptorBlock.TYPE_NIC_WAKE, dir.nicWake(node).toString());
            sequence = MappedFile.mapExisting(dir.nicWake(node), NicWakeLayout.WAKE_SEQUENCE_OFFSET, NicWakeLayout.PAGE);
            return new NicWakeMapping(file, sequence);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.closeAll(file, sequence);
            throw ex;
        }
    }

    /** @return the waker of the node's NIC over these mappings; valid until {@link #close()}. */
    public NicWakeUp wakeUp()
    {
        return wakeUp;
    }

    public void close()
    {
        CloseHelper.closeAll(file, sequence);
    }

    /**
     * Retires both mappings ({@link RetiredMemory}) instead of unmapping: for a close under running calls.
     * Where no overlay can be made, unmaps only if {@code mayUnmap}.
     *
     * @return true if both were retired (overlaid).
     */
    public boolean retire(final boolean mayUnmap)
    {
        final boolean file = RetiredMemory.retire(this.file, mayUnmap);
        return RetiredMemory.retire(sequence, mayUnmap) && file;
    }
}
