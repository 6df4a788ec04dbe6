package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Hybrid mode on a real Kafka node (broker and controller at once) with real clients: {@code GrantForgeHybridAuthorizer}
 * on the e2e policies (alice may read and write {@code orders}, is denied writing {@code payments}; everyone may
 * describe topics) beside Kafka ACLs created through the Admin API that say otherwise. A topic a policy covers follows
 * the policy whatever its ACLs say; a topic no policy covers follows its ACLs, whose answers are audited as enforced
 * {@code NATIVE} with the ACL behind them and counted in {@code HybridAclDecisions}; once the policies cover the
 * traffic, no question goes to the ACLs. One subclass per release ({@code HybridModeKafka<version>Test}).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class HybridMode {
    private static final long WAIT_S = 30;
    private static final List<AclBinding> ACLS = List.of(
        acl("orders", "User:alice", AclOperation.READ, AclPermissionType.DENY),
        acl("payments", "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW),
        acl("inventory", "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW));
    private static final String INVENTORY_ACL = "ALLOW ACL TOPIC:LITERAL:inventory User:alice from * ALLOW WRITE";

    private final String version;
    private final Path work;
    private KafkaNode node;
    private Jmx jmx;
    private Path policies;

    HybridMode(String version) {
        this.version = version;
        try {
            this.work = Files.createTempDirectory("hybrid-mode");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeAll
    void start() throws Exception {
        policies = work.resolve("policies.json");
        Files.copy(ItPaths.snapshot("e2e.json"), policies);
        jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("hybrid-" + version).kafkaVersion(version)
            .authorizer("org.devlive.grantforge.kafka.agent." + (version.compareTo("4.1") >= 0 ? "Monitorable" : "")
                + "GrantForgeHybridAuthorizer")
            .policyFile(policies)
            .property("grantforge.policy.file.poll.interval.ms", "200")
            .property("grantforge.audit.fold.window.ms", "1000")
            .logLevel("org.devlive.grantforge.kafka.agent.ComparingAuthorizer", "DEBUG");
        jmx.jvmArgs().forEach(builder::jvmArg);
        node = builder.start();
        try (Admin admin = node.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("payments", 1, (short) 1),
                new NewTopic("inventory", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            admin.createAcls(ACLS).all().get(WAIT_S, TimeUnit.SECONDS);
            Await.until("the node holds the ACLs", Duration.ofSeconds(WAIT_S),
                () -> admin.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS).size() == ACLS.size());
        }
    }

    @AfterAll
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void policiesDecideWhereTheySpeakAndTheAclsAnswerTheRest() throws Exception {
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("alice produces to orders", "produced");
        expected.put("alice consumes orders in alice-1 (a DENY ACL says no, the policy yes)", "read");
        expected.put("alice produces to payments (an ACL allows, the policy denies)",
            "refused: TOPIC_AUTHORIZATION_FAILED (29)");
        expected.put("alice produces to inventory (no policy: her ACL allows)", "produced");
        expected.put("bob produces to inventory (no policy: no ACL allows)", "refused: TOPIC_AUTHORIZATION_FAILED (29)");
        Map<String, String> answers = new LinkedHashMap<>();
        answers.put("alice produces to orders", produce("alice", "orders"));
        answers.put("alice consumes orders in alice-1 (a DENY ACL says no, the policy yes)",
            consume("alice", "orders", "alice-1"));
        answers.put("alice produces to payments (an ACL allows, the policy denies)", produce("alice", "payments"));
        answers.put("alice produces to inventory (no policy: her ACL allows)", produce("alice", "inventory"));
        answers.put("bob produces to inventory (no policy: no ACL allows)", produce("bob", "inventory"));
        assertEquals(expected, answers);

        assertTrue(metric("HybridAclDecisions") >= 2, "alice's and bob's writes to inventory went to the ACLs");
        long share = metric("HybridAclSharePercent");
        assertTrue(share > 0 && share < 100, "some questions were the ACLs', most the policies': " + share);
        if (version.compareTo("4.1") >= 0) {
            assertEquals(metric("HybridAclDecisions"), pluginMetric("hybrid-acl-decisions"));
        }
        Await.until("alice's write to inventory audited as Kafka's, with its ACL", Duration.ofSeconds(WAIT_S),
            () -> !logged("[grantforge.audit]", "Principal = User:alice is Allowed operation = WRITE",
                "topic:inventory", "by Kafka's ACLs in hybrid mode, no policy deciding (" + INVENTORY_ACL + ")").isEmpty());
        Await.until("bob's refusal audited as Kafka's", Duration.ofSeconds(WAIT_S),
            () -> !logged("[grantforge.audit]", "Principal = User:bob is Denied operation = WRITE", "topic:inventory",
                "by Kafka's ACLs in hybrid mode, no policy deciding (no ACL allows it)").isEmpty());
        assertEquals(List.of(), logged("[grantforge.audit]", "User:alice is Denied operation = WRITE", "topic:inventory"),
            "the agent never refused what it left to the ACLs");
        // the deny of WRITE denies DESCRIBE too: the producer is refused at its metadata request
        Await.until("the policy's deny audited as GrantForge's", Duration.ofSeconds(WAIT_S),
            () -> !logged("[grantforge.audit]", "Principal = User:alice is Denied operation = ", "topic:payments",
                "based on policy 5").isEmpty());

        // the policies now cover the traffic: no question goes to the ACLs any more
        ObjectNode covering = (ObjectNode) new ObjectMapper().readTree(policies.toFile());
        ((ArrayNode) covering.get("policies")).add(PolicyJson.allowing("9001", "alice writes inventory", "topic", "inventory", "alice", "write"));
        install(covering, 2);
        long before = metric("HybridAclDecisions");
        assertEquals("produced", produce("alice", "inventory"));
        assertEquals("produced", produce("alice", "orders"));
        assertEquals("read", consume("alice", "orders", "alice-1"));
        assertEquals(before, metric("HybridAclDecisions"),
            "no question of this traffic was left to the ACLs: " + logged("no policy decides"));
    }

    // ---------------------------------------------------------------------------------------------

    private static AclBinding acl(String topic, String principal, AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
            new AccessControlEntry(principal, "*", operation, permission));
    }

    private String produce(String user, String topic) {
        return Answers.produce(node, user, topic);
    }

    private String consume(String user, String topic, String group) {
        Properties fromStart = new Properties();
        fromStart.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = node.consumer(user, group, fromStart)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                if (!consumer.poll(Duration.ofMillis(500)).isEmpty()) {
                    consumer.commitSync(Duration.ofSeconds(WAIT_S));
                    return "read";
                }
            }
            return "nothing read in 20 s";
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }

    private void install(ObjectNode snapshot, int version) throws Exception {
        snapshot.put("policyVersion", version);
        Path next = work.resolve("next-" + version + ".json");
        new ObjectMapper().writeValue(next.toFile(), snapshot);
        Files.move(next, policies, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Await.until("policy version " + version + " applied", Duration.ofSeconds(WAIT_S),
            () -> metric("SnapshotVersion") == version);
    }

    private long metric(String attribute) {
        try {
            return jmx.read("org.devlive.grantforge.kafka:type=Agent,role=broker,*", attribute).values().stream()
                .mapToLong(read -> ((Number) read.get(attribute)).longValue()).max().orElseThrow();
        } catch (Exception e) {
            throw new AssertionError("cannot read " + attribute + " over JMX", e);
        }
    }

    private long pluginMetric(String metric) {
        try {
            return jmx.read("*:type=plugins,class=MonitorableGrantForgeHybridAuthorizer,role=broker,*", metric).values()
                .stream().mapToLong(read -> ((Number) read.get(metric)).longValue()).max().orElseThrow();
        } catch (Exception e) {
            throw new AssertionError("cannot read the plugin metric " + metric, e);
        }
    }

    private List<String> logged(String... texts) {
        return node.logLines().stream().filter(line -> java.util.Arrays.stream(texts).allMatch(line::contains)).toList();
    }
}
