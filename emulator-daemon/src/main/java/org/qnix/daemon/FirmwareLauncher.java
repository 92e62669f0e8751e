package org.qnix.daemon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.qnix.abi.ClusterDirectory;
import org.qnix.abi.ClusterParameters;
import org.qnix.abi.ControlProgramLayout;
import org.qnix.abi.FileModes;
import org.qnix.abi.JvmFlags;
import org.qnix.abi.NicCoordinates;
import org.qnix.firmware.IdleStrategies;
import org.qnix.firmware.LoadedFirmware;
import org.qnix.firmware.NodeImage;

/**
 * Starts the NIC control program of a node: in its own JVM (the default, so a debugger can attach to
 * one NIC) or as a thread of the daemon ({@code --firmware threads}), and stops it again.
 */
final class FirmwareLauncher implements AutoCloseable
{
    static final String FIRMWARE_MAIN = "org.qnix.firmware.FirmwareMain";

    private final ClusterDirectory dir;
    private final ClusterParameters params;
    private final NicCoordinates node;
    private Process process;
    private LoadedFirmware thread;

    FirmwareLauncher(final ClusterDirectory dir, final ClusterParameters params, final NicCoordinates node)
    {
        this.dir = dir;
        this.params = params;
        this.node = node;
    }

    void startProcess(final String idle, final int debugPort)
    {
        final List<String> command = new ArrayList<>();
        command.add(JvmFlags.javaExecutable());
        command.add(JvmFlags.clusterMarker(dir.path()));
        command.addAll(JvmFlags.flags());
        command.addAll(JvmFlags.crashFiles(dir));
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        if (debugPort > 0)
        {
            command.add("-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:" + debugPort);
        }
        command.add("-cp");
        command.add(JvmFlags.classPath());
        command.add(FIRMWARE_MAIN);
        command.add("--cluster-dir=" + dir.path());
        command.add("--node=" + node);
        command.add("--daemon-pid=" + ProcessHandle.current().pid());
        command.add("--idle=" + idle);
        if (debugPort > 0)
        {
            command.add("--debug-port=" + debugPort);
        }
        // Made first, so that it has the cluster's mode rather than the umask's.
        FileModes.createFileOrThrow(dir.firmwareLog(node));
        final ProcessBuilder builder = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.firmwareLog(node).toFile());
        try
        {
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start the firmware JVM of node " + node, ex);
        }
    }

    void startThread(final String idle)
    {
        thread = LoadedFirmware.load(dir, params, node);
        thread.program().runMode(ControlProgramLayout.MODE_THREAD, 0);
        thread.start(IdleStrategies.parse(idle));
    }

    /**
     * Waits until the control program reports running in its SDRAM.
     *
     * @throws IllegalStateException if its JVM exits first or it takes longer than the timeout.
     */
    void awaitRunning(final NodeImage image, final long timeoutMs) throws InterruptedException
    {
        final int state = (int)image.sdramLayout().controlProgramOffset() + ControlProgramLayout.STATE_OFFSET;
        final long deadline = System.currentTimeMillis() + timeoutMs;
        while (ControlProgramLayout.STATE_RUNNING != image.sdram().getIntVolatile(state))
        {
            if (null != process && !process.isAlive())
            {
                throw new IllegalStateException("the firmware JVM of node " + node + " exited with code " +
                    process.exitValue() + " before it was ready; see " + dir.firmwareLog(node));
            }
            if (System.currentTimeMillis() > deadline)
            {
                throw new IllegalStateException("the NIC control program of node " + node + " was not ready after " +
                    timeoutMs + " ms; see " + dir.firmwareLog(node));
            }
            Thread.sleep(10);
        }
    }

    long pid()
    {
        return null != process ? process.pid() : ProcessHandle.current().pid();
    }

    public void close()
    {
        if (null != process)
        {
            process.destroy();
            try
            {
                if (!process.waitFor(10, TimeUnit.SECONDS))
                {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            catch (final InterruptedException ex)
            {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        if (null != thread)
        {
            thread.close();
        }
    }
}
