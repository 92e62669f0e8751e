package org.qnix.firmware;

/**
 * How a message of a given length is cut into packets (thesis 3.5, TX step 4: a packet never crosses
 * a host page boundary, so there is one packet per page of the sender's buffer). Packet 0 holds the
 * first-packet length, every later packet a whole page except the last. The sender announces the
 * length and the first-packet length in its Permission_Request; both NICs derive the rest from them.
 */
final class MessageGeometry
{
    private MessageGeometry()
    {
    }

    /** @return the number of packets, or -1 if the two lengths cannot describe a message. */
    static int packets(final int length, final int firstPacketLength, final int pageSize)
    {
        if (0 == length)
        {
            return 0 == firstPacketLength ? 0 : -1;
        }
        if (firstPacketLength < 1 || firstPacketLength > pageSize || firstPacketLength > length)
        {
            return -1;
        }
        final int rest = length - firstPacketLength;
        return 1 + (rest + pageSize - 1) / pageSize;
    }

    /** @return where packet {@code packet} starts in the message. */
    static int offset(final int packet, final int firstPacketLength, final int pageSize)
    {
        return 0 == packet ? 0 : firstPacketLength + (packet - 1) * pageSize;
    }

    static int packetLength(final int packet, final int length, final int firstPacketLength, final int pageSize)
    {
        if (0 == packet)
        {
            return firstPacketLength;
        }
        return Math.min(pageSize, length - offset(packet, firstPacketLength, pageSize));
    }
}
