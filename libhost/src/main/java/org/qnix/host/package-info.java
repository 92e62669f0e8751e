/**
 * The host side that every user library of a node stands on, and nothing of any one API: the driver
 * socket's client ({@link org.qnix.host.DriverProxy}), pages of host memory mapped as a process's MMU
 * would ({@link org.qnix.host.HostMemoryMapping}, {@link org.qnix.host.MappedViews}), page tables
 * ({@link org.qnix.host.PageTable}), waiting on a word the NIC writes
 * ({@link org.qnix.host.DoorbellWait}, {@link org.qnix.host.DoorbellWaiter}, {@link org.qnix.host.BackOff},
 * {@link org.qnix.host.NicHeartbeat}) and keeping a registration's mappings alive while a call is inside
 * them ({@link org.qnix.host.MappingGuard}). libqnix (QNIX, thesis 3.6) and libvipl (VIA) both depend on
 * it and never on each other. A program uses {@code DoorbellWait} and {@code PageTable}; the rest is for
 * the libraries.
 */
package org.qnix.host;
