package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A configuration the agent cannot work with stops the node at start, and the node's log says once, in an
 * ERROR line of the agent's own logger, which key or file is wrong. Runs on the default release
 * ({@code grantforge.kafka.version}, 4.3.1), plus the misspelled key on Kafka 3.7.2.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BadConfigurationTest {

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(60);
    /** An ERROR line of a logger under org.devlive.grantforge (layout "[date] LEVEL [logger] message"). */
    private static final Pattern AGENT_ERROR = Pattern.compile("^\\[[^\\]]*\\] ERROR +\\[org\\.devlive\\.grantforge[^\\]]*\\] .*");

    @TempDir
    Path tmp;

    @Test
    void missingPolicyFile() {
        Path missing = tmp.resolve("no-such-snapshot.json");
        assertNodeRefusesToStart("missing-file",
                KafkaNode.builder().policyFile(missing),
                "grantforge.policy.file", missing.toString());
    }

    @Test
    void policyFileIsADirectory() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("snapshot-dir"));
        assertNodeRefusesToStart("directory",
                KafkaNode.builder().policyFile(dir),
                "grantforge.policy.file", dir.toString());
    }

    @Test
    void policyFileIsMalformedJson() throws IOException {
        Path broken = tmp.resolve("broken.json");
        Files.writeString(broken, "{\"format\":1,\"service\":\"kafka-demo\",\"policies\":[{\"id\":", StandardCharsets.UTF_8);
        assertNodeRefusesToStart("malformed-json",
                KafkaNode.builder().policyFile(broken),
                "grantforge.policy.file", broken.toString());
    }

    @Test
    void misspelledKey() {
        // a valid grantforge.policy.file, so the only thing wrong is the typo
        Path snapshot = ItPaths.snapshot("e2e.json");
        assertNodeRefusesToStart("typo",
                KafkaNode.builder().policyFile(snapshot).property("grantforge.polcy.file", snapshot.toString()),
                "grantforge.polcy.file");
    }

    @Test
    void superUsersSeparatedByCommasStopTheNodeWithTheValueWrittenWithSemicolons() {
        // Kafka reads "User:admin,User:broker" as one principal that no node or client is
        assertNodeRefusesToStart("super-users-commas",
                KafkaNode.builder().policyFile(ItPaths.snapshot("e2e.json")).property("super.users", "User:admin,User:broker"),
                "super.users", "`User:admin,User:broker`", "super.users=User:admin;User:broker");
    }

    @Test
    void misspelledKeyStopsAKafka372NodeToo() {
        // the oldest release supported: its startup (createNewAuthorizer, reload4j logging) takes the same path
        Path snapshot = ItPaths.snapshot("e2e.json");
        assertNodeRefusesToStart("typo-3.7.2",
                KafkaNode.builder().kafkaVersion("3.7.2").policyFile(snapshot).property("grantforge.polcy.file", snapshot.toString()),
                "grantforge.polcy.file");
    }

    @Test
    void theKafka41ClassOnKafka372StopsTheNodeNamingTheMissingInterface() {
        // docs/operations.md, Troubleshoot: MonitorableGrantForgeKafkaAuthorizer needs Kafka 4.1's Monitorable
        try (KafkaNode node = KafkaNode.builder().kafkaVersion("3.7.2").name("bad-config-monitorable-3.7.2")
                .authorizer(KafkaNode.MONITORABLE_AUTHORIZER_CLASS).policyFile(ItPaths.snapshot("e2e.json")).build()) {
            node.launch();
            int exitCode = node.awaitExit(EXIT_TIMEOUT);
            String context = " (exit code " + exitCode + ")\n" + node.diagnostics();
            assertNotEquals(0, exitCode, "the node exits with an error" + context);
            assertFalse(node.logText().contains(KafkaNode.STARTED_MESSAGE), "the node never started" + context);
            assertTrue((node.logText() + node.consoleText()).contains("org/apache/kafka/common/metrics/Monitorable"),
                    "the error names the missing interface" + context);
        }
    }

    private static void assertNodeRefusesToStart(String name, KafkaNode.Builder builder, String... mustName) {
        try (KafkaNode node = builder.name("bad-config-" + name).build()) {
            node.launch();
            int exitCode = node.awaitExit(EXIT_TIMEOUT);
            String context = " (exit code " + exitCode + ", " + node.serverLogFile() + ")\n" + node.diagnostics();

            assertNotEquals(0, exitCode, "the node exits with an error" + context);
            assertFalse(node.logText().contains(KafkaNode.STARTED_MESSAGE), "the node never started" + context);

            List<String> agentErrors = node.logLines().stream()
                    .filter(l -> AGENT_ERROR.matcher(l).matches())
                    .collect(Collectors.toList());
            List<String> naming = agentErrors.stream()
                    .filter(l -> List.of(mustName).stream().allMatch(l::contains))
                    .collect(Collectors.toList());
            assertEquals(1, naming.size(), "exactly one ERROR line of the agent names " + List.of(mustName)
                    + "; the agent's ERROR lines were:\n" + String.join("\n", agentErrors) + context);
        }
    }
}
