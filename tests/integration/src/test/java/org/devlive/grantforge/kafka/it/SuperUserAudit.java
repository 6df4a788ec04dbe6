package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * {@code grantforge.audit.super.users.mutations=true} on a real node in offline mode (the audit goes to the log): the
 * super user's creation and deletion of a topic are audited (as Kafka asks them: CREATE and DELETE on the cluster, by
 * {@code CREATE_TOPICS} and {@code DELETE_TOPICS}), its produce is not, and neither is any
 * {@code CLUSTER_ACTION} of the principals the node's broker and controller use between them (their registration and
 * heartbeats, which never stop). One subclass per release.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SuperUserAudit {

    private static final long WAIT_S = 30;
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
        // the broker half heartbeats to the controller half as User:controller all along (CLUSTER_ACTION, which Kafka
        // asks to report when allowed): audited as a mutation, it would be here within the fold window
        assertEquals(List.of(), auditLines(l -> l.contains("operation = CLUSTER_ACTION")),
                "the nodes' requests among themselves are never audited");
        assertEquals(List.of(), auditLines(l -> l.contains("User:admin is Allowed operation = WRITE")),
                "a super user's produce is not a mutation");
    }

    private List<String> auditLines(Predicate<String> p) {
        return node.logLines().stream().filter(l -> l.contains("[grantforge.audit]")).filter(p).collect(Collectors.toList());
    }

    private void awaitAuditLine(String what, Predicate<String> p) throws InterruptedException {
        Await.until("an audit line for " + what + " in " + node.serverLogFile(), Duration.ofSeconds(WAIT_S),
                () -> !auditLines(p).isEmpty());
    }
}
