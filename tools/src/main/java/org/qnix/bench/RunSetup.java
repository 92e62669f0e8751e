package org.qnix.bench;

/**
 * How a latency or bandwidth run measured QNIX: the firmware placement and idle strategy of its
 * cluster, and a sentence for the report. Written at the head of the run's JSON, so that a comparison
 * only pairs results taken with the same settings.
 *
 * @param firmware    shared, processes or threads.
 * @param idle        the firmware's idle strategy, or {@code unknown} for a cluster the run did not bring up.
 * @param description printed above the table.
 */
public record RunSetup(String firmware, String idle, String description)
{
    /** @return the opening of the run's JSON document, up to and including {@code "results": [}. */
    String jsonHead(final String kind, final String unit)
    {
        return "{\n  \"kind\": \"" + kind + "\",\n  \"unit\": \"" + unit + "\",\n  \"setup\": \"" +
            description.replace("\\", "\\\\").replace("\"", "\\\"") + "\",\n  \"firmware\": \"" + firmware +
            "\",\n  \"idle\": \"" + idle + "\",\n  \"results\": [\n";
    }
}
