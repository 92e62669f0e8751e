package org.qnix.pcicomm;

import org.qnix.abi.ViplDescriptor;

/**
 * The control region of a connection: one registered region of this process's DMA memory that holds
 * the VI's descriptors and the control messages ({@link PciCommMessage}) they carry. The library
 * writes a send slot's message and descriptor, then posts it (the Command Queue entry is the release
 * the NIC reads them after); the NIC writes a receive slot's message by DMA and the descriptor's
 * status last, with release, and the library reads the message after that status. Receive slots
 * stay posted (reposted as soon as taken); send slots are reused in a ring in posting order.
 *
 * <pre>
 *  +---------------------------------------------------------------+ 0
 *  |  Receive descriptors: RECEIVE_SLOTS x DESCRIPTOR_BYTES        |
 *  +---------------------------------------------------------------+ SEND_DESCRIPTORS_OFFSET
 *  |  Send descriptors: SEND_SLOTS x DESCRIPTOR_BYTES              |
 *  +---------------------------------------------------------------+ RECEIVE_MESSAGES_OFFSET
 *  |  Receive messages: RECEIVE_SLOTS x PciCommMessage.MAX_LENGTH  |
 *  +---------------------------------------------------------------+ SEND_MESSAGES_OFFSET
 *  |  Send messages: SEND_SLOTS x PciCommMessage.MAX_LENGTH        |
 *  +---------------------------------------------------------------+ LENGTH
 * </pre>
 *
 * <p>Slot {@code i}'s descriptor and message go together: a receive descriptor's data segment is
 * receive message {@code i}, a control send's is send message {@code i}.
 *
 * <pre>{@code
 * ViplMemory control = nic.allocate(ControlRegionLayout.LENGTH);
 * Descriptor receive = control.descriptor(ControlRegionLayout.receiveDescriptorOffset(slot));
 * PciCommMessage m = new PciCommMessage().wrap(control.buffer(), ControlRegionLayout.receiveMessageOffset(slot));
 * }</pre>
 */
final class ControlRegionLayout
{
    /** Receive descriptors each end keeps posted: the credits of the peer ({@link CreditWindow}). */
    static final int RECEIVE_SLOTS = 32;
    /** Send descriptors in flight at most. */
    static final int SEND_SLOTS = 64;
    static final int DESCRIPTOR_BYTES = ViplDescriptor.ALIGNMENT;

    static final int RECEIVE_DESCRIPTORS_OFFSET = 0;
    static final int SEND_DESCRIPTORS_OFFSET = RECEIVE_DESCRIPTORS_OFFSET + RECEIVE_SLOTS * DESCRIPTOR_BYTES;
    static final int RECEIVE_MESSAGES_OFFSET = SEND_DESCRIPTORS_OFFSET + SEND_SLOTS * DESCRIPTOR_BYTES;
    static final int SEND_MESSAGES_OFFSET = RECEIVE_MESSAGES_OFFSET + RECEIVE_SLOTS * PciCommMessage.MAX_LENGTH;
    static final int LENGTH = SEND_MESSAGES_OFFSET + SEND_SLOTS * PciCommMessage.MAX_LENGTH;

    /** Entries the connection's CQ needs for every descriptor that can be posted at once. */
    static final int CQ_ENTRIES = 2 * (RECEIVE_SLOTS + SEND_SLOTS);

    private ControlRegionLayout()
    {
    }

    static int receiveDescriptorOffset(final int slot)
    {
        return RECEIVE_DESCRIPTORS_OFFSET + slot * DESCRIPTOR_BYTES;
    }

    static int sendDescriptorOffset(final int slot)
    {
        return SEND_DESCRIPTORS_OFFSET + slot * DESCRIPTOR_BYTES;
    }

    static int receiveMessageOffset(final int slot)
    {
        return RECEIVE_MESSAGES_OFFSET + slot * PciCommMessage.MAX_LENGTH;
    }

    static int sendMessageOffset(final int slot)
    {
        return SEND_MESSAGES_OFFSET + slot * PciCommMessage.MAX_LENGTH;
    }
}
