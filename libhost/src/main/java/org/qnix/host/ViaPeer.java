package org.qnix.host;

/**
 * The other end of a VIA connection as the driver's connection manager describes it (issue 14): a
 * VIA_CONNECTION_ASKED reply (with the request's handle) or a VIA_CONNECTED one (handle 0).
 *
 * @param node        the peer's NIC, packed coordinates.
 * @param reliability its VI's reliability level (vipl.h value).
 * @param maxTransfer its VI's max transfer size.
 * @param attributes  its VI's RDMA enables.
 */
public record ViaPeer(int handle, int node, int reliability, int maxTransfer, int attributes)
{
}
