package org.qnix.tools;

import org.qnix.abi.ClusterDirectory;

import picocli.CommandLine.Option;

/**
 * The {@code --cluster C} (or {@code --name C}) option of the commands that look into a running
 * cluster, as a picocli mixin.
 *
 * <pre>{@code
 * @Mixin ClusterOption cluster;
 * ClusterDirectory dir = cluster.dir();
 * }</pre>
 */
final class ClusterOption
{
    @Option(names = {"--cluster", "--name"}, paramLabel = "C",
        description = "Cluster name (default: $QNIX_CLUSTER or 'default').")
    String name;

    /** @return the cluster's directory: the name given, else $QNIX_CLUSTER, else {@code default}. */
    ClusterDirectory dir()
    {
        return ClusterDirectory.of(QnixCommand.clusterName(name));
    }
}
