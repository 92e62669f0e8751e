package org.qnix.pcicomm;

/**
 * The exported queue (seed 000, 5.2.2): the peer's preposted buffers as its EXPORT messages named them,
 * (VIA address, memory handle, length), oldest first; the sender fills them in this order, one RDMA
 * write each. A ring of primitive columns that grows when the peer has exported more than it holds,
 * so the data path allocates nothing once it has grown. It holds at most {@link #MAX_EXPORTS}: an end
 * never has more buffers preposted and unfilled ({@link PciCommDevice#prepost}), so a peer that names
 * more is broken or hostile, and is refused before it can grow this end's memory without limit.
 *
 * <pre>{@code
 * if (!exports.canTake(count)) { fail(...); }
 * exports.add(address, handle, 4096);
 * if (!exports.isEmpty()) { long a = exports.address(); int h = exports.handle(); int n = exports.length(); exports.remove(); }
 * }</pre>
 */
final class RemoteExports
{
    /** The most buffers an end may have preposted and not yet filled: a rule of the protocol, both ends. */
    static final int MAX_EXPORTS = 1 << 16;

    private long[] addresses = new long[64];
    private int[] handles = new int[64];
    private int[] lengths = new int[64];
    private long head;
    private long tail;

    /** @throws IllegalStateException past {@link #MAX_EXPORTS}: the caller checks {@link #canTake} first. */
    void add(final long address, final int handle, final int length)
    {
        if (size() == MAX_EXPORTS)
        {
            throw new IllegalStateException("more than " + MAX_EXPORTS + " exports");
        }
        if (tail - head == addresses.length)
        {
            grow();
        }
        final int i = index(tail++);
        addresses[i] = address;
        handles[i] = handle;
        lengths[i] = length;
    }

    /** @return true if {@code count} more exports stay within {@link #MAX_EXPORTS}. */
    boolean canTake(final int count)
    {
        return count >= 0 && count <= MAX_EXPORTS - size();
    }

    boolean isEmpty()
    {
        return head == tail;
    }

    int size()
    {
        return (int)(tail - head);
    }

    long address()
    {
        return addresses[index(head)];
    }

    int handle()
    {
        return handles[index(head)];
    }

    int length()
    {
        return lengths[index(head)];
    }

    void remove()
    {
        head++;
    }

    /** @return the bytes all exports still unfilled can take. */
    long bytes()
    {
        long bytes = 0;
        for (long p = head; p < tail; p++)
        {
            bytes += lengths[index(p)];
        }
        return bytes;
    }

    private int index(final long position)
    {
        return (int)(position % addresses.length);
    }

    private void grow()
    {
        final int size = size();
        final long[] a = new long[addresses.length * 2];
        final int[] h = new int[a.length];
        final int[] l = new int[a.length];
        for (int i = 0; i < size; i++)
        {
            a[i] = addresses[index(head + i)];
            h[i] = handles[index(head + i)];
            l[i] = lengths[index(head + i)];
        }
        addresses = a;
        handles = h;
        lengths = l;
        head = 0;
        tail = size;
    }
}
