package org.qnix.firmware;

import org.qnix.abi.ViplDescriptor;

/**
 * What the NIC keeps of a checked descriptor while it works on it (issue 14): its control fields and
 * data segments, copied once from host memory by {@link ViaDescriptors#read}, so that the process
 * cannot change a segment between the check and the copy it allows. One per work queue of a VI and
 * one for posting checks; reused, never allocated on the data path.
 */
final class ViaDescriptorCopy
{
    int handle;
    int offset;
    int control;
    int segmentCount;
    int immediateData;
    int length;
    /** RDMA: the address segment's remote address and memory handle. */
    long remoteAddress;
    int remoteHandle;
    /** Sum of the data segments' lengths: what a receive can hold, what a send carries. */
    long segmentBytes;
    final long[] segmentAddress = new long[ViplDescriptor.MAX_SEGMENTS];
    final int[] segmentHandle = new int[ViplDescriptor.MAX_SEGMENTS];
    final int[] segmentLength = new int[ViplDescriptor.MAX_SEGMENTS];

    /** Segment cursor: where the next byte of the message is read or written. */
    int segment;
    int segmentOffset;

    void rewind()
    {
        segment = 0;
        segmentOffset = 0;
    }

    /** @return the bytes left in the current segment, skipping empty ones; 0 at the end. */
    int segmentRemaining()
    {
        while (segment < segmentCount && segmentOffset >= segmentLength[segment])
        {
            segment++;
            segmentOffset = 0;
        }
        return segment < segmentCount ? segmentLength[segment] - segmentOffset : 0;
    }

    long cursorAddress()
    {
        return segmentAddress[segment] + segmentOffset;
    }

    int cursorHandle()
    {
        return segmentHandle[segment];
    }

    void advance(final int bytes)
    {
        segmentOffset += bytes;
    }
}
