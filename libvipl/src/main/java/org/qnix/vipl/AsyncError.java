package org.qnix.vipl;

import org.qnix.abi.ViaProcessStructuresLayout;

/**
 * An asynchronous error ({@code VIP_ERROR_DESCRIPTOR} of VIPL 1.0) as {@link ViplNic#onError} hands it
 * to the handler: the NIC reported something no call was waiting for (a connection lost, a CQ
 * overflowed, a descriptor it could not read or complete), through the async-event ring of the VIA
 * Process Structures; or the library saw the NIC stop, or the ring itself overflow.
 *
 * <pre>{@code
 * nic.onError(error ->
 * {
 *     if (AsyncError.Code.CONN_LOST == error.code()) { reconnect(error.vi()); }
 * });
 * }</pre>
 *
 * @param nic              the NIC that reported it.
 * @param resource         what the error is about ({@code VIP_RESOURCE_*}).
 * @param code             what happened ({@code VIP_ERROR_*}).
 * @param vi               the VI concerned, or null (a NIC-wide event, or a VI destroyed since).
 * @param cq               the CQ concerned (resource CQ), or null.
 * @param descriptorHandle the memory handle of the descriptor concerned (resource DESCRIPTOR), else 0.
 * @param descriptorOffset that descriptor's offset from its region's base, else 0.
 * @param op               the operation of the descriptor ({@code VIP_OP_*}, as the NIC reported it).
 * @param eventsLost       true for the library's own report that the ring overflowed: the NIC dropped
 *                         events because this process took them too slowly.
 */
public record AsyncError(ViplNic nic, Resource resource, Code code, Vi vi, CompletionQueue cq, int descriptorHandle,
    int descriptorOffset, int op, boolean eventsLost)
{
    /** {@code VIP_RESOURCE_CODE}, in vipl.h's order. */
    public enum Resource
    {
        NIC,
        VI,
        CQ,
        DESCRIPTOR;

        private static final Resource[] VALUES = values();

        /** @return the resource of a NIC event's code ({@code ViaProcessStructuresLayout.RESOURCE_*}); NIC if unknown. */
        static Resource of(final int code)
        {
            return code >= 0 && code < VALUES.length ? VALUES[code] : NIC;
        }
    }

    /** {@code VIP_ERROR_CODE}, in vipl.h's order (the NIC's {@code ViaProcessStructuresLayout.ERROR_*}). */
    public enum Code
    {
        POST_DESC,
        CONN_LOST,
        RECVQ_EMPTY,
        VI_OVERRUN,
        RDMAW_PROT,
        RDMAW_DATA,
        RDMAW_ABORT,
        RDMAR_PROT,
        COMP_PROT,
        RDMA_TRANSPORT,
        CATASTROPHIC;

        private static final Code[] VALUES = values();

        /** @return the code of a NIC event's error word; CATASTROPHIC if unknown. */
        static Code of(final int code)
        {
            return code >= 0 && code < VALUES.length ? VALUES[code] : CATASTROPHIC;
        }

        static
        {
            // The NIC writes the vipl.h values; the enum's order must stay theirs.
            if (ViaProcessStructuresLayout.ERROR_CATASTROPHIC != CATASTROPHIC.ordinal() ||
                ViaProcessStructuresLayout.ERROR_CONN_LOST != CONN_LOST.ordinal())
            {
                throw new ExceptionInInitializerError("AsyncError.Code is out of vipl.h's order");
            }
        }
    }

    /** @return one line for a log: what, on which resource, of which NIC. */
    public String describe()
    {
        final StringBuilder line = new StringBuilder("VIPL asynchronous error on NIC ").append(nic.node()).append(": ")
            .append(code).append(" (resource ").append(resource);
        if (null != vi)
        {
            line.append(", VI ").append(vi.index());
        }
        if (null != cq)
        {
            line.append(", CQ ").append(cq.index());
        }
        if (Resource.DESCRIPTOR == resource)
        {
            line.append(", descriptor at offset ").append(descriptorOffset).append(" of region ").append(descriptorHandle);
        }
        line.append(')');
        if (eventsLost)
        {
            line.append(": the async event ring overflowed, earlier events were lost");
        }
        return line.toString();
    }
}
