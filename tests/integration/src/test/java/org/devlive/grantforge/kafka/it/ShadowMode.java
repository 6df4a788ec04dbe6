package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Shadow and compare modes on real Kafka nodes with real clients. A node (or a cluster) runs
 * {@code GrantForgeShadowAuthorizer}: Kafka's ACLs, created through the Admin API, decide; the agent, in offline mode,
 * is asked beside them. {@code migrate-acls} turns the ACLs into policies; with one ALLOW taken out of them, the
 * clients are still served by the ACLs and the agent shows exactly that disagreement (principal, resource, operation
 * and count) in JMX, in {@code explain --disagreements} and in the audit log; with the policies as migrated, the same
 * traffic shows none. A node running {@code GrantForgeCompareAuthorizer} on policies that grant one thing more than
 * the ACLs serves the clients by the policies and shows the reverse disagreement.
 *
 * <p>One subclass per Kafka release ({@code ShadowModeKafka<version>Test}, a node that is broker and controller), and
 * {@code ShadowModeClusterKafka431Test} (one controller, three brokers). The flood of group names
 * ({@link DisagreementFlood}) runs on the oldest and the newest release only.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ShadowMode {
    private static final String PACKAGE = "org.devlive.grantforge.kafka.agent.";
    private static final long WAIT_S = 30;
    private static final int ALICE_WRITES = 5;
    private static final int BOB_WRITES = 3;
    /** More distinct names than the whole disagreement table holds (512 keys). */
    private static final int FLOODED_GROUPS = 2000;
    private static final String REFUSES = "GrantForge refuses what Kafka allows";
    private static final String ALLOWS = "GrantForge allows what Kafka refuses";
    private static final List<AclBinding> ACLS = List.of(
        allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ),
        allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.WRITE),
        allow(ResourceType.GROUP, "alice-", PatternType.PREFIXED, "User:alice", AclOperation.READ),
        allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", AclOperation.READ),
        allow(ResourceType.GROUP, "bob-", PatternType.PREFIXED, "User:bob", AclOperation.READ),
        allow(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", AclOperation.DESCRIBE));
    /** What Kafka's ACLs answer the traffic of {@link #traffic}: the clients must see exactly this in shadow mode. */
    private static final Map<String, String> KAFKAS_ANSWERS = new LinkedHashMap<>();

    static {
        KAFKAS_ANSWERS.put("alice produces to orders", "produced");
        KAFKAS_ANSWERS.put("bob produces to orders", "refused: TOPIC_AUTHORIZATION_FAILED (29)");
        KAFKAS_ANSWERS.put("alice consumes orders in alice-1", "read");
        KAFKAS_ANSWERS.put("bob consumes orders in bob-1", "read");
    }

    private final String version;
    private final boolean cluster;
    private final Path work;
    private final List<AutoCloseable> started = new ArrayList<>();

    /**
     * @param version the release to run
     * @param cluster one controller and three brokers, rather than one node that is both
     */
    ShadowMode(String version, boolean cluster) {
        this.version = version;
        this.cluster = cluster;
        try {
            this.work = Files.createTempDirectory("shadow-mode");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable closing : started) {
            closing.close();
        }
    }

    /** The class operators name: the Monitorable one on Kafka 4.1 and later, whose plugin metrics are checked too. */
    private String authorizerClass(String mode) {
        return PACKAGE + (monitorable() ? "Monitorable" : "") + "GrantForge" + mode + "Authorizer";
    }

    private boolean monitorable() {
        return version.compareTo("4.1") >= 0;
    }

    @Test
    void shadowModeShowsExactlyTheMissingAllowWhileKafkasAclsServeTheClients() throws Exception {
        Migrated migrated = startMigrated("Shadow", "shadow");
        Nodes nodes = migrated.nodes();
        ObjectNode snapshot = migrated.snapshot();
        Path policies = migrated.policies();

        // the policies as migrated, less alice's WRITE on orders
        ObjectNode missingOne = snapshot.deepCopy();
        assertEquals(1, changeAccess(missingOne, "alice", "write", false), "one ALLOW taken out");
        install(missingOne, 101, policies);
        nodes.awaitPolicyVersion(101);
        assertEquals(KAFKAS_ANSWERS, traffic(nodes), "the clients are served by Kafka's ACLs");
        Map<String, Long> expected = Map.of(key(REFUSES, "User:alice", "WRITE", "TOPIC:orders"), (long) ALICE_WRITES);
        Await.until("every disagreement counted", Duration.ofSeconds(WAIT_S), () -> nodes.disagreements().equals(expected));
        assertEquals(expected, nodes.disagreements());
        assertEquals((long) ALICE_WRITES, nodes.sum("ShadowGrantforgeRefuses"));
        assertEquals(0L, nodes.sum("ShadowGrantforgeAllows"));
        assertTrue(nodes.sum("ShadowAgreements") > 0);
        String basis = "ALLOW ACL TOPIC:LITERAL:orders User:alice from * ALLOW WRITE";
        assertTrue(nodes.table().contains("\tno policy\t" + basis), nodes.table());
        Await.until("the audit log counts every disagreement", Duration.ofSeconds(WAIT_S),
            () -> nodes.loggedDisagreements("shadow disagreement (Kafka decides): GrantForge refuses (no policy), "
                + "Kafka allows (" + basis + "); Principal = User:alice is Allowed operation = WRITE") == ALICE_WRITES);
        if (monitorable()) {
            assertEquals((long) ALICE_WRITES, nodes.pluginSum("Shadow", "shadow-grantforge-refuses"));
        }
        ToolRun explain = nodes.explainDisagreements();
        assertEquals(1, explain.exitCode(), explain.toString());
        assertTrue(explain.stdout().contains(basis) && explain.stdout().contains("User:alice"), explain.toString());

        // the policies as migrated: the same traffic, no disagreement
        install(snapshot, 102, policies);
        nodes.awaitPolicyVersion(102);
        long agreements = nodes.sum("ShadowAgreements");
        assertEquals(KAFKAS_ANSWERS, traffic(nodes));
        assertTrue(nodes.sum("ShadowAgreements") > agreements, "the traffic was compared");
        assertEquals((long) ALICE_WRITES, nodes.sum("ShadowGrantforgeRefuses"), "no new disagreement");
        assertEquals(0L, nodes.sum("ShadowGrantforgeAllows"));
        assertEquals(expected, nodes.disagreements());
    }

    @Test
    void compareModeServesThePoliciesAndShowsWhereTheyAreLooserThanTheAcls() throws Exception {
        Migrated migrated = startMigrated("Compare", "compare");
        Nodes nodes = migrated.nodes();
        ObjectNode looser = migrated.snapshot();
        Path policies = migrated.policies();
        assertEquals(1, changeAccess(looser, "bob", "write", true), "one grant more than the ACLs");
        install(looser, 103, policies);
        nodes.awaitPolicyVersion(103);

        Map<String, String> answers = traffic(nodes);
        Map<String, String> policiesAnswers = new LinkedHashMap<>(KAFKAS_ANSWERS);
        policiesAnswers.put("bob produces to orders", "produced");
        assertEquals(policiesAnswers, answers, "GrantForge decides");
        Map<String, Long> expected = Map.of(key(ALLOWS, "User:bob", "WRITE", "TOPIC:orders"), (long) BOB_WRITES);
        Await.until("every disagreement counted", Duration.ofSeconds(WAIT_S), () -> nodes.disagreements().equals(expected));
        assertEquals(0L, nodes.sum("ShadowGrantforgeRefuses"));
        assertTrue(nodes.table().contains("\tcompare\t" + ALLOWS + "\tUser:bob\tWRITE\tTOPIC:orders\t"), nodes.table());
        assertTrue(nodes.table().contains("\tno ACL allows it\n"), nodes.table());
        try (Admin admin = nodes.admin()) {
            assertEquals(ACLS.size(), admin.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS).size(),
                "kafka-acls still lists Kafka's ACLs in compare mode");
        }
        ToolRun explain = nodes.explainDisagreements();
        assertEquals(1, explain.exitCode(), explain.toString());
        assertTrue(explain.stdout().contains("compare") && explain.stdout().contains("User:bob"), explain.toString());

        // Kafka's authorizer log tells the enforced answers, not those of the ACLs nobody enforces
        assertEquals(List.of(), nodes.logged("Principal = User:bob is Denied operation = WRITE"),
            "bob's writes were allowed");
        assertEquals("refused: TOPIC_AUTHORIZATION_FAILED (29)", produce(nodes, "carol", 1), "neither side lets carol");
        Await.until("carol's refusal in Kafka's authorizer log", Duration.ofSeconds(WAIT_S), () -> !nodes.logged(
            "Principal = User:carol is Denied operation = WRITE", "based on GrantForge's policies (compare mode").isEmpty());

        // a DENY ACL is kept and compared, decides nothing, and its author is told so
        try (Admin admin = nodes.admin()) {
            admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
                new AccessControlEntry("User:bob", "*", AclOperation.WRITE, AclPermissionType.DENY))))
                .all().get(WAIT_S, TimeUnit.SECONDS);
        }
        Await.until("the WARN that the DENY ACL is not enforced", Duration.ofSeconds(WAIT_S), () -> !nodes.logged(
            "WARN", "the DENY ACL", "User:bob", "is kept and compared, not enforced").isEmpty());
        assertEquals("produced", produce(nodes, "bob", 1), "GrantForge's policies decide");
    }

    /** {@link DisagreementFlood}'s check, on the releases that run it. */
    void floodGroupNamesWhileAnotherPrincipalsDisagreementStaysNamed() throws Exception {
        Migrated migrated = startMigrated("Shadow", "flood");
        ObjectNode snapshot = migrated.snapshot();
        assertEquals(1, changeAccess(snapshot, "alice", "write", false), "one ALLOW taken out");
        assertEquals(1, changeAccess(snapshot, "bob", "write", true), "one grant more than the ACLs");
        ((ArrayNode) snapshot.get("policies"))
            .add(PolicyJson.allowing("9001", "mallory sees every group", "group", "*", "mallory", "describe"));
        install(snapshot, 104, migrated.policies());
        Nodes nodes = migrated.nodes();
        nodes.awaitPolicyVersion(104);

        // mallory has no ACL: Kafka refuses each group, GrantForge would allow it, a new name each time
        List<String> groups = new ArrayList<>();
        for (int i = 0; i < FLOODED_GROUPS; i++) {
            groups.add("flood-" + i);
        }
        try (Admin mallory = nodes.any().admin("mallory")) {
            mallory.describeConsumerGroups(groups).all().get(WAIT_S, TimeUnit.SECONDS);
            throw new AssertionError("Kafka's ACLs give mallory no group");
        } catch (java.util.concurrent.ExecutionException refused) {
            assertTrue(Refusals.of(refused).contains("GROUP_AUTHORIZATION_FAILED"), Refusals.of(refused));
        }
        assertEquals("produced", produce(nodes, "alice", ALICE_WRITES), "Kafka's ACLs serve alice");
        assertEquals(KAFKAS_ANSWERS.get("bob produces to orders"), produce(nodes, "bob", BOB_WRITES),
            "GrantForge would allow bob, Kafka's ACLs refuse him, and Kafka decides");

        String alicesRow = key(REFUSES, "User:alice", "WRITE", "TOPIC:orders");
        Await.until("alice's disagreement counted", Duration.ofSeconds(WAIT_S),
            () -> Long.valueOf(ALICE_WRITES).equals(nodes.disagreements().get(alicesRow)));
        long allows = nodes.sum("ShadowGrantforgeAllows");
        assertTrue(allows >= FLOODED_GROUPS, "every group name asked: " + allows);
        long overflow = nodes.sum("ShadowOverflow");
        assertTrue(overflow >= FLOODED_GROUPS / 2, "mallory's names past its share: " + overflow);
        assertEquals(0L, nodes.sum("ShadowUntracked"), "the overflow row counts them: none lost");
        String overflowRow = key(ALLOWS, "User:mallory", "DESCRIBE",
            "GROUP:(names not kept: past this principal's audit share)");
        assertEquals(overflow, nodes.disagreements().get(overflowRow), "the overflow row counts exactly: " + nodes.table());

        // in a cluster, mallory's questions and alice's writes may reach two brokers: each one's explain
        StringBuilder explained = new StringBuilder();
        for (ToolRun explain : nodes.explainEachBrokerWithDisagreements()) {
            assertEquals(1, explain.exitCode(), explain.toString());
            explained.append(explain.stdout());
        }
        assertTrue(explained.toString().contains("\n  " + overflow + " ShadowOverflow ("), explained.toString());
        assertTrue(explained.toString().matches("(?s).*\\n" + ALICE_WRITES + " +shadow +" + REFUSES
            + " +User:alice +WRITE +TOPIC:orders .*"), "alice's one disagreement stays named: " + explained);
    }

    // ---------------------------------------------------------------------------------------------
    // the traffic

    /** Real clients' requests, answered in words; each produce is one request, so each asks WRITE once. */
    private Map<String, String> traffic(Nodes nodes) {
        Map<String, String> answers = new LinkedHashMap<>();
        answers.put("alice produces to orders", produce(nodes, "alice", ALICE_WRITES));
        answers.put("bob produces to orders", produce(nodes, "bob", BOB_WRITES));
        answers.put("alice consumes orders in alice-1", consume(nodes, "alice", "alice-1"));
        answers.put("bob consumes orders in bob-1", consume(nodes, "bob", "bob-1"));
        return answers;
    }

    private static String produce(Nodes nodes, String user, int records) {
        Properties plain = new Properties();
        plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        plain.put(ProducerConfig.RETRIES_CONFIG, "0");
        plain.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        try (KafkaProducer<String, String> producer = nodes.producer(user, plain)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>("orders", user, "from " + user)).get(WAIT_S, TimeUnit.SECONDS);
            }
            return "produced";
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }

    private static String consume(Nodes nodes, String user, String group) {
        Properties fromStart = new Properties();
        fromStart.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = nodes.consumer(user, group, fromStart)) {
            consumer.subscribe(List.of("orders"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            int read = 0;
            while (read == 0 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> ignored : consumer.poll(Duration.ofMillis(500))) {
                    read++;
                }
            }
            if (read == 0) {
                throw new AssertionError(user + " read nothing of orders in 20 s");
            }
            consumer.commitSync(Duration.ofSeconds(WAIT_S));
            return "read";
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // the policies

    private static AclBinding allow(ResourceType type, String name, PatternType pattern, String principal,
                                    AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
            new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW));
    }

    /**
     * Takes {@code access} out of (or adds it to) the allow items of {@code user} in the policy of topic {@code orders};
     * returns the number of items changed.
     */
    private static int changeAccess(ObjectNode snapshot, String user, String access, boolean add) {
        int changed = 0;
        for (JsonNode policy : snapshot.get("policies")) {
            JsonNode topics = policy.path("document").path("resources").path("topic").path("values");
            if (!(topics.size() == 1 && topics.get(0).asText().equals("orders"))) {
                continue;
            }
            for (JsonNode item : policy.path("document").path("allow")) {
                boolean theUsers = false;
                for (JsonNode u : item.path("users")) {
                    theUsers |= u.asText().equals(user);
                }
                ArrayNode accesses = (ArrayNode) item.get("accessTypes");
                int at = -1;
                for (int i = 0; i < accesses.size(); i++) {
                    at = accesses.get(i).asText().equals(access) ? i : at;
                }
                if (theUsers && add && at < 0) {
                    accesses.add(access);
                    changed++;
                } else if (theUsers && !add && at >= 0) {
                    accesses.remove(at);
                    changed++;
                }
            }
        }
        return changed;
    }

    /** Writes the snapshot as policy version {@code version} over the policy file the agents read. */
    private void install(ObjectNode snapshot, int version, Path policies) throws IOException {
        snapshot.put("policyVersion", version);
        Path next = work.resolve("next-" + version + ".json");
        new ObjectMapper().writeValue(next.toFile(), snapshot);
        Files.move(next, policies, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static String key(String kind, String principal, String operation, String resource) {
        return kind + " " + principal + " " + operation + " " + resource;
    }

    // ---------------------------------------------------------------------------------------------
    // the nodes

    /** The nodes under test, the snapshot {@code migrate-acls} made of their ACLs, and the policy file they read. */
    private record Migrated(Nodes nodes, ObjectNode snapshot, Path policies) {
    }

    /** Nodes in {@code mode} on the e2e policies, with the topic and the ACLs created and migrated to policies. */
    private Migrated startMigrated(String mode, String name) throws Exception {
        Path policies = work.resolve(name + "-policies.json");
        Files.copy(ItPaths.snapshot("e2e.json"), policies);
        Nodes nodes = start(mode, policies);
        nodes.createTopicAndAcls();
        return new Migrated(nodes, nodes.migrateAcls(work.resolve(name + "-migrated")), policies);
    }

    private Nodes start(String mode, Path policies) {
        Map<String, Jmx> jmx = new TreeMap<>();
        java.util.function.BiConsumer<String, KafkaNode.Builder> settings = (name, builder) -> {
            builder.authorizer(authorizerClass(mode)).policyFile(policies)
                .property("grantforge.policy.file.poll.interval.ms", "200")
                .property("grantforge.audit.fold.window.ms", "1000");
            if (!name.equals(KafkaCluster.controllerName())) {
                Jmx port = Jmx.onFreePort();
                port.jvmArgs().forEach(builder::jvmArg);
                jmx.put(name, port);
            }
        };
        Nodes nodes;
        if (cluster) {
            KafkaCluster running = KafkaCluster.builder().kafkaVersion(version).name("shadow-" + mode.toLowerCase())
                .eachNode(settings).start();
            started.add(running);
            List<Jmx> ports = new ArrayList<>();
            for (int id = 1; id <= running.brokers().size(); id++) {
                ports.add(jmx.get(KafkaCluster.brokerName(id)));
            }
            nodes = new Nodes(running.brokers(), ports, running.nodes());
        } else {
            KafkaNode.Builder builder = KafkaNode.builder().name("shadow-" + mode.toLowerCase() + "-" + version)
                .kafkaVersion(version);
            settings.accept("node", builder);
            KafkaNode node = builder.start();
            started.add(node::close);
            nodes = new Nodes(List.of(node), List.of(jmx.get("node")), List.of(node));
        }
        return nodes;
    }

    /** The brokers of the node or cluster under test, each with its JMX. */
    private final class Nodes {
        private final List<KafkaNode> brokers;
        private final List<Jmx> jmx;
        /** The brokers and the controllers: the ACLs are created on the active controller. */
        private final List<KafkaNode> all;

        Nodes(List<KafkaNode> brokers, List<Jmx> jmx, List<KafkaNode> all) {
            this.brokers = brokers;
            this.jmx = jmx;
            this.all = all;
        }

        /** The lines of every node's log that contain each of {@code texts}. */
        List<String> logged(String... texts) {
            List<String> found = new ArrayList<>();
            for (KafkaNode node : all) {
                for (String line : node.logLines()) {
                    if (java.util.Arrays.stream(texts).allMatch(line::contains)) {
                        found.add(line);
                    }
                }
            }
            return found;
        }

        KafkaNode any() {
            return brokers.get(0);
        }

        Admin admin() {
            return any().admin(KafkaNode.SUPER_USER);
        }

        KafkaProducer<String, String> producer(String user, Properties extra) {
            return any().producer(user, withAllBrokers(extra));
        }

        KafkaConsumer<String, String> consumer(String user, String group, Properties extra) {
            return any().consumer(user, group, withAllBrokers(extra));
        }

        private Properties withAllBrokers(Properties extra) {
            Properties all = new Properties();
            all.putAll(extra);
            all.put("bootstrap.servers", String.join(",", brokers.stream().map(KafkaNode::bootstrapServers).toList()));
            return all;
        }

        /** The topic and the ACLs, created as an operator does; every broker's authorizer holds them before this returns. */
        void createTopicAndAcls() throws Exception {
            try (Admin admin = admin()) {
                admin.createTopics(List.of(new NewTopic("orders", 1, (short) brokers.size()))).all()
                    .get(WAIT_S, TimeUnit.SECONDS);
                admin.createAcls(ACLS).all().get(WAIT_S, TimeUnit.SECONDS);
            }
            for (KafkaNode broker : brokers) {
                try (Admin admin = broker.admin(KafkaNode.SUPER_USER)) {
                    Await.until(broker + " holds the ACLs and the topic", Duration.ofSeconds(WAIT_S),
                        () -> admin.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS).size()
                            == ACLS.size() && admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS).contains("orders"));
                }
            }
        }

        void awaitPolicyVersion(long version) throws InterruptedException {
            Await.until("every agent applied policy version " + version, Duration.ofSeconds(WAIT_S),
                () -> jmx.stream().allMatch(port -> attributes(port, "SnapshotVersion").values().stream()
                    .allMatch(v -> v.equals(version))));
        }

        /** One attribute of every agent MBean of one node (the broker's and the controller's read one agent). */
        private Map<String, Object> attributes(Jmx port, String attribute) {
            try {
                Map<String, Object> values = new TreeMap<>();
                port.read("org.devlive.grantforge.kafka:type=Agent,role=broker,*", attribute)
                    .forEach((name, read) -> values.put(name, read.get(attribute)));
                return values;
            } catch (Exception e) {
                throw new AssertionError("cannot read " + attribute + " over JMX", e);
            }
        }

        long sum(String attribute) {
            return jmx.stream().flatMap(port -> attributes(port, attribute).values().stream())
                .mapToLong(v -> ((Number) v).longValue()).sum();
        }

        long pluginSum(String mode, String metric) {
            long sum = 0;
            for (Jmx port : jmx) {
                try {
                    for (Map<String, Object> read : port.read("*:type=plugins,class=MonitorableGrantForge" + mode
                        + "Authorizer,role=broker,*", metric).values()) {
                        sum += ((Number) read.get(metric)).longValue();
                    }
                } catch (Exception e) {
                    throw new AssertionError("cannot read the plugin metric " + metric, e);
                }
            }
            return sum;
        }

        /** Every broker's disagreements table, one text. */
        String table() {
            StringBuilder all = new StringBuilder();
            jmx.forEach(port -> attributes(port, "ShadowDisagreements").values().forEach(all::append));
            return all.toString();
        }

        /** The disagreements of every broker, by kind, principal, operation and resource, with their counts summed. */
        Map<String, Long> disagreements() {
            Map<String, Long> counts = new TreeMap<>();
            for (String row : table().split("\n")) {
                String[] cells = row.split("\t");
                if (cells.length < 8 || cells[0].equals("count")) {
                    continue;
                }
                counts.merge(key(cells[2], cells[3], cells[4], cells[5]), Long.parseLong(cells[0]), Long::sum);
            }
            return counts;
        }

        /** The disagreements the brokers' audit logs count on lines that contain {@code text}. */
        long loggedDisagreements(String text) {
            Pattern repeats = Pattern.compile("; (\\d+) identical disagreements, first at ");
            long count = 0;
            for (KafkaNode broker : brokers) {
                for (String line : broker.logLines()) {
                    if (line.contains("[grantforge.audit]") && line.contains(text)) {
                        Matcher m = repeats.matcher(line);
                        count += m.find() ? Long.parseLong(m.group(1)) : 1;
                    }
                }
            }
            return count;
        }

        /** {@code migrate-acls} against the nodes, as an operator runs it: the snapshot it wrote into {@code out}. */
        ObjectNode migrateAcls(Path out) throws IOException {
            ToolRun run = any().runAgentCommand(List.of(), List.of("migrate-acls", "--bootstrap-server",
                any().bootstrapServers(), "--command-config", any().clientConfigFile(KafkaNode.SUPER_USER).toString(),
                "--out", out.toString(), "--service", "kafka-demo"));
            assertEquals(0, run.exitCode(), run.toString());
            return (ObjectNode) new ObjectMapper().readTree(out.resolve("grantforge-snapshot.json").toFile());
        }

        /** {@code explain --disagreements} against the broker that saw the disagreements (a partition's leader). */
        ToolRun explainDisagreements() {
            return explainEachBrokerWithDisagreements().get(0);
        }

        /** {@code explain --disagreements} against each broker that saw disagreements. */
        List<ToolRun> explainEachBrokerWithDisagreements() {
            return jmx.stream().filter(port -> attributes(port, "ShadowDisagreements").values().stream()
                    .anyMatch(table -> !table.toString().isEmpty()))
                .map(seen -> any().runAgentCommand(List.of(),
                    List.of("explain", "--disagreements", "--jmx", "127.0.0.1:" + seen.port())))
                .toList();
        }
    }
}
