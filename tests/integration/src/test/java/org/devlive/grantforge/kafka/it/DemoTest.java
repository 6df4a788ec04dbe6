package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo as a newcomer runs it, twice in a row in one directory: each run shows alice allowed, bob refused, the
 * ACL creation refused, bob allowed after the policy edit and refused again once the file is put back, in that order
 * (a second run once started from the first run's cache, which still allowed bob), and the edit takes effect within
 * about a heartbeat. The second run is started in the background with {@code --keep-running}: with no terminal it
 * keeps running until stopped, and the command line it prints connects to it with the client settings it wrote,
 * alice's write accepted and bob's refused, as the demo last showed.
 */
// a thread of its own: a read of the demo's output that never returns is stopped too
@Timeout(value = 4, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DemoTest {
    /** What each step of the demo prints on the line after its {@code $ } line. */
    private static final List<String> EXPECTED = List.of("OK", "REFUSED", "REFUSED", "OK", "REFUSED");
    /** The console producer's command line the demo prints for alice, with the jars the node runs on. */
    private static final Pattern ALICE_WRITES = Pattern.compile("^  (echo hello \\| java -cp .*ConsoleProducer .*alice\\.properties)$",
            Pattern.MULTILINE);
    private static final Pattern CHANGE = Pattern.compile("bob produces again: allowed ([0-9.]+) s after the edit");

    @TempDir
    Path work;

    private Process demo(String... args) throws IOException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-cp", System.getProperty("java.class.path")));
        for (String property : List.of(ItPaths.AGENT_JAR_PROPERTY, ItPaths.FIXTURES_PROPERTY, KafkaDist.DISTS_PROPERTY,
                TestServer.BINARY_PROPERTY, KafkaDist.VERSION_PROPERTY)) {
            if (System.getProperty(property) != null) {
                command.add("-D" + property + "=" + System.getProperty(property));
            }
        }
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        command.add(Demo.class.getName());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true).start();
        process.getOutputStream().close(); // no terminal, as in the background
        return process;
    }

    /** Runs a command line as a user pastes it into a shell (in the demo's directory); returns its exit code and output. */
    private String[] shell(String commandLine) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("bash", "-c", commandLine).directory(work.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the command ends: " + commandLine + "\n" + output);
        return new String[] {String.valueOf(process.exitValue()), output};
    }

    /** The demo's output as lines: one reader per process, since a reader reads ahead of the line it returns. */
    private static BufferedReader output(Process process) {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Reads the demo's output until {@code last} (or its end); returns the lines. */
    private static List<String> readUntil(BufferedReader out, String last) throws IOException {
        List<String> lines = new ArrayList<>();
        String line;
        while ((line = out.readLine()) != null) {
            lines.add(line);
            if (line.contains(last)) {
                break;
            }
        }
        return lines;
    }

    /** The outcome printed after each {@code $ } step, in order. */
    private static List<String> outcomes(List<String> lines) {
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith("$ ") && !lines.get(i).startsWith("$ kafka-acls") && !lines.get(i).startsWith("$ edit")) {
                outcomes.add(lines.get(i + 1).trim().split("\\s+")[0]);
            }
        }
        return outcomes;
    }

    @Test
    void twoRunsInARowShowTheSameAndTheSecondKeepsRunningInTheBackground() throws Exception {
        Process first = demo();
        List<String> firstLines = readUntil(output(first), "Node stopped.");
        assertTrue(first.waitFor(60, TimeUnit.SECONDS), "the first run ends");
        String firstText = String.join("\n", firstLines);
        assertEquals(0, first.exitValue(), firstText);
        assertEquals(EXPECTED, outcomes(firstLines), firstText);
        Matcher change = CHANGE.matcher(firstText);
        assertTrue(change.find(), firstText);
        System.out.println("[DemoTest] " + change.group());
        // a heartbeat each second and no download delay: the change is in force within about two
        assertTrue(Double.parseDouble(change.group(1)) < 3.0, "the edit reaches the broker within a heartbeat: " + change.group());

        Process second = demo("--keep-running");
        BufferedReader secondOutput = output(second);
        try {
            List<String> secondLines = readUntil(secondOutput, "The node keeps running");
            String secondText = String.join("\n", secondLines);
            assertEquals(EXPECTED, outcomes(secondLines), "the second run shows what the first did:\n" + secondText);
            assertFalse(second.waitFor(3, TimeUnit.SECONDS), "with no terminal, --keep-running keeps running:\n" + secondText);
            String connecting = String.join("\n", readUntil(secondOutput, "kafka-console-producer.sh"));
            Matcher alice = ALICE_WRITES.matcher(connecting);
            assertTrue(alice.find(), "the demo prints how to connect:\n" + connecting);
            String[] aliceRun = shell(alice.group(1));
            assertEquals("0", aliceRun[0], "alice's write as printed:\n" + aliceRun[1]);
            assertFalse(aliceRun[1].contains("Exception"), "alice's write as printed:\n" + aliceRun[1]);
            String[] bobRun = shell(alice.group(1).replace("alice.properties", "bob.properties"));
            assertTrue(bobRun[1].contains("TopicAuthorizationException"), "bob's write is refused:\n" + bobRun[1]);
        } finally {
            second.destroy();
            assertTrue(second.waitFor(60, TimeUnit.SECONDS), "a stopped demo ends");
        }
    }
}
