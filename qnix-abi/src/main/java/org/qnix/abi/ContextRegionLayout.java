package org.qnix.abi;

/**
 * A Context Region: K Descriptors, one per host page of the buffer (thesis 3.3.1). A short message's
 * data is written into the Context Region itself instead (programmed I/O).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |              Address: physical page address (64 bits)         |
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |     Offset in page (16 bits)  |       Flag (16 bits)          |
 *  +-------------------------------+-------------------------------+
 *  |                     Len: bytes used in the page               |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ContextRegionLayout
{
    public static final int ADDRESS_OFFSET = 0;
    public static final int OFFSET_OFFSET = ADDRESS_OFFSET + Long.BYTES;
    public static final int FLAG_OFFSET = OFFSET_OFFSET + Short.BYTES;
    public static final int LEN_OFFSET = FLAG_OFFSET + Short.BYTES;
    public static final int DESCRIPTOR_LENGTH = LEN_OFFSET + Integer.BYTES;

    /** Flag value of a Descriptor the process has filled in. */
    public static final short FLAG_VALID = 1;

    private ContextRegionLayout()
    {
    }

    public static int regionLength(final ClusterParameters params)
    {
        return params.descriptorsPerRegion() * DESCRIPTOR_LENGTH;
    }
}
