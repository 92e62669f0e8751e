package org.qnix.tools;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;

import org.qnix.abi.ProcessStartTicks;

/**
 * The main of every rank {@code qnix run} starts: it watches its launcher, then runs the program's
 * own {@code main}. A launcher that dies without stopping its ranks ({@code kill -9}, a crash) would
 * otherwise leave them running, registered with their NICs, their output going nowhere, until
 * {@code cluster down}. The launcher holds the write end of every rank's standard input and writes
 * nothing to it, so the read end sees end-of-file when the launcher is gone: a thread blocked in that
 * read costs nothing until then, and the rank exits through its shutdown hooks (the libraries
 * de-register) once the kernel confirms the launcher's pid has gone. A program that closes its
 * standard input only turns the watch off (after {@link #LAUNCHER_EXIT_MS} of looking at the launcher).
 *
 * <pre>{@code
 * java ... -cp QNIX:USER org.qnix.tools.RankMain com.example.Main arg1 arg2   // as ProgramLauncher runs it
 * }</pre>
 */
public final class RankMain
{
    /** The exit code of a rank whose launcher is gone; nobody reads it but a debugging user. */
    static final int LAUNCHER_GONE = 1;
    /** The environment variable that holds the launcher's pid, set by {@link ProgramLauncher}. */
    static final String LAUNCHER_PID = "QNIX_LAUNCHER_PID";
    /**
     * How long after its descriptors closed a killed launcher may still look alive: far more than a
     * process's exit takes, even on a loaded machine, and only ever waited once per rank.
     */
    static final long LAUNCHER_EXIT_MS = 30_000;
    /** The exit code of a program with no main to run, as the java launcher's. */
    static final int NO_MAIN = 1;

    private RankMain()
    {
    }

    /**
     * @param args the program's main class, then its arguments.
     */
    public static void main(final String[] args) throws Throwable
    {
        if (0 == args.length)
        {
            System.err.println("qnix run: RankMain needs the program's main class");
            System.exit(NO_MAIN);
        }
        watchLauncher();
        final Method main = mainOf(args[0]);
        if (null == main)
        {
            System.exit(NO_MAIN);
        }
        try
        {
            main.invoke(null, (Object)Arrays.copyOfRange(args, 1, args.length));
        }
        catch (final InvocationTargetException ex)
        {
            // Uncaught in the program: the JVM prints it as the program's own, and exits 1; without the
            // frames of this call, the trace ends in the program's main, as when the java launcher runs it.
            final Throwable cause = ex.getCause();
            final StackTraceElement[] frames = cause.getStackTrace();
            int kept = frames.length;
            while (kept > 0 && isThisCall(frames[kept - 1]))
            {
                kept--;
            }
            cause.setStackTrace(Arrays.copyOf(frames, kept));
            throw cause;
        }
    }

    private static boolean isThisCall(final StackTraceElement frame)
    {
        final String name = frame.getClassName();
        return RankMain.class.getName().equals(name) || Method.class.getName().equals(name) ||
            name.startsWith("jdk.internal.reflect.");
    }

    /** @return the program's {@code public static void main(String[])}, or null having said why not. */
    private static Method mainOf(final String className)
    {
        try
        {
            final Method main = Class.forName(className, true, ClassLoader.getSystemClassLoader())
                .getMethod("main", String[].class);
            if (Modifier.isStatic(main.getModifiers()) && void.class == main.getReturnType())
            {
                // A main of a class that is not public is run, as the java launcher runs it.
                main.setAccessible(true);
                return main;
            }
        }
        catch (final ClassNotFoundException ex)
        {
            System.err.println("qnix run: no class " + className + " on the class path");
            return null;
        }
        catch (final NoSuchMethodException ex)
        {
            // Reported below.
        }
        System.err.println("qnix run: " + className + " has no public static void main(String[])");
        return null;
    }

    /** @return the pid {@link #LAUNCHER_PID} names, or 0 if none. */
    private static long launcherPid()
    {
        try
        {
            return Long.parseLong(System.getenv().getOrDefault(LAUNCHER_PID, ""));
        }
        catch (final NumberFormatException ex)
        {
            return 0;
        }
    }

    private static void watchLauncher()
    {
        // Taken before the read, while the launcher lives (0 if it has gone already, or is named by none).
        final long pid = launcherPid();
        final long startTicks = 0 == pid ? 0 : ProcessStartTicks.ofLiving(pid);
        final Thread watch = new Thread(() ->
        {
            // Not System.in: the program may read it, and its lock would then be held by this thread.
            final FileInputStream in = new FileInputStream(FileDescriptor.in);
            final byte[] ignored = new byte[64];
            try
            {
                while (in.read(ignored) >= 0)
                {
                    // The launcher writes nothing: nothing to do but wait for the end.
                }
            }
            catch (final IOException ex)
            {
                // Standard input cannot be read: no watch.
                return;
            }
            // A program that closes System.in gets /dev/null on descriptor 0 (the JDK's way), whose
            // end-of-file is not the launcher's: asked of the kernel before the rank exits. And the kernel
            // closes a dying process's descriptors before it makes it a zombie, which for a JVM of many
            // threads takes a while: so a wait for the launcher to go, not a single look.
            if (!ProcessStartTicks.awaitExit(pid, startTicks, LAUNCHER_EXIT_MS))
            {
                return;
            }
            System.err.println("qnix run: the launcher of this rank is gone; the rank exits");
            System.exit(LAUNCHER_GONE);
        }, "qnix-rank-launcher-watch");
        watch.setDaemon(true);
        watch.start();
    }
}
