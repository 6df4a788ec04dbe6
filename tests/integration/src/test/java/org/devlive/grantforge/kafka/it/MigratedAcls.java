package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * {@code migrate-acls}, proved end to end on one Kafka release: a node running Kafka's own {@code StandardAuthorizer}
 * holds a few hundred ACLs of every kind (created with {@code Admin.createAcls}); the command migrates them;
 * {@code --verify} finds no disagreement with Kafka's authorizer on the snapshot it wrote, and finds one on a
 * snapshot altered by hand; the report lists exactly the ACLs that could not be expressed; and a node running
 * the agent on the migrated snapshot answers real clients (produce, consume, list, describe configs, as alice,
 * bob and carol) as the first node did.
 *
 * <p>One subclass per Kafka release ({@code MigrateAclsKafka<version>Test}): the source node, the command's
 * classpath (that release's jars, as an operator runs it) and the target node are all of that release.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MigratedAcls {
    private final String version;

    /** @param version the release to run; {@code tests/kafka-dists/kafka-<version>} must be built */
    MigratedAcls(String version) {
        this.version = version;
    }
    private static final String STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    private static final long WAIT_S = 30;
    private static final List<String> TOPICS = List.of("orders", "orders-eu", "payments", "audit", "news", "ops-metrics");
    /** Synthetic users (no client logs in as them): the bulk of the ACLs, asked by --verify only. */
    private static final int BULK_USERS = 60;

    /** The ACLs no policy expresses exactly, each with the words the report must say about it. */
    private static final Map<AclBinding, String> NOT_MIGRATED = new LinkedHashMap<>();
    private static final List<AclBinding> ACLS = new ArrayList<>();

    static {
        // what the clients below meet
        ACLS.add(allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ));
        ACLS.add(allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.WRITE));
        ACLS.add(allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.DESCRIBE_CONFIGS));
        ACLS.add(allow(ResourceType.GROUP, "alice-", PatternType.PREFIXED, "User:alice", "*", AclOperation.READ));
        ACLS.add(allow(ResourceType.TOPIC, "orders", PatternType.PREFIXED, "User:bob", "*", AclOperation.READ));
        ACLS.add(allow(ResourceType.GROUP, "bob-1", PatternType.LITERAL, "User:bob", "*", AclOperation.READ));
        ACLS.add(allow(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", "*", AclOperation.DESCRIBE));
        ACLS.add(deny(ResourceType.TOPIC, "payments", PatternType.LITERAL, "User:bob", "*", AclOperation.DESCRIBE));
        ACLS.add(allow(ResourceType.TOPIC, "audit", PatternType.LITERAL, "User:carol", "127.0.0.1", AclOperation.WRITE));
        ACLS.add(allow(ResourceType.TOPIC, "audit", PatternType.LITERAL, "User:carol", "10.9.9.9", AclOperation.READ));
        ACLS.add(allow(ResourceType.TOPIC, "audit", PatternType.LITERAL, "User:carol", "*", AclOperation.ALTER_CONFIGS));
        ACLS.add(allow(ResourceType.GROUP, "carol-", PatternType.PREFIXED, "User:carol", "*", AclOperation.READ));
        ACLS.add(allow(ResourceType.TOPIC, "ops-", PatternType.PREFIXED, "User:carol", "*", AclOperation.WRITE));
        ACLS.add(deny(ResourceType.TOPIC, "ops-", PatternType.PREFIXED, "User:carol", "127.0.0.1", AclOperation.ALL));
        // every other resource type, and an IPv6 address as Kafka compares it
        ACLS.add(allow(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:alice", "*", AclOperation.IDEMPOTENT_WRITE));
        ACLS.add(allow(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:bob", "0:0:0:0:0:0:0:1", AclOperation.DESCRIBE));
        ACLS.add(allow(ResourceType.TRANSACTIONAL_ID, "tx-", PatternType.PREFIXED, "User:alice", "*", AclOperation.WRITE));
        // ALL grants Kafka 4.1's TWO_PHASE_COMMIT on both sides (asked by --verify where the release has it)
        ACLS.add(allow(ResourceType.TRANSACTIONAL_ID, "tx-", PatternType.PREFIXED, "User:bob", "*", AclOperation.ALL));
        ACLS.add(allow(ResourceType.DELEGATION_TOKEN, "tok-1", PatternType.LITERAL, "User:alice", "*", AclOperation.DESCRIBE));
        ACLS.add(allow(ResourceType.USER, "alice", PatternType.LITERAL, "User:alice", "*", AclOperation.CREATE_TOKENS));
        // Group principals: migrated as GrantForge groups, reported as a changed meaning
        ACLS.add(allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "Group:ops", "*", AclOperation.ALTER_CONFIGS));
        ACLS.add(deny(ResourceType.TOPIC, "payments", PatternType.LITERAL, "Group:ops", "*", AclOperation.DELETE));
        // what no policy expresses exactly
        notMigrated(allow(ResourceType.TOPIC, "news", PatternType.LITERAL, "User:alice", "client.example.com", AclOperation.READ),
            "the host `client.example.com` is not an IP address");
        notMigrated(allow(ResourceType.TOPIC, "news", PatternType.LITERAL, "User:bob", "10.0.0.0/8", AclOperation.READ),
            "the host `10.0.0.0/8` is not an IP address");
        notMigrated(allow(ResourceType.TOPIC, "news", PatternType.LITERAL, "User:bob", "::1", AclOperation.WRITE),
            "the host `::1` is not an IP address");
        notMigrated(allow(ResourceType.TOPIC, "news", PatternType.LITERAL, "ServiceAccount:etl", "*", AclOperation.READ),
            "principals of type `ServiceAccount`");
        notMigrated(deny(ResourceType.TOPIC, "audit", PatternType.LITERAL, "ServiceAccount:etl", "*", AclOperation.WRITE),
            "principals of type `ServiceAccount`");
        notMigrated(allow(ResourceType.GROUP, "odd*group", PatternType.LITERAL, "User:alice", "*", AclOperation.READ),
            "the name `odd*group` holds `*` or `?`");
        notMigrated(allow(ResourceType.TOPIC, "news", PatternType.LITERAL, "Group:*", "*", AclOperation.READ),
            "`Group:*` is no wildcard");
        // the bulk: four ACLs per synthetic user, a deny of WRITE (which GrantForge extends to DESCRIBE) for one
        for (int i = 0; i < BULK_USERS; i++) {
            String user = "User:user-" + i;
            ACLS.add(allow(ResourceType.TOPIC, "app-" + i, PatternType.LITERAL, user, "*", AclOperation.READ));
            ACLS.add(allow(ResourceType.TOPIC, "app-" + i + "-", PatternType.PREFIXED, user, "*", AclOperation.WRITE));
            ACLS.add(allow(ResourceType.GROUP, "cg-" + i, PatternType.LITERAL, user, "*", AclOperation.READ));
            ACLS.add(deny(ResourceType.TOPIC, "app-" + i, PatternType.LITERAL, user, "*", AclOperation.CREATE));
        }
        ACLS.add(deny(ResourceType.TOPIC, "app-7", PatternType.LITERAL, "User:user-7", "*", AclOperation.WRITE));
    }

    private static AclBinding allow(ResourceType type, String name, PatternType pattern, String principal, String host,
                                    AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
            new AccessControlEntry(principal, host, operation, AclPermissionType.ALLOW));
    }

    private static AclBinding deny(ResourceType type, String name, PatternType pattern, String principal, String host,
                                   AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
            new AccessControlEntry(principal, host, operation, AclPermissionType.DENY));
    }

    private static void notMigrated(AclBinding acl, String reason) {
        ACLS.add(acl);
        NOT_MIGRATED.put(acl, reason);
    }

    private KafkaNode source;
    private Path work;
    private Path commandConfig;
    private Map<String, String> sourceAnswers;

    @BeforeAll
    void startTheSourceClusterWithItsAcls() throws Exception {
        work = Files.createTempDirectory("migrate-acls");
        source = KafkaNode.builder().name("migrate-source-" + version).kafkaVersion(version)
            .authorizer(STANDARD_AUTHORIZER).start();
        try (Admin admin = source.admin("admin")) {
            prepare(admin);
            admin.createAcls(ACLS).all().get(WAIT_S, TimeUnit.SECONDS);
            // the controller has them; the broker's authorizer gets them from the metadata log a moment later
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            int listed;
            while ((listed = admin.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS).size())
                    < ACLS.size()) {
                assertTrue(System.nanoTime() < deadline, "the broker lists " + listed + " of " + ACLS.size() + " ACLs");
                Thread.sleep(100);
            }
            assertEquals(ACLS.size(), listed, "every ACL was created");
        }
        Properties config = source.clientProps("admin");
        commandConfig = work.resolve("admin.properties");
        StringBuilder text = new StringBuilder();
        config.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Files.writeString(commandConfig, text.toString());
    }

    @AfterAll
    void stop() {
        if (source != null) {
            source.close();
        }
    }

    @Test
    void theMigratedSnapshotVerifiesAndAnswersClientsAsKafkaDid() throws Exception {
        Path out = work.resolve("out");
        // Group:ops's ALLOW and DENY, and ServiceAccount:etl's DENY left out, can allow more than Kafka did.
        Run unaccepted = migrateAcls("--out", work.resolve("unaccepted").toString(), "--service", "kafka-migrated");
        assertEquals(1, unaccepted.exit, unaccepted.output);
        assertTrue(unaccepted.output.contains("migrate-acls: 3 ACLs, as migrated, can allow more than Kafka did:"),
            unaccepted.output);
        assertEquals(3, unaccepted.output.lines().filter(l -> l.startsWith("  WIDENS ")).count(), unaccepted.output);
        assertTrue(unaccepted.output.lines().anyMatch(l -> l.startsWith("  WIDENS ") && l.contains("ServiceAccount:etl")
            && l.contains("DENY")), unaccepted.output);
        assertTrue(unaccepted.output.contains("rerun with --accept-widening"), unaccepted.output);
        Run migrated = migrateAcls("--out", out.toString(), "--service", "kafka-migrated", "--verify", "--accept-widening");
        assertEquals(0, migrated.exit, migrated.output);
        assertTrue(migrated.output.contains(" ms; 0 disagreements, "), migrated.output);
        assertFalse(migrated.output.contains("DISAGREE"), migrated.output);
        assertFalse(migrated.output.contains("verify: not asked"),
            "the agent knows every operation of Kafka " + version + ":\n" + migrated.output);
        String operations = version.compareTo("4.1") >= 0 ? " x 13 operations)" : " x 12 operations)";
        assertTrue(migrated.output.contains(operations), "TWO_PHASE_COMMIT is asked where Kafka has it:\n" + migrated.output);
        // the reported narrowings are the ones designed: Group principals, the deny of WRITE, what was left out
        assertTrue(migrated.output.contains("NARROWER  User:user-7 from 127.0.0.1 DESCRIBE TOPIC `app-7`"), migrated.output);
        assertTrue(migrated.output.contains("NARROWER  Group:ops from 127.0.0.1 ALTER_CONFIGS TOPIC `orders`"), migrated.output);
        assertTrue(migrated.output.contains("NARROWER  ServiceAccount:etl from 127.0.0.1 READ TOPIC `news`"), migrated.output);

        // a cluster too large to ask every principal about every resource: each about its own ACLs' resources
        Run bounded = migrateAcls("--verify", "--snapshot", out.resolve("grantforge-snapshot.json").toString(),
            "--max-questions", "1000");
        assertEquals(0, bounded.exit, bounded.output);
        assertTrue(bounded.output.contains("each principal is asked about the resources of its own ACLs and of User:*'s"),
            bounded.output);
        assertTrue(bounded.output.contains(" ms; 0 disagreements, "), bounded.output);
        assertTrue(bounded.output.contains("NARROWER  User:user-7 from 127.0.0.1 DESCRIBE TOPIC `app-7`"), bounded.output);

        String report = Files.readString(out.resolve("report.txt"));
        List<String> notMigratedLines = report.lines().filter(l -> l.startsWith("not migrated")).collect(Collectors.toList());
        assertEquals(NOT_MIGRATED.size(), notMigratedLines.size(), report);
        for (Map.Entry<AclBinding, String> acl : NOT_MIGRATED.entrySet()) {
            String who = acl.getKey().pattern().name() + " " + acl.getKey().entry().principal() + " from "
                + acl.getKey().entry().host();
            assertTrue(notMigratedLines.stream().anyMatch(l -> l.contains(who) && l.contains(acl.getValue())),
                "the report names " + who + " (" + acl.getValue() + "):\n" + report);
        }
        assertTrue(report.startsWith("migrate-acls: " + ACLS.size() + " ACLs read, " + (ACLS.size() - NOT_MIGRATED.size())
            + " migrated"), report);
        JsonNode requests = new ObjectMapper().readTree(out.resolve("policy-requests.json").toFile());
        assertTrue(requests.isArray() && requests.size() > 100, "one request body per policy");

        sourceAnswers = clientAnswers(source);
        System.out.println("[" + getClass().getSimpleName() + "] StandardAuthorizer answered: " + sourceAnswers);
        KafkaNode agentNode = KafkaNode.builder().name("migrate-target-" + version).kafkaVersion(version)
            .policyFile(out.resolve("grantforge-snapshot.json")).start();
        try {
            try (Admin admin = agentNode.admin("admin")) {
                prepare(admin);
            }
            assertEquals(sourceAnswers, clientAnswers(agentNode), "the agent answers the clients as StandardAuthorizer did");
        } finally {
            agentNode.close();
        }
    }

    @Test
    void verifyFailsOnASnapshotThatNoLongerDenies() throws Exception {
        Path out = work.resolve("altered");
        Run migrated = migrateAcls("--out", out.toString(), "--accept-widening");
        assertEquals(0, migrated.exit, migrated.output);
        ObjectMapper json = new ObjectMapper();
        ObjectNode snapshot = (ObjectNode) json.readTree(out.resolve("grantforge-snapshot.json").toFile());
        for (JsonNode policy : snapshot.get("policies")) {
            ((ObjectNode) policy.get("document")).putArray("deny");
        }
        Path altered = out.resolve("without-denies.json");
        json.writeValue(altered.toFile(), snapshot);

        Run verified = migrateAcls("--verify", "--snapshot", altered.toString());
        assertEquals(1, verified.exit, verified.output);
        assertTrue(verified.output.contains("DISAGREE  User:bob from 127.0.0.1 DESCRIBE TOPIC `payments`: Kafka DENIED,"
            + " the agent ALLOWED"), verified.output);
        assertTrue(verified.output.contains("why Kafka: the ACLs that match the resource, principal and address: "
            + "TOPIC:LITERAL:* User:* from * ALLOW DESCRIBE; TOPIC:LITERAL:payments User:bob from * DENY DESCRIBE"), verified.output);
        assertTrue(verified.output.contains("why the agent (explain):"), verified.output);
    }

    // ---------------------------------------------------------------------------------------------

    private static void prepare(Admin admin) throws Exception {
        admin.createTopics(TOPICS.stream().map(t -> new NewTopic(t, 1, (short) 1)).collect(Collectors.toList()))
            .all().get(WAIT_S, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS).containsAll(TOPICS)) {
            assertTrue(System.nanoTime() < deadline, "topics listed");
            Thread.sleep(100);
        }
    }

    /** What the node answers alice, bob and carol, in words; the admin first writes two records per topic. */
    private static Map<String, String> clientAnswers(KafkaNode node) throws Exception {
        try (KafkaProducer<String, String> producer = node.producer("admin")) {
            for (String topic : TOPICS) {
                producer.send(new ProducerRecord<>(topic, "k", "first")).get(WAIT_S, TimeUnit.SECONDS);
                producer.send(new ProducerRecord<>(topic, "k", "second")).get(WAIT_S, TimeUnit.SECONDS);
            }
        }
        Map<String, String> answers = new LinkedHashMap<>();
        answers.put("alice produces to orders", Answers.produce(node, "alice", "orders"));
        answers.put("alice produces to payments", Answers.produce(node, "alice", "payments"));
        answers.put("bob produces to orders", Answers.produce(node, "bob", "orders"));
        answers.put("carol produces to audit from 127.0.0.1", Answers.produce(node, "carol", "audit"));
        answers.put("carol produces to ops-metrics from 127.0.0.1", Answers.produce(node, "carol", "ops-metrics"));
        answers.put("alice consumes orders in alice-1", consume(node, "alice", "alice-1", "orders"));
        answers.put("bob consumes orders-eu in bob-1", consume(node, "bob", "bob-1", "orders-eu"));
        answers.put("bob consumes orders in bob-2", consume(node, "bob", "bob-2", "orders"));
        answers.put("carol consumes audit in carol-1", consume(node, "carol", "carol-1", "audit"));
        for (String user : List.of("alice", "bob", "carol")) {
            answers.put(user + " lists the topics", listTopics(node, user));
        }
        answers.put("alice describes the configs of orders", describeConfigs(node, "alice", "orders"));
        answers.put("bob describes the configs of orders", describeConfigs(node, "bob", "orders"));
        answers.put("carol describes the configs of audit", describeConfigs(node, "carol", "audit"));
        return answers;
    }

    private static String consume(KafkaNode node, String user, String group, String topic) {
        try (KafkaConsumer<String, String> consumer = node.consumer(user, group)) {
            consumer.subscribe(List.of(topic));
            int read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (read < 2 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    read++;
                }
            }
            if (read < 2) {
                // not an answer: a node that serves nothing must not pass because the other serves nothing too
                throw new AssertionError(user + " read " + read + " of the admin's 2 records of " + topic + " in 20 s on " + node);
            }
            consumer.commitSync(Duration.ofSeconds(WAIT_S));
            return "read at least 2";
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }

    private static String listTopics(KafkaNode node, String user) {
        try (Admin admin = node.admin(user)) {
            Set<String> seen = new TreeSet<>(admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS));
            seen.retainAll(TOPICS);
            return "sees " + seen;
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }

    private static String describeConfigs(KafkaNode node, String user, String topic) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = node.admin(user)) {
            Collection<?> entries = admin.describeConfigs(List.of(resource)).all().get(WAIT_S, TimeUnit.SECONDS)
                .get(resource).entries();
            return entries.isEmpty() ? "no configs" : "described";
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }

    // ---------------------------------------------------------------------------------------------

    private static final class Run {
        final int exit;
        final String output;

        Run(int exit, String output) {
            this.exit = exit;
            this.output = output;
        }
    }

    /** The command as an operator runs it: the agent JAR and Kafka's jars on the classpath of a JVM of its own. */
    private Run migrateAcls(String... options) throws IOException, InterruptedException {
        List<String> cmd = NodeTools.shortLivedJava();
        cmd.add("-cp");
        cmd.add(ItPaths.agentJar().toAbsolutePath() + File.pathSeparator + KafkaDist.of(version).classpath());
        cmd.add("org.devlive.grantforge.kafka.agent.tools.Main");
        cmd.add("migrate-acls");
        cmd.add("--bootstrap-server");
        cmd.add(source.bootstrapServers());
        cmd.add("--command-config");
        cmd.add(commandConfig.toString());
        cmd.addAll(List.of(options));
        Path log = Files.createTempFile(work, "migrate-acls", ".log");
        Process process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError("migrate-acls did not finish in 5 minutes:\n" + Files.readString(log));
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println("[migrate-acls " + String.join(" ", options) + "] exit " + process.exitValue() + "\n"
            + output.lines().filter(l -> !l.startsWith("NARROWER")).limit(80).collect(Collectors.joining("\n")));
        return new Run(process.exitValue(), output);
    }
}
