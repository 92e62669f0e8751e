package org.qnix.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.HostClock;
import org.qnix.lib.GroupMember;
import org.qnix.lib.Qnix;

/**
 * The first QNIX program: registers with its NIC (qx_init), prints its name, its node and the members
 * of its group as its NIC knows them, waits in a barrier until every member has printed, and
 * de-registers (qx_end). Run it with {@code ./qnix run -n 8 -- Hello}.
 *
 * <p>qx_init returns once the whole group is registered, so every member lists all of them; the
 * barrier keeps one that finished first from leaving the group while another still reads it.
 *
 * <p>{@code --hold-while FILE} keeps it registered while FILE exists, so that
 * {@code qnix cluster status} can be looked at meanwhile.
 */
public final class Hello
{
    private static final long MAX_HOLD_MS = 10 * 60 * 1000;
    /** How long a member waits for the others to have printed (a hold ends for all at once). */
    private static final long BARRIER_S = 60;

    private Hello()
    {
    }

    /** Its one option, checked before anything starts. */
    public record Options(Path hold)
    {
        /** @throws IllegalArgumentException naming the bad option. */
        public static Options parse(final List<String> args)
        {
            Path hold = null;
            final Arguments a = new Arguments(args);
            while (a.hasNext())
            {
                if (!"--hold-while".equals(a.next()))
                {
                    throw a.unknown("Hello [--hold-while FILE]");
                }
                hold = Path.of(a.value());
            }
            return new Options(hold);
        }
    }

    public static void main(final String[] args) throws Exception
    {
        OneLineFailures.install("Hello");
        final Path hold = Arguments.parseOrExit("Hello", Options::parse, args).hold();

        try (Qnix qnix = Qnix.initFromEnvironment())
        {
            final List<GroupMember> members = qnix.groupMembers(qnix.name().ai());
            System.out.println("Hello from " + qnix.name() + " on node " + qnix.node() + " (NIC PID " +
                qnix.nicPid() + "); group " + qnix.name().ai() + " has " + members.size() + " members: " + members);
            if (null != hold)
            {
                final long deadline = HostClock.millis() + MAX_HOLD_MS;
                while (Files.exists(hold) && HostClock.millis() < deadline)
                {
                    Thread.sleep(20);
                }
            }
            qnix.awaitBarrier(qnix.name().ai(), Integer.parseInt(System.getenv(Qnix.ENV_GROUP_SIZE)), BARRIER_S,
                TimeUnit.SECONDS);
        }
    }
}
