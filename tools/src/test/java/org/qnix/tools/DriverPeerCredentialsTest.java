package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.ProcessName;
import org.qnix.abi.ViplResult;
import org.qnix.vipl.Vipl;
import org.qnix.vipl.ViplException;
import org.qnix.vipl.ViplNic;

/**
 * A node's driver knows who connected from the kernel (SO_PEERCRED), not from what the client says
 * (issue 17, item 8): the pid it watches and writes into the Process Table is the real one, and a
 * process of another user is refused unless the cluster is shared with that user's group. The other
 * user is {@code nobody}, run through {@code setpriv}, so those tests need root.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DriverPeerCredentialsTest
{
    private static final NicCoordinates NODE = new NicCoordinates(0, 0);
    private static final String SETPRIV = "/usr/bin/setpriv";

    @Test
    void aRegistrationClaimingAnotherPidGetsItsRealOne() throws Exception
    {
        final ClusterDirectory dir = TestClusters.up(TestClusters.uniqueName("p"), 1, 1, "threads");
        final int ai = 7101;
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX))
        {
            channel.connect(UnixDomainSocketAddress.of(dir.driverSocket(NODE)));
            final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(channel)));
            final DataInputStream in = new DataInputStream(Channels.newInputStream(channel));
            out.writeInt(DriverProtocol.REGISTER);
            out.writeInt(ai);
            out.writeInt(0);
            out.writeInt(ai);
            out.writeInt(1);
            out.writeInt(1);     // init's pid, not ours
            out.writeLong(60_000);
            out.flush();
            assertEquals(DriverProtocol.REGISTERED, in.readInt());

            final ClusterStatus.Process registered = ClusterStatus.read(dir).registered().stream()
                .filter(p -> p.name().equals(new ProcessName(ai, 0))).findFirst().orElseThrow();
            assertEquals(ProcessHandle.current().pid(), registered.osPid(), "the Process Table PID is the real one");
        }
        finally
        {
            try
            {
                TestClusters.await("the process de-registered", () -> ClusterStatus.read(dir).processes().isEmpty());
            }
            finally
            {
                TestClusters.down(dir);
            }
        }
    }

    @Test
    void anotherUserIsRefusedEvenWhereTheFileModesLetItIn() throws Exception
    {
        assumeOtherUserCanRun();
        final ClusterDirectory dir = up(TestClusters.uniqueName("u"), false);
        try
        {
            // The directory (0700) keeps it from the socket in the first place.
            assertTrue(asOther("nogroup", dir, 7201).startsWith("cannot connect:"));

            openToEveryone(dir);
            final String refused = asOther("nogroup", dir, 7202);
            assertTrue(refused.startsWith("reply FAILED " + DriverProtocol.REFUSED + ": connection from uid 65534") &&
                refused.contains("refused: cluster '" + dir.name() + "' belongs to uid 0 and is not shared"), refused);
            // Being in the owner's group is not enough for a cluster that is not shared.
            final String sameGroup = asOther("root", dir, 7203);
            assertTrue(sameGroup.startsWith("reply FAILED " + DriverProtocol.REFUSED + ": connection from uid 65534"),
                sameGroup);
            assertTrue(ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    @Test
    void aClusterSharedWithGroupAcceptsTheGroupOnly() throws Exception
    {
        assumeOtherUserCanRun();
        final ClusterDirectory dir = up(TestClusters.uniqueName("g"), true);
        try
        {
            assertEquals("reply REGISTERED", asOther("root", dir, 7301));
            assertTrue(asOther("nogroup", dir, 7302).startsWith("cannot connect:"));

            openToEveryone(dir);
            final String refused = asOther("nogroup", dir, 7303);
            assertTrue(refused.startsWith("reply FAILED " + DriverProtocol.REFUSED + ": connection from uid 65534") &&
                refused.contains("is shared with group gid 0 only"), refused);
            TestClusters.await("the group's process de-registered", () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /**
     * In a cluster shared with a group, a connection address (node, discriminator) a process of the owner
     * waits on is refused to a process of another user of the group, whose uid the driver takes from the
     * kernel, until the owner's process closes its NIC: another user cannot be given the requests meant
     * for the owner's server (a PCIComm cid's, here).
     */
    @Test
    void anAddressInUseIsRefusedToAnotherUserOfASharedCluster() throws Exception
    {
        assumeOtherUserCanRun();
        final ClusterDirectory dir = up(TestClusters.uniqueName("a"), true);
        try
        {
            final String cid = "PCIC7";
            final ViplNic server = Vipl.openNic(NODE.toString(), dir.name());
            try
            {
                final ViplException none = assertThrows(ViplException.class,
                    () -> server.connectWait(cid.getBytes(StandardCharsets.US_ASCII), 1));
                assertEquals(ViplResult.TIMEOUT, none.result(), none.getMessage());
                final String refused = asOtherVia(dir, cid);
                assertTrue(refused.startsWith("reply VIA_FAILED " + ViplResult.INVALID_PARAMETER.code() + ": ") &&
                    refused.contains("is in use by a process of uid 0 (this one's is 65534)"), refused);
            }
            finally
            {
                server.close();
            }
            final String free = asOtherVia(dir, cid);
            assertTrue(free.startsWith("reply VIA_FAILED " + ViplResult.TIMEOUT.code() + ": no connection request"), free);
            TestClusters.await("the processes de-registered", () -> ClusterStatus.read(dir).processes().isEmpty());
        }
        finally
        {
            TestClusters.down(dir);
        }
    }

    /** Runs {@link ForeignViaClient} as {@code nobody} of group root. @return what it printed. */
    private static String asOtherVia(final ClusterDirectory dir, final String discriminator) throws Exception
    {
        final Path classes = Path.of(ForeignViaClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        final List<String> command = new ArrayList<>(List.of(SETPRIV, "--reuid=nobody", "--regid=root",
            "--clear-groups", JvmFlags.javaExecutable(), "-XX:-UsePerfData", "-XX:+UseSerialGC", "-Xmx32m",
            "-cp", classes.toString(), ForeignViaClient.class.getName(), dir.driverSocket(NODE).toString(),
            discriminator, Integer.toString(DriverProtocol.VIA_REGISTER), Integer.toString(DriverProtocol.VIA_REGISTERED),
            Integer.toString(DriverProtocol.VIA_CONNECT_WAIT), Integer.toString(DriverProtocol.VIA_FAILED)));
        final ChildCommand.Result result = ChildCommand.run(command, Map.of(), Path.of("/tmp"));
        assertEquals(0, result.exit(), result.output());
        return result.output().trim();
    }

    private static ClusterDirectory up(final String name, final boolean shared) throws InterruptedException
    {
        final ClusterDirectory dir = ClusterDirectory.of(name);
        try
        {
            return TestClusters.up(new ClusterControl.Settings(name, TestClusters.small(1, 1).build())
                .firmware("threads").sharedWithGroup(shared));
        }
        catch (final RuntimeException | InterruptedException ex)
        {
            TestClusters.down(dir);
            throw ex;
        }
    }

    /** Runs {@link ForeignDriverClient} as {@code nobody} with the given group. @return what it printed. */
    private static String asOther(final String group, final ClusterDirectory dir, final int ai) throws Exception
    {
        final Path classes = Path.of(ForeignDriverClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        final List<String> command = new ArrayList<>(List.of(SETPRIV, "--reuid=nobody", "--regid=" + group,
            "--clear-groups", JvmFlags.javaExecutable(), "-XX:-UsePerfData", "-XX:+UseSerialGC", "-Xmx32m",
            "-cp", classes.toString(), ForeignDriverClient.class.getName(), dir.driverSocket(NODE).toString(),
            Integer.toString(ai), "1", Integer.toString(DriverProtocol.REGISTER),
            Integer.toString(DriverProtocol.REGISTERED), Integer.toString(DriverProtocol.FAILED)));
        final ChildCommand.Result result = ChildCommand.run(command, Map.of(), Path.of("/tmp"));
        assertEquals(0, result.exit(), result.output());
        return result.output().trim();
    }

    /** What a careless chmod would do: the path to the socket and the socket open to every user. */
    private static void openToEveryone(final ClusterDirectory dir) throws Exception
    {
        Files.setPosixFilePermissions(dir.path(), PosixFilePermissions.fromString("rwx--x--x"));
        Files.setPosixFilePermissions(dir.nodeDirectory(NODE), PosixFilePermissions.fromString("rwx--x--x"));
        Files.setPosixFilePermissions(dir.driverSocket(NODE), PosixFilePermissions.fromString("rw-rw-rw-"));
    }

    /**
     * Root, {@code setpriv}, a user {@code nobody}, and a {@code $QNIX_DIR} and class directory that
     * other users can reach.
     */
    private static void assumeOtherUserCanRun() throws Exception
    {
        assumeTrue(ChildCommand.executable(SETPRIV), "no " + SETPRIV);
        assumeTrue(ChildCommand.isRoot(), "not root: cannot run a process as another user");
        assumeTrue(othersCanReach(ClusterDirectory.baseDirectory()), ClusterDirectory.baseDirectory() + " is not reachable by others");
        final Path classes = Path.of(ForeignDriverClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assumeTrue(othersCanReach(classes), classes + " is not reachable by others");
    }

    private static boolean othersCanReach(final Path path) throws Exception
    {
        for (Path p = path.toAbsolutePath(); null != p; p = p.getParent())
        {
            if (Files.exists(p) && !Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE))
            {
                return false;
            }
        }
        return true;
    }
}
