package org.qnix.tools;

import java.util.ArrayList;
import java.util.List;

import org.qnix.abi.ProcessName;
import org.qnix.lib.Qnix;
import org.qnix.lib.QnixBuffer;
import org.qnix.lib.QnixException;

/**
 * A user process that allocates 4 KiB buffers, scattered and contiguous in turn, until the library
 * refuses one, for {@link MappingLimitTest}. It prints how many it got and the refusal, then frees one
 * and allocates again, which must work. Exit 0: refused with a {@link QnixException}; 2: something else.
 *
 * <pre>
 * java -Dqnix.maxMappings=200 ... org.qnix.tools.BufferLoopWorker CLUSTER AI
 * </pre>
 */
public final class BufferLoopWorker
{
    private BufferLoopWorker()
    {
    }

    public static void main(final String[] args)
    {
        final int ai = Integer.parseInt(args[1]);
        try (Qnix qnix = Qnix.options().name(new ProcessName(ai, 0)).group(ai, 1).cluster(args[0]).node("0-0").init())
        {
            final List<QnixBuffer> buffers = new ArrayList<>();
            try
            {
                while (true)
                {
                    buffers.add(qnix.allocateBuffer(4096, 0, buffers.size() % 2 == 0));
                }
            }
            catch (final QnixException ex)
            {
                System.out.println("refused after " + buffers.size() + " buffers: " + ex.getMessage());
            }
            buffers.remove(buffers.size() - 1).close();
            buffers.add(qnix.allocateBuffer(4096, 0, false));
            System.out.println("after freeing one: allocated again");
        }
        catch (final RuntimeException | Error ex)
        {
            ex.printStackTrace(System.out);
            System.exit(2);
        }
    }
}
