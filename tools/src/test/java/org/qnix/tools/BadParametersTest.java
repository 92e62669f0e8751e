package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.qnix.abi.ClusterDirectory;

/**
 * {@code qnix cluster up} refuses inconsistent parameters before starting anything, with a message
 * naming the offending value.
 */
class BadParametersTest
{
    @ParameterizedTest(name = "{0} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "--torus 0x3               | --torus | 0x3",
        "--torus 3                 | --torus | expected WxH",
        "--torus 300x1             | --torus | 300x1",
        "--sdram 8M                | --sdram | 8388608 bytes is too small for P=64",
        "--processes 64 --sdram 16M| --sdram | P=64",
        "--host-mem 64K            | --host-mem | 65536 bytes is too small",
        "--contexts 32 --command-queue 32 | N (command queue entries) = 32 | at least 2M = 64",
        "--sdram lots              | --sdram lots | not a size",
        "--firmware gpus           | --firmware gpus | processes or threads",
        "--debug-firmware 5-5      | --debug-firmware 5-5 | no such node",
    })
    void refusedNamingTheValue(final String options, final String option, final String detail)
    {
        final String name = TestClusters.uniqueName("f");
        final String[] args = ("cluster up --name " + name + " " + options.trim()).split("\\s+");
        final CliResult result = CliResult.run(args);
        assertEquals(QnixCommand.BAD_ARGUMENT, result.exit, result.out + result.err);
        assertTrue(result.err.contains(option) && result.err.contains(detail), result.err);
        assertFalse(Files.exists(ClusterDirectory.of(name).path()), "nothing created");
    }
}
