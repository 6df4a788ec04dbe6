package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node whose own principal the policies refuse hangs: here the principal its broker half registers with over the
 * controller listener is missing from {@code super.users}, so registration's CLUSTER_ACTION is refused and the
 * node never starts, while Kafka only logs timeouts. The agent says why in one WARN naming {@code super.users},
 * the principal and the listener, and only once however often Kafka retries.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LockOutWarningTest {

    @Test
    void aNodeWhoseControllerPrincipalIsRefusedNamesSuperUsersInOneWarning() throws Exception {
        try (KafkaNode node = KafkaNode.builder().name("lock-out")
                .interNodeUsers("broker", "controller")
                .property("super.users", "User:admin;User:broker")
                .policyFile(ItPaths.snapshot("e2e.json"))
                .build().launch()) {
            String expected = "the policies refuse User:controller CLUSTER_ACTION on listener CONTROLLER, which Kafka uses"
                    + " between nodes (controller.listener.names): until super.users names User:controller";
            Await.until("one WARN naming super.users in " + node.serverLogFile(), Duration.ofSeconds(90),
                    () -> warnings(node, expected).size() == 1);
            // Kafka goes on retrying the registration, refused each time: still one line
            Await.until("more refusals of the registration", Duration.ofSeconds(30),
                    () -> node.logText().split("is Denied operation = CLUSTER_ACTION", -1).length > 3);
            assertEquals(1, warnings(node, expected).size(), node.diagnostics());
            assertFalse(node.logText().contains(KafkaNode.STARTED_MESSAGE), "the node hangs: " + node.diagnostics());
        }
    }

    private static List<String> warnings(KafkaNode node, String text) {
        return node.logLines().stream().filter(line -> line.contains("WARN") && line.contains(text)).collect(Collectors.toList());
    }
}
