package org.qnix.tools;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.qnix.abi.SystemMessage;

import picocli.CommandLine;

/**
 * What {@code --help} tells a new user: each command's summary in its parent's list is a whole sentence
 * (picocli lists the first description line), and the lists of values an option names are the values
 * it takes.
 */
class HelpTextTest
{
    @Test
    void everyCommandSummaryIsAWholeSentence()
    {
        check(QnixCommand.commandLine());
    }

    @Test
    void traceFilterNamesEverySystemMessage()
    {
        final String filter = option("trace", "--filter");
        for (int code = 1; code <= SystemMessage.LAST_CODE; code++)
        {
            assertTrue(filter.contains(SystemMessage.name(code)), SystemMessage.name(code) + " in: " + filter);
        }
    }

    @Test
    void benchApiListsWhatEachCommandMeasures()
    {
        final String latency = option("bench latency", "--api");
        Bench.LATENCY_APIS.forEach(api -> assertTrue(latency.contains(api + " ("), api + " in: " + latency));
        final String bandwidth = option("bench bandwidth", "--api");
        Bench.BANDWIDTH_APIS.forEach(api -> assertTrue(bandwidth.contains(api + " ("), api + " in: " + bandwidth));
        Bench.LATENCY_APIS.stream().filter(api -> !Bench.BANDWIDTH_APIS.contains(api))
            .forEach(api -> assertFalse(bandwidth.contains(api), api + " is not measured for bandwidth: " + bandwidth));
    }

    private static void check(final CommandLine command)
    {
        for (final Map.Entry<String, CommandLine> sub : command.getSubcommands().entrySet())
        {
            final String[] description = sub.getValue().getCommandSpec().usageMessage().description();
            final String first = description.length > 0 ? description[0] : "";
            assertTrue(first.endsWith("."), sub.getValue().getCommandSpec().qualifiedName() + "'s summary: " + first);
            check(sub.getValue());
        }
    }

    private static String option(final String command, final String option)
    {
        CommandLine at = QnixCommand.commandLine();
        for (final String name : List.of(command.split(" ")))
        {
            at = at.getSubcommands().get(name);
        }
        return String.join(" ", at.getCommandSpec().findOption(option).description());
    }
}
