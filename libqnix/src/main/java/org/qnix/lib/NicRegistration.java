package org.qnix.lib;

import java.time.Duration;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ClusterProperties;
import org.qnix.abi.DriverProtocol;
import org.qnix.abi.NicCoordinates;
import org.qnix.abi.NicProcessor;
import org.qnix.abi.ProcessName;
import org.qnix.host.DriverException;
import org.qnix.host.DriverProxy;
import org.qnix.host.MappingGuard;
import org.qnix.host.ProcessMappings;
import org.qnix.host.Registration;
import org.qnix.host.RegistrationTimeoutException;
import org.qnix.host.RetiredMemory;

/**
 * A process's registration with its node's NIC (thesis 3.4, 3.5.3; {@code qx_init} and {@code qx_end}):
 * the driver connection it was made on, and what it gives the process to map ({@link ProcessMappings}):
 * its Virtual Network Interface, its Host Process Structures, the control program's read-only status area
 * and the NIC's wake-up line.
 * {@link #register} is the whole of {@code qx_init} below the API's arguments; {@link #deregister} and
 * {@link #release} are the end of {@link Qnix#close()}, once its {@link MappingGuard} has no call inside,
 * or has waited for them long enough.
 *
 * <p>Its methods run with {@code Qnix}'s monitor held, or before the {@code Qnix} exists.
 */
final class NicRegistration
{
    final ProcessName name;
    final NicCoordinates node;
    final String clusterName;
    final ClusterParameters params;
    final int nicPid;
    final DriverProxy driver;
    final ProcessMappings mappings;
    /** This process runs on or off the NICs' CPU, as its driver advised or moved it, while registered. */
    final NicProcessor.Placement cpuPlacement;

    private NicRegistration(final ProcessName name, final NicCoordinates node, final String clusterName,
        final ClusterParameters params, final int nicPid, final DriverProxy driver, final ProcessMappings mappings,
        final NicProcessor.Placement cpuPlacement)
    {
        this.name = name;
        this.node = node;
        this.clusterName = clusterName;
        this.params = params;
        this.nicPid = nicPid;
        this.driver = driver;
        this.mappings = mappings;
        this.cpuPlacement = cpuPlacement;
    }

    /**
     * Connects to the node's driver, registers, and waits for the whole group (thesis 3.4); maps what the
     * registration gives.
     *
     * @throws QnixTimeoutException if the group is not complete in time; it names the missing members.
     * @throws QnixDriverException  if the driver refuses or cannot be reached.
     */
    static NicRegistration register(final ProcessName name, final int group, final int groupSize,
        final String clusterName, final NicCoordinates where, final Duration wait)
    {
        final ClusterDirectory dir = ClusterDirectory.of(clusterName);
        final ClusterProperties props = ClusterProperties.read(dir.propertiesFile()).orElseThrow(() ->
            new QnixDriverException(DriverProtocol.REFUSED, "no QNIX cluster '" + clusterName + "' at " +
                dir.path() + ": start one with ./qnix cluster up --name " + clusterName));
        if (!ClusterProperties.STATE_UP.equals(props.state()))
        {
            throw new QnixDriverException(DriverProtocol.REFUSED,
                "cluster '" + clusterName + "' is " + props.state() + ", not up");
        }
        final ClusterParameters params;
        try
        {
            params = props.parameters();
        }
        catch (final IllegalStateException ex)
        {
            throw new QnixDriverException(DriverProtocol.REFUSED, "cluster '" + clusterName + "': " + ex.getMessage());
        }
        if (!params.hasNode(where))
        {
            throw new IllegalArgumentException("node " + where + " is not in the " + params.torus() +
                " torus of cluster '" + clusterName + "'");
        }

        // Compared first: toMillis() of a Duration beyond 2.9e8 years throws ArithmeticException.
        final long timeoutMs = wait.compareTo(Duration.ofMillis(Qnix.LONGEST_TIMEOUT_MS)) > 0 ?
            Qnix.LONGEST_TIMEOUT_MS : Math.max(1, wait.toMillis());
        final DriverProxy driver;
        try
        {
            driver = DriverProxy.connect(dir.driverSocket(where), timeoutMs, "the driver of node " + where);
        }
        catch (final DriverException ex)
        {
            throw new QnixDriverException("cannot reach the driver of node " + where + " at " +
                dir.driverSocket(where) + " within " + timeoutMs + " ms: is cluster '" + clusterName + "' up?",
                ex.getCause());
        }
        boolean registered = false;
        try
        {
            final Registration registration;
            try
            {
                registration = driver.register(name, group, groupSize, timeoutMs, params.nameTableEntries());
            }
            catch (final RegistrationTimeoutException ex)
            {
                throw new QnixTimeoutException(ex.getMessage(), ex.missing());
            }
            catch (final DriverException ex)
            {
                if (DriverProtocol.NIC_DEAD == ex.code())
                {
                    throw new QnixNicDeadException(ex.getMessage());
                }
                throw QnixDriverException.of(ex);
            }

            final ProcessMappings mappings;
            try
            {
                mappings = ProcessMappings.map(dir, params, where, clusterName, registration.vniAddress(),
                    registration.vniLength(), registration.hpsAddress());
            }
            catch (final DriverException ex)
            {
                throw QnixDriverException.of(ex);
            }
            registered = true;
            return new NicRegistration(name, where, clusterName, params, registration.nicPid(), driver, mappings,
                NicProcessor.place(props.nicCpu(), registration.onNicCpu(), "qnix"));
        }
        finally
        {
            if (!registered)
            {
                driver.close();
            }
        }
    }

    /** Delete_Process through the driver (thesis 3.5.3): the NIC forgets the process, the driver frees its pages. */
    void deregister()
    {
        driver.deregister();
    }

    /**
     * Retires the mappings ({@link RetiredMemory}) before {@link #deregister()} lets the driver give their
     * pages to another process: a call still inside reads zeros from there on, never the next owner's
     * pages, and never an unmapped one. Idempotent.
     *
     * @param quiescent false while calls may still be inside ({@link ProcessMappings#retire(boolean)}).
     */
    void retire(final boolean quiescent)
    {
        mappings.retire(quiescent);
    }

    /** Closes the driver connection, and retires the mappings if {@link #retire} did not (a failed close). */
    void release(final boolean quiescent)
    {
        driver.close();
        cpuPlacement.close();
        mappings.retire(quiescent);
    }
}
