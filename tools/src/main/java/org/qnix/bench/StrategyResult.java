package org.qnix.bench;

/**
 * One row of a strategies report: latency with one firmware placement, firmware idle strategy and way
 * of waiting on doorbells, and the machine's busy cores while measuring and while the cluster was idle.
 *
 * @param firmware  {@code processes} or {@code threads}; {@code -} for the floor.
 * @param idle      the firmware's idle strategy; {@code -} for the floor.
 * @param doorbellWait how the programs wait on doorbells; {@code busy} for the floor, which spins.
 * @param busyCores cores busy on average while measuring (NaN if unknown).
 * @param idleCores cores busy on average with the cluster up and no program running (NaN if not measured).
 */
public record StrategyResult(String firmware, String idle, String doorbellWait, LatencyResult latency, double busyCores,
    double idleCores)
{
}
