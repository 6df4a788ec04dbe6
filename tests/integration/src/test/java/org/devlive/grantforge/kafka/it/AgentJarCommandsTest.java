package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** {@code java -jar <agent jar>} as a newcomer types it: one usage finds every command, and help is no error. */
class AgentJarCommandsTest {
    /** One line of the usage per command. */
    private static final List<String> COMMANDS = List.of("  explain ...", "  explain --quota ...", "  explain --principal-of ...",
            "  migrate-acls ...");

    private record Run(int exitCode, String stdout, String stderr) {
    }

    private static Run jar(String... args) throws IOException, InterruptedException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-jar", ItPaths.agentJar().toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "java -jar ends");
        return new Run(process.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    private static void assertListsEveryCommand(String usage) {
        for (String command : COMMANDS) {
            assertTrue(usage.contains("\n" + command), "the usage lists `" + command.trim() + "`:\n" + usage);
        }
    }

    @Test
    void helpAndHelpFlagPrintOneUsageListingEveryCommand() throws Exception {
        Run help = jar("help");
        assertEquals(0, help.exitCode(), help.toString());
        assertListsEveryCommand(help.stdout());
        Run flag = jar("--help");
        assertEquals(0, flag.exitCode(), flag.toString());
        assertEquals(help.stdout(), flag.stdout());
    }

    @Test
    void noCommandOrAnUnknownOnePrintsTheSameUsageAsAnError() throws Exception {
        Run none = jar();
        assertEquals(2, none.exitCode(), none.toString());
        assertListsEveryCommand(none.stderr());
        Run unknown = jar("explian");
        assertEquals(2, unknown.exitCode(), unknown.toString());
        assertTrue(unknown.stderr().startsWith("unknown command `explian`\n"), unknown.stderr());
    }

    @Test
    void eachCommandsHelpIsItsUsageAndExitsZero() throws Exception {
        Run explain = jar("explain", "--help");
        assertEquals(0, explain.exitCode(), explain.toString());
        assertTrue(explain.stdout().startsWith("usage: explain"), explain.stdout());
        assertTrue(explain.stdout().contains("--quota") && explain.stdout().contains("--principal-of"), explain.stdout());
        Run migrate = jar("migrate-acls", "--help");
        assertEquals(0, migrate.exitCode(), migrate.toString());
        assertTrue(migrate.stdout().startsWith("usage: migrate-acls"), migrate.stdout());
    }
}
