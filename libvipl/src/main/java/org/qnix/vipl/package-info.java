/**
 * The VI Provider Library (VIPL 1.0, issue 14) on the emulated QNIX NIC: {@code Vip*} functions as Java
 * objects, {@code VipOpenNic} as {@link org.qnix.vipl.Vipl#openNic}. This is the library's foundation:
 * opening a NIC, ptags, DMA memory and its registration, completion queues and VIs in state Idle,
 * each through the node's driver (VIA's kernel agent). Connections and data transfer come later.
 */
package org.qnix.vipl;
