package org.qnix.abi;

import java.util.Locale;

/**
 * How Send_Short, Broadcast_Short and Multicast_Short reach their receivers, a cluster parameter
 * ({@code cluster up --short-flow}).
 *
 * <ul>
 *   <li>{@link #EAGER} (the default): the message travels with its data at once, as Eager_Short
 *   ({@link SystemMessage}), and falls back to the permission protocol only when the receiving NIC
 *   can neither deliver nor stage it (thesis 3.7, "Different Short Message Flow Control").</li>
 *   <li>{@link #PERMISSION}: the thesis' protocol of 3.5.1 for every message: Permission_Request,
 *   Permission_Reply, then the data packet.</li>
 * </ul>
 *
 * <pre>{@code
 * ClusterParameters params = ClusterParameters.builder().shortFlow(ShortFlow.parse("permission")).build();
 * boolean eager = ShortFlow.EAGER == params.shortFlow();
 * }</pre>
 */
public enum ShortFlow
{
    EAGER,
    PERMISSION;

    /** @return the name used in {@code cluster.properties} and on the command line. */
    public String text()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param text {@code eager} or {@code permission}, in any case.
     * @throws IllegalArgumentException naming the accepted values for anything else.
     */
    public static ShortFlow parse(final String text)
    {
        for (final ShortFlow flow : values())
        {
            if (flow.text().equalsIgnoreCase(null == text ? "" : text.trim()))
            {
                return flow;
            }
        }
        throw new IllegalArgumentException("short flow '" + text + "' must be eager or permission");
    }
}
