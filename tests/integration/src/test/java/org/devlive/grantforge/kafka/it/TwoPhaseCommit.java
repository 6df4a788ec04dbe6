package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Kafka 4.1's {@code TWO_PHASE_COMMIT} on a real node: a broker asks it, after WRITE, of the transactional id of an
 * {@code InitProducerId} that enables two-phase commit (KIP-939). The release's producer does not send that request
 * yet (its version 6 is unstable), so it is sent on the wire by {@link RawKafkaConnection}, to a node that enables
 * both; the ordinary transactional producer is a real one. Policies: alice has {@code write} and
 * {@code two_phase_commit} on {@code tx-*}, bob {@code write}, carol {@code all}. Then the policy file is replaced by
 * one whose service type predates the operation: the node keeps answering, refuses it to everyone and says why.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class TwoPhaseCommit {
    private static final Set<Errors> NOT_YET = EnumSet.of(Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
            Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.CONCURRENT_TRANSACTIONS);
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final String kafkaVersion;
    private Path work;
    private Path policyFile;
    private KafkaNode node;

    TwoPhaseCommit(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startNode() throws IOException {
        work = Files.createTempDirectory("two-phase-commit");
        policyFile = work.resolve("policies.json");
        GrantForgeSnapshot.writePolicies(policyFile, "kafka-2pc", List.of(
                policy(1, "alice", "\"write\",\"two_phase_commit\""), policy(2, "bob", "\"write\""),
                policy(3, "carol", "\"all\"")));
        node = KafkaNode.builder().name("two-phase-commit-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .policyFile(policyFile)
                .property("transaction.two.phase.commit.enable", "true")
                .property("unstable.api.versions.enable", "true")
                .start();
        // a real transactional producer first: its FindCoordinator creates the transaction log
        initTransactions("bob", "tx-bob-first");
    }

    @AfterAll
    void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    @Order(1)
    void twoPhaseCommitIsGrantedByItsAccessTypeAndByAllOnly() throws Exception {
        assertEquals(Errors.NONE, initTwoPhaseCommit("alice", "tx-alice"));
        assertEquals(Errors.NONE, initTwoPhaseCommit("carol", "tx-carol"));
        assertEquals(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, initTwoPhaseCommit("bob", "tx-bob"));
        // bob's write is enough for an ordinary transactional producer
        initTransactions("bob", "tx-bob");
    }

    @Test
    @Order(2)
    void kafkaAclsListShowsTwoPhaseCommit() {
        ToolRun list = node.runTool("admin", node.dist().aclCommandClass(), List.of("--list"));
        assertEquals(0, list.exitCode(), "kafka-acls --list: " + list);
        assertTrue(list.stdout().lines().anyMatch(l -> l.contains("principal=User:alice")
                && l.contains("operation=TWO_PHASE_COMMIT") && l.contains("permissionType=ALLOW")), list.stdout());
        assertTrue(list.stdout().contains("name=tx-, patternType=PREFIXED"), list.stdout());
    }

    @Test
    @Order(3)
    void aServiceTypeThatPredatesItKeepsTheClusterServedAndRefusesItToEveryone() throws Exception {
        String current = Files.readString(policyFile, StandardCharsets.UTF_8);
        String older = current
                .replaceAll("\\{\\s*\"name\":\\s*\"two_phase_commit\",\\s*\"impliedGrants\":\\s*\\[\\s*]\\s*},?", "")
                .replaceAll("\"two_phase_commit\",\\s*", "")
                .replaceAll(",\\s*\"two_phase_commit\"", "")
                .replace("\"policyVersion\":1", "\"policyVersion\":2");
        assertTrue(!older.contains("two_phase_commit") && older.contains("\"policyVersion\":2"), older);
        Path next = work.resolve("policies.next.json");
        Files.writeString(next, older, StandardCharsets.UTF_8);
        Files.move(next, policyFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        Await.until("policy version 2 applied", WAIT, () -> node.logText().contains("applied policy version 2 of service kafka-2pc"));
        assertTrue(node.logText().contains("predates Kafka's TWO_PHASE_COMMIT (no access type `two_phase_commit`)"),
                "one warning names the missing access type:\n" + node.logText());

        assertEquals(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, initTwoPhaseCommit("carol", "tx-carol-2"),
                "refused even to all");
        assertEquals(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, initTwoPhaseCommit("alice", "tx-alice-2"));
        initTransactions("alice", "tx-alice-3");
    }

    /** A policy on transactional ids {@code tx-*} allowing {@code user} the access types {@code accessTypes}. */
    private static String policy(int id, String user, String accessTypes) {
        return "{\"id\":\"" + id + "\",\"name\":\"" + user + " transacts\",\"type\":\"ACCESS\","
                + "\"priority\":\"NORMAL\",\"document\":{\"resources\":{\"transactional_id\":{\"values\":[\"tx-*\"],"
                + "\"excludes\":false,\"recursive\":false}},\"allow\":[{\"users\":[\"" + user + "\"],\"groups\":[],"
                + "\"roles\":[],\"accessTypes\":[" + accessTypes + "],\"conditions\":[],\"maskType\":null,"
                + "\"maskValue\":null,\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],"
                + "\"validity\":[]}}";
    }

    /** {@code InitProducerId} v6 with two-phase commit enabled, as {@code user}, until the coordinator answers. */
    private Errors initTwoPhaseCommit(String user, String transactionalId) throws Exception {
        try (RawKafkaConnection connection = RawKafkaConnection.open(node, user)) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                InitProducerIdResponse response = connection.send(new InitProducerIdRequest.Builder(
                        new InitProducerIdRequestData().setTransactionalId(transactionalId)
                                .setTransactionTimeoutMs(60_000).setEnable2Pc(true)).build((short) 6));
                Errors error = response.error();
                if (!NOT_YET.contains(error) || System.nanoTime() > deadline) {
                    return error;
                }
                Thread.sleep(200);
            }
        }
    }

    /** A real transactional producer of {@code user} starts: WRITE on its transactional id suffices. */
    private void initTransactions(String user, String transactionalId) {
        Properties extra = new Properties();
        extra.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        try (KafkaProducer<String, String> producer = node.producer(user, extra)) {
            producer.initTransactions();
        }
    }
}
