package org.qnix.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * What a benchmark run produces from its results: a table with {@code BENCH} lines, JSON, and a chart
 * versus size.
 *
 * @param <R> one result: a transport at a size.
 */
public interface BenchReport<R>
{
    void add(R result);

    void print(PrintStream out);

    void writeJson(Path file) throws IOException;

    void writeChart(Path file) throws IOException;
}
