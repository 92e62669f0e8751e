/**
 * PCIComm (seed 000; issue 15): connections between two processes that move buffers without copying
 * them, built on the VIPL. {@link org.qnix.pcicomm.PciComm} makes connections,
 * {@link org.qnix.pcicomm.PciConnection} carries them, {@link org.qnix.pcicomm.PciCommMessage} is the
 * control protocol's layout.
 */
package org.qnix.pcicomm;
