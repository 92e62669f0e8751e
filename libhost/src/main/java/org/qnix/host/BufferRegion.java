package org.qnix.host;

/**
 * A region of host memory the driver handed a process (a buffer or the Buffer Pool): its id for later
 * requests and the physical address of each of its pages, in the order the process maps them.
 */
public record BufferRegion(int id, long[] pages)
{
}
