package org.qnix.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.qnix.lib.GroupMember;
import org.qnix.lib.Qnix;

/**
 * The first QNIX program: registers with its NIC (qx_init), prints its name, its node and the members
 * of its group as its NIC knows them, and de-registers (qx_end). Run it with
 * {@code ./qnix run -n 8 -- Hello}.
 *
 * <p>{@code --hold-while FILE} keeps it registered while FILE exists, so that
 * {@code qnix cluster status} can be looked at meanwhile.
 */
public final class Hello
{
    private static final long MAX_HOLD_MS = 10 * 60 * 1000;

    private Hello()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Path hold = null;
        for (int i = 0; i < args.length; i++)
        {
            if ("--hold-while".equals(args[i]) && i + 1 < args.length)
            {
                hold = Path.of(args[++i]);
            }
            else
            {
                System.err.println("usage: Hello [--hold-while FILE]");
                System.exit(2);
            }
        }

        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            final List<GroupMember> members = qnix.groupMembers(qnix.name().ai());
            System.out.println("Hello from " + qnix.name() + " on node " + qnix.node() + " (NIC PID " +
                qnix.nicPid() + "); group " + qnix.name().ai() + " has " + members.size() + " members: " + members);
            if (null != hold)
            {
                final long deadline = System.currentTimeMillis() + MAX_HOLD_MS;
                while (Files.exists(hold) && System.currentTimeMillis() < deadline)
                {
                    Thread.sleep(20);
                }
            }
        }
    }
}
