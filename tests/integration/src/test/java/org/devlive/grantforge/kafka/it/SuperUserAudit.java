package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grantforge.audit.super.users.mutations=true} on a real node in offline mode, the audit log written as OCSF
 * records ({@code grantforge.audit.log.format=ocsf}), each validated against the published OCSF 1.8.0 API Activity
 * schema ({@code tests/fixtures/schemas/}), and carol excluded from audit ({@code grantforge.audit.excluded.principals}),
 * refused unaudited: the
 * super user's creation and deletion of a topic are audited (as Kafka asks them: CREATE and DELETE on the cluster, by
 * {@code CREATE_TOPICS} and {@code DELETE_TOPICS}), its produce is not, and neither is any
 * {@code CLUSTER_ACTION} of the principals the node's broker and controller use between them (their registration and
 * heartbeats, which never stop). One subclass per release.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SuperUserAudit {

    private static final long WAIT_S = 30;
    private static final String AUDIT_PREFIX = "[grantforge.audit] ";
    private final String kafkaVersion;
    private KafkaNode node;

    SuperUserAudit(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startNode() throws Exception {
        node = KafkaNode.builder().name("super-user-audit-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .interNodeUsers("broker", "controller")
                .policyFile(ItPaths.snapshot("e2e.json"))
                .property("grantforge.audit.super.users.mutations", "true")
                .property("grantforge.audit.fold.window.ms", "1000")
                .property("grantforge.audit.log.format", "ocsf")
                .property("grantforge.audit.excluded.principals", "User:carol")
                .start();
    }

    @AfterAll
    void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void aSuperUsersTopicDeletionIsAuditedAndTheNodesOwnRequestsAreNot() throws Exception {
        String topic = "made-and-deleted-by-admin";
        try (Admin admin = node.admin("admin")) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            try (KafkaProducer<String, String> producer = node.producer("admin")) {
                producer.send(new ProducerRecord<>(topic, "k", "not a mutation")).get(WAIT_S, TimeUnit.SECONDS);
            }
            admin.deleteTopics(List.of(topic)).all().get(WAIT_S, TimeUnit.SECONDS);
        }
        // Kafka asks first for the right on the whole cluster, which a super user has, and then asks nothing per topic:
        // the event names the cluster and the request
        awaitAuditLine("admin's topic creation", l -> l.contains("Principal = User:admin is Allowed operation = CREATE")
                && l.contains("for request = CREATE_TOPICS as a super user"));
        awaitAuditLine("admin's topic deletion", l -> l.contains("Principal = User:admin is Allowed operation = DELETE")
                && l.contains("for request = DELETE_TOPICS as a super user"));
        // carol is excluded from audit: refused as anyone, before bob, whose refusal is audited at once
        try (Admin carol = node.admin("carol")) {
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> carol.createTopics(List.of(new NewTopic("carols", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS));
            assertInstanceOf(TopicAuthorizationException.class, refused.getCause());
        }
        try (Admin bob = node.admin("bob")) {
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> bob.createTopics(List.of(new NewTopic("bobs", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS));
            assertInstanceOf(TopicAuthorizationException.class, refused.getCause());
        }
        awaitAuditLine("bob's refused topic creation", l -> l.contains("Principal = User:bob is Denied operation = CREATE"));
        assertEquals(List.of(), auditLines(l -> l.contains("User:carol")), "carol is excluded from audit");
        assertEveryRecordIsValidOcsf();
        // the broker half heartbeats to the controller half as User:controller all along (CLUSTER_ACTION, which Kafka
        // asks to report when allowed): audited as a mutation, it would be here within the fold window
        assertEquals(List.of(), auditLines(l -> l.contains("operation = CLUSTER_ACTION")),
                "the nodes' requests among themselves are never audited");
        assertEquals(List.of(), auditLines(l -> l.contains("User:admin is Allowed operation = WRITE")),
                "a super user's produce is not a mutation");
    }

    /** Every audit line is one OCSF API Activity record (after the logger's prefix) that the published schema accepts. */
    private void assertEveryRecordIsValidOcsf() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonSchema schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(json.readTree(ItPaths.fixtures().resolve("schemas/ocsf-1.8.0-api_activity.json").toFile()));
        List<String> lines = auditLines(l -> true);
        assertTrue(lines.size() >= 3, "admin's two mutations and bob's refusal: " + lines);
        for (String line : lines) {
            JsonNode record = json.readTree(line.substring(line.indexOf(AUDIT_PREFIX) + AUDIT_PREFIX.length()));
            assertEquals(Set.of(), schema.validate(record), line);
            assertEquals(6003, record.get("class_uid").asInt(), line);
        }
    }

    private List<String> auditLines(Predicate<String> p) {
        return node.logLines().stream().filter(l -> l.contains(AUDIT_PREFIX)).filter(p).collect(Collectors.toList());
    }

    private void awaitAuditLine(String what, Predicate<String> p) throws InterruptedException {
        Await.until("an audit line for " + what + " in " + node.serverLogFile(), Duration.ofSeconds(WAIT_S),
                () -> !auditLines(p).isEmpty());
    }
}
