package org.qnix.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/**
 * The cores a bench run reports: samples of one label add up over passes, a span shorter than a tick
 * prints {@code na}, and the idle sample is taken from the machine itself.
 */
class CoresBusyTest
{
    @Test
    void samplesOfOneLabelAddUpOverPasses()
    {
        final CoresBusy cores = new CoresBusy();
        // Pass 1: 50 of 100 ticks busy; pass 2: 150 of 200. Together 200 of 300 on 2 CPUs.
        cores.add("qnix", new CpuSample(0, 0, 2), new CpuSample(50, 100, 2));
        cores.add("qnix", new CpuSample(1_000, 1_000, 2), new CpuSample(1_150, 1_200, 2));

        assertEquals(2.0 * 200 / 300, cores.of("qnix"), 1e-9);
    }

    @Test
    void aSpanWithoutATickOrAnUnknownSamplePrintsNa()
    {
        final CoresBusy cores = new CoresBusy();
        cores.add("tcp", new CpuSample(5, 10, 2), new CpuSample(5, 10, 2));
        cores.add("relay", new CpuSample(-1, -1, 0), new CpuSample(5, 10, 2));
        cores.add("qnix", new CpuSample(0, 0, 2), new CpuSample(100, 100, 2));

        assertTrue(Double.isNaN(cores.of("tcp")));
        assertTrue(Double.isNaN(cores.of("relay")));
        assertTrue(Double.isNaN(cores.of("never sampled")));
        final String printed = print(cores);
        assertTrue(printed.contains("BENCH kind=cores what=tcp busy_cores=na"), printed);
        assertTrue(printed.contains("BENCH kind=cores what=relay busy_cores=na"), printed);
        assertTrue(printed.contains("BENCH kind=cores what=qnix busy_cores=2.000"), printed);
    }

    @Test
    void theIdleSampleIsTheMachinesOwnUnderItsLabel() throws InterruptedException
    {
        final CoresBusy cores = new CoresBusy();

        cores.sampleIdle(200);

        // /proc/stat ticks every 10 ms: 200 ms span some, whoever was busy meanwhile.
        final double idle = cores.of(CoresBusy.IDLE);
        final int cpus = CpuSample.now().cpus();
        assertTrue(idle >= 0 && idle <= cpus, "idle " + idle + " of " + cpus + " cores");
        assertTrue(print(cores).contains("BENCH kind=cores what=idle-cluster busy_cores="));
    }

    private static String print(final CoresBusy cores)
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        cores.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
