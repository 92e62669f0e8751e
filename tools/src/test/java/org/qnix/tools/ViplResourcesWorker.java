package org.qnix.tools;

import org.qnix.vipl.CompletionQueue;
import org.qnix.vipl.MemoryAttributes;
import org.qnix.vipl.ProtectionTag;
import org.qnix.vipl.Reliability;
import org.qnix.vipl.ViAttributes;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplMemory;
import org.qnix.vipl.ViplNic;

/**
 * A VIA process for {@link ViplResourcesTest}: opens NIC {@code args[1]} of cluster {@code args[0]},
 * takes a ptag, two regions of one memory, a CQ and two VIs, says "ready" and waits to be killed.
 */
public final class ViplResourcesWorker
{
    private ViplResourcesWorker()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final ViplNic nic = Vipl.openNic(args[1], args[0]);
        final ProtectionTag ptag = nic.createPtag();
        final ViplMemory memory = nic.allocate(3 * nic.parameters().pageSize());
        nic.registerMem(memory, 0, memory.length(), new MemoryAttributes(ptag, true, false));
        nic.registerMem(memory, 100, 200, new MemoryAttributes(ptag, false, false));
        final CompletionQueue cq = nic.createCq(32);
        final ViAttributes attributes = new ViAttributes(Reliability.RELIABLE_DELIVERY, 4096, ptag, false, false);
        nic.createVi(attributes, cq, cq);
        nic.createVi(attributes, null, cq);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
