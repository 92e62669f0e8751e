package org.qnix.firmware;

/**
 * Where each packet of an incoming message goes in the receiver's buffer (thesis 3.3.3, Figure 6):
 * one or two consecutive receive Descriptors per packet, since sender and receiver buffers need not
 * share an alignment. Bytes beyond the receive buffer are not delivered (the receive completes
 * truncated, DESIGN.md 8, item 3). Preallocated per Receive Context for K packets.
 */
final class DescriptorMap
{
    final long[] firstAddress;
    final int[] firstLength;
    final long[] secondAddress;
    final int[] secondLength;
    int packets;

    DescriptorMap(final int capacity)
    {
        firstAddress = new long[capacity];
        firstLength = new int[capacity];
        secondAddress = new long[capacity];
        secondLength = new int[capacity];
    }

    /**
     * Thesis 3.5.1, Permission_Request step 3 and Receive step 5.
     *
     * @return false if the message has more packets than the map can hold.
     */
    boolean build(final PageList receive, final int length, final int firstPacketLength, final int packetCount,
        final int pageSize)
    {
        if (packetCount > firstAddress.length)
        {
            return false;
        }
        packets = packetCount;
        for (int i = 0; i < packetCount; i++)
        {
            final int offset = MessageGeometry.offset(i, firstPacketLength, pageSize);
            final int deliver = Math.max(0,
                Math.min(MessageGeometry.packetLength(i, length, firstPacketLength, pageSize), receive.length - offset));
            if (0 == deliver)
            {
                firstLength[i] = 0;
                secondLength[i] = 0;
                continue;
            }
            final int first = Math.min(deliver, receive.contiguousFrom(offset, pageSize));
            firstAddress[i] = receive.address(offset, pageSize);
            firstLength[i] = first;
            if (first < deliver)
            {
                secondAddress[i] = receive.address(offset + first, pageSize);
                secondLength[i] = deliver - first;
            }
            else
            {
                secondLength[i] = 0;
            }
        }
        return true;
    }
}
