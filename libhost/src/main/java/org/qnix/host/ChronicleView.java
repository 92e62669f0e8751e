package org.qnix.host;

import java.nio.ByteBuffer;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;

/**
 * A Chronicle Bytes view of mapped memory (DESIGN.md 1: the user-facing zero-copy view of a buffer).
 * Kept apart so that Chronicle is loaded only by a program that asks for {@code bytes()}. The store
 * wraps the memory without owning it: releasing the view never frees or unmaps it.
 */
final class ChronicleView
{
    private final BytesStore<?, ByteBuffer> store;
    private final Bytes<ByteBuffer> bytes;

    ChronicleView(final ByteBuffer memory)
    {
        // A duplicate, so that the position and limit of the caller's ByteBuffer are not shared.
        store = BytesStore.wrap(memory.duplicate().order(memory.order()));
        bytes = store.bytesForWrite();
    }

    Bytes<?> bytes()
    {
        return bytes;
    }

    /** Releases the view before its memory is unmapped; using it afterwards throws. */
    void release()
    {
        bytes.releaseLast();
        if (store.refCount() > 0)
        {
            store.releaseLast();
        }
    }
}
