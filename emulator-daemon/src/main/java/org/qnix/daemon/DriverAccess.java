package org.qnix.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;

import org.qnix.abi.ClusterDirectory;

/**
 * Who may use a cluster's drivers (issue 17, item 8): processes of the user who brought it up and, if
 * it was brought up with {@code --shared-with-group}, of the cluster directory's group. The file
 * modes already keep everyone else away from the sockets; this is the driver's own check, on the
 * credentials the kernel gives ({@link PeerCredentials}), so that a directory opened up by hand does
 * not open the cluster.
 *
 * <pre>{@code
 * DriverAccess access = DriverAccess.of(dir, sharedWithGroup);
 * String refusal = access.refusal(PeerCredentials.of(channel));   // null: admitted
 * }</pre>
 */
final class DriverAccess
{
    private final String cluster;
    private final int ownerUid;
    private final int groupGid;
    private final boolean sharedWithGroup;

    DriverAccess(final String cluster, final int ownerUid, final int groupGid, final boolean sharedWithGroup)
    {
        this.cluster = cluster;
        this.ownerUid = ownerUid;
        this.groupGid = groupGid;
        this.sharedWithGroup = sharedWithGroup;
    }

    /** @return the access of a cluster owned by this process's user, its group the directory's group. */
    static DriverAccess of(final ClusterDirectory dir, final boolean sharedWithGroup)
    {
        int gid = PeerCredentials.ownGid();
        try
        {
            gid = (Integer)Files.getAttribute(dir.path(), "unix:gid", LinkOption.NOFOLLOW_LINKS);
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException ex)
        {
            // The process's own group, which created the directory.
        }
        return new DriverAccess(dir.name(), PeerCredentials.ownUid(), gid, sharedWithGroup);
    }

    boolean sharedWithGroup()
    {
        return sharedWithGroup;
    }

    /** @return null if {@code peer} may use the driver, else why not, naming both sides. */
    String refusal(final PeerCredentials peer)
    {
        if (peer.uid() == ownerUid)
        {
            return null;
        }
        if (sharedWithGroup && peer.inGroup(groupGid))
        {
            return null;
        }
        return "connection from uid " + peer.uid() + " (pid " + peer.pid() + ") refused: cluster '" + cluster +
            "' belongs to uid " + ownerUid + (sharedWithGroup ? " and is shared with group gid " + groupGid +
            " only" : " and is not shared (cluster up --shared-with-group shares it with the owner's group)");
    }
}
