package org.qnix.tools;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a pcapng file (IETF draft-ietf-opsawg-pcapng): a Section Header Block, one Interface
 * Description Block per traced NIC (link type {@link #LINKTYPE_USER0}, nanosecond timestamps, the
 * NIC's name), then one Enhanced Packet Block per packet. Wireshark reads it; {@code tools/wireshark/qnix.lua}
 * decodes the packets.
 *
 * <pre>{@code
 * try (PcapNgWriter pcap = new PcapNgWriter(Path.of("t.pcapng"), "qnix trace")) {
 *     int nic = pcap.addInterface("node 0-0", 65535);
 *     pcap.writePacket(nic, epochNanos, bytes, 0, bytes.length, originalLength);
 * }
 * }</pre>
 */
public final class PcapNgWriter implements AutoCloseable
{
    /** LINKTYPE_USER0: a link type for private use; the QNIX dissector claims it. */
    public static final int LINKTYPE_USER0 = 147;
    static final int SECTION_HEADER = 0x0A0D0D0A;
    static final int INTERFACE_DESCRIPTION = 1;
    static final int ENHANCED_PACKET = 6;
    static final int BYTE_ORDER_MAGIC = 0x1A2B3C4D;
    private static final short OPT_END = 0;
    private static final short OPT_NAME = 2;
    private static final short OPT_TSRESOL = 9;
    private static final short OPT_USERAPPL = 4;

    private final OutputStream out;
    private final ByteBuffer block = ByteBuffer.allocate(128 * 1024).order(ByteOrder.LITTLE_ENDIAN);
    private int interfaces;

    public PcapNgWriter(final Path file, final String application) throws IOException
    {
        out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
        begin(SECTION_HEADER);
        block.putInt(BYTE_ORDER_MAGIC).putShort((short)1).putShort((short)0).putLong(-1L);
        option(OPT_USERAPPL, application.getBytes(StandardCharsets.UTF_8));
        block.putShort(OPT_END).putShort((short)0);
        end();
    }

    /** @return the interface id to write this NIC's packets with. */
    public int addInterface(final String name, final int snapLength) throws IOException
    {
        begin(INTERFACE_DESCRIPTION);
        block.putShort((short)LINKTYPE_USER0).putShort((short)0).putInt(snapLength);
        option(OPT_NAME, name.getBytes(StandardCharsets.UTF_8));
        option(OPT_TSRESOL, new byte[] {9});
        block.putShort(OPT_END).putShort((short)0);
        end();
        return interfaces++;
    }

    public void writePacket(final int interfaceId, final long epochNanos, final byte[] data, final int offset,
        final int length, final int originalLength) throws IOException
    {
        begin(ENHANCED_PACKET);
        block.putInt(interfaceId).putInt((int)(epochNanos >>> 32)).putInt((int)epochNanos).putInt(length)
            .putInt(originalLength).put(data, offset, length);
        pad();
        end();
    }

    public void flush() throws IOException
    {
        out.flush();
    }

    public void close() throws IOException
    {
        out.close();
    }

    private void begin(final int type)
    {
        block.clear();
        block.putInt(type).putInt(0);
    }

    private void option(final short code, final byte[] value)
    {
        block.putShort(code).putShort((short)value.length).put(value);
        pad();
    }

    private void pad()
    {
        while ((block.position() & 3) != 0)
        {
            block.put((byte)0);
        }
    }

    private void end() throws IOException
    {
        final int length = block.position() + Integer.BYTES;
        block.putInt(length);
        block.putInt(Integer.BYTES, length);
        out.write(block.array(), 0, length);
    }
}
