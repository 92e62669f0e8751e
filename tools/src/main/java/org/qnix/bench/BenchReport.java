package org.qnix.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/** What a benchmark run produces: a table with {@code BENCH} lines, JSON, and a chart versus size. */
public interface BenchReport
{
    void print(PrintStream out);

    void writeJson(Path file) throws IOException;

    void writeChart(Path file) throws IOException;
}
