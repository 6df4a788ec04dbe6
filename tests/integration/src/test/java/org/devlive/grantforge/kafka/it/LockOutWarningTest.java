package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

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

    /**
     * Nodes that meet over a listener without authentication are {@code User:ANONYMOUS}, as every client there is: the
     * WARN tells to authenticate them first, and names {@code User:ANONYMOUS} in {@code super.users} only as what
     * not to do.
     */
    @Test
    void aNodeMeetingOverPlaintextIsToldToAuthenticateNotToMakeAnonymousASuperUser() throws Exception {
        try (KafkaNode node = KafkaNode.builder().name("lock-out-plaintext")
                .property("listener.security.protocol.map", "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT")
                .policyFile(ItPaths.snapshot("e2e.json"))
                .build().launch()) {
            String expected = "the policies refuse User:ANONYMOUS CLUSTER_ACTION on listener CONTROLLER, which Kafka uses"
                    + " between nodes (controller.listener.names): nodes that connect there do not authenticate";
            Await.until("one WARN for User:ANONYMOUS in " + node.serverLogFile(), Duration.ofSeconds(90),
                    () -> warnings(node, expected).size() == 1);
            String warning = warnings(node, expected).get(0);
            int safe = warning.indexOf("Fix it safely: make CONTROLLER authenticate the nodes");
            int dangerous = warning.indexOf("Do NOT put User:ANONYMOUS in super.users");
            assertTrue(safe > 0 && dangerous > safe, "the safe fix first, the dangerous one named as such: " + warning);
            assertFalse(warning.contains("until super.users names User:ANONYMOUS"), warning);
        }
    }

    /**
     * With SSL, a client without a certificate is {@code User:ANONYMOUS} unless the listener requires one; with that
     * principal in {@code super.users} anyone who reaches the port is a super user. The agent names the SSL listener
     * whose own {@code ssl.client.auth} only requests certificates, in one WARN at start, and not the SASL_SSL one.
     */
    @Test
    void anonymousAsASuperUserBesideAnSslListenerThatOnlyRequestsCertificatesIsWarnedNamingIt(@TempDir Path work)
            throws Exception {
        Transports transports = new Transports(TestPki.create(work.resolve("pki")));
        Listener required = transports.mutualTlsListener("DEFAULT");
        Map<String, String> settings = new HashMap<>(required.settings());
        settings.put(Listener.prefix(required.name()) + "ssl.client.auth", "requested");
        try (KafkaNode node = KafkaNode.builder().name("anonymous-ssl")
                .listener(new Listener(required.name(), required.securityProtocol(), settings))
                .listener(transports.scramListener())
                .property("super.users", "User:admin;User:ANONYMOUS")
                .policyFile(ItPaths.snapshot("e2e.json"))
                .build().launch()) {
            String expected = "super.users names User:ANONYMOUS while listener " + Transports.MTLS
                    + " speaks SSL without requiring client certificates (listener.name.mtls.ssl.client.auth=requested):";
            Await.until("one WARN naming the SSL listener in " + node.serverLogFile(), Duration.ofSeconds(90),
                    () -> !warnings(node, expected).isEmpty());
            Await.until("the node starts", Duration.ofSeconds(90), () -> node.logText().contains(KafkaNode.STARTED_MESSAGE));
            assertEquals(1, warnings(node, expected).size(), "one WARN for the broker's and the controller's authorizer");
            String warning = warnings(node, expected).get(0);
            assertFalse(warning.contains("listener " + Transports.SCRAM) || warning.contains("listener SASL_PLAINTEXT"),
                    "SASL listeners always authenticate: " + warning);
        }
    }

    private static List<String> warnings(KafkaNode node, String text) {
        return node.logLines().stream().filter(line -> line.contains("WARN") && line.contains(text)).collect(Collectors.toList());
    }
}
