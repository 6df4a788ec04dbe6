package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The log configurations of {@code deploy/logging/} as {@code docs/production.md} gives them, each on a real node of
 * its release line, used as Kafka's scripts use {@code config/log4j.properties} or {@code config/log4j2.yaml}
 * ({@code -Dkafka.logs.dir}, nothing substituted): the audit of a refused and an allowed client lands in
 * {@code grantforge-audit.log} and nowhere else, while Kafka's and the agent's own messages stay in
 * {@code server.log}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class AuditLogFilesTest {
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Test
    void onKafka392TheLog4jFileSendsTheAuditToItsOwnFileOnly() throws Exception {
        auditGoesToItsOwnFileOnly("3.9.2", "deploy/logging/log4j-kafka-3.properties");
    }

    @Test
    void onKafka431TheLog4j2FileSendsTheAuditToItsOwnFileOnly() throws Exception {
        auditGoesToItsOwnFileOnly("4.3.1", "deploy/logging/log4j2-kafka-4.yaml");
    }

    private static void auditGoesToItsOwnFileOnly(String release, String logConfig) throws Exception {
        try (KafkaNode node = KafkaNode.builder().name("audit-log-" + release).kafkaVersion(release)
                .serverLogConfig(ItPaths.inRepo(logConfig))
                .policyFile(ItPaths.snapshot("e2e.json"))
                // folded allowed accesses are written after one fold window
                .property("grantforge.audit.fold.window.ms", "1000")
                .start()) {
            AliceAndBob.createOrders(node);
            AliceAndBob.aliceWritesOrders(node);
            AliceAndBob.bobIsRefusedOrders(node);

            Path auditFile = node.dir().resolve("grantforge-audit.log");
            Await.until("bob's refusal and alice's write in " + auditFile, PATIENCE, () -> {
                String audit = KafkaNode.read(auditFile);
                return audit.contains("Principal = User:bob is Denied operation = WRITE")
                        && audit.contains("Principal = User:alice is Allowed operation = WRITE");
            });
            List<String> auditLines = lines(KafkaNode.read(auditFile));
            assertTrue(auditLines.stream().allMatch(l -> l.endsWith("(grantforge.audit)")),
                    "only the audit logger writes grantforge-audit.log: " + auditLines);

            String serverLog = node.logText();
            assertTrue(serverLog.contains(KafkaNode.STARTED_MESSAGE), "Kafka's messages in server.log");
            assertTrue(serverLog.contains("applied policy version 1"), "the agent's own messages in server.log");
            assertEquals(List.of(), audit(lines(serverLog)), "audit lines in server.log");
            assertEquals(List.of(), audit(lines(node.consoleText())), "audit lines on the console (stdout)");
        }
    }

    private static List<String> lines(String text) {
        return Arrays.asList(text.split("\\R"));
    }

    private static List<String> audit(List<String> lines) {
        return lines.stream().filter(l -> l.contains("grantforge.audit") || l.contains("Principal = User:"))
                .collect(Collectors.toList());
    }
}
