package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The agent in a real node, offline mode with tests/fixtures/snapshots/e2e.json:
 * <ol>
 * <li>alice: read+write on topic {@code orders}</li>
 * <li>role analyst (alice): read on {@code orders*}</li>
 * <li>public: describe on topic {@code *}</li>
 * <li>alice: read on groups {@code alice-*}</li>
 * <li>alice: DENY write on topic {@code payments}</li>
 * <li>group ops (carol): alter_configs on topic {@code orders}</li>
 * </ol>
 *
 * <p>One subclass per Kafka release ({@code WalkingSkeletonKafka<version>Test}), each starting one node of
 * that release; every release must meet the same expectations. Run them all with
 * {@code -Dtest='WalkingSkeleton*'}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class WalkingSkeleton {

    private static final long WAIT_S = 30;
    private final String kafkaVersion;
    KafkaNode node;
    private Admin admin;

    private final String authorizerClass;

    /**
     * @param kafkaVersion the release to run; {@code tests/kafka-dists/kafka-<version>} must be built
     * @param authorizerClass the agent's class named in {@code authorizer.class.name}
     */
    WalkingSkeleton(String kafkaVersion, String authorizerClass) {
        this.kafkaVersion = kafkaVersion;
        this.authorizerClass = authorizerClass;
    }

    Jmx jmx;

    @BeforeAll
    void startNode() throws Exception {
        jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("walking-skeleton-" + kafkaVersion).kafkaVersion(kafkaVersion);
        jmx.jvmArgs().forEach(builder::jvmArg);
        node = builder
                .authorizer(authorizerClass)
                .policyFile(ItPaths.snapshot("e2e.json"))
                // short fold window so folded allowed accesses reach the audit log during the test
                .property("grantforge.audit.fold.window.ms", "1000")
                // carried over from StandardAuthorizer: ignored with a WARN, bob stays refused
                .property("allow.everyone.if.no.acl.found", "true")
                .start();
        System.out.println("[" + getClass().getSimpleName() + "] " + node + " answered after " + node.startedAfterMillis() + " ms");
        admin = node.admin("admin");
        admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("payments", 1, (short) 1)))
                .all().get(WAIT_S, TimeUnit.SECONDS);
        // the broker's metadata cache has both topics before anyone lists them
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS).containsAll(Set.of("orders", "payments"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("topics orders and payments not listed to admin after " + WAIT_S + " s");
            }
            Thread.sleep(100);
        }
    }

    @AfterAll
    void stopNode() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
        }
        if (node != null) {
            node.close();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // the super user

    @Test
    void superUserMayDoEverything() throws Exception {
        assertTrue(admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS).containsAll(Set.of("orders", "payments")));

        admin.createTopics(List.of(new NewTopic("admin-only", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
        try (KafkaProducer<String, String> producer = node.producer("admin")) {
            producer.send(new ProducerRecord<>("payments", "p1", "admin pays")).get(WAIT_S, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>("admin-only", "a1", "admin only")).get(WAIT_S, TimeUnit.SECONDS);
        }
        assertEquals(List.of("admin pays"), consumeAll("admin", "admin-group", "payments", 1));

        ConfigResource orders = new ConfigResource(ConfigResource.Type.TOPIC, "orders");
        Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(orders)).all().get(WAIT_S, TimeUnit.SECONDS);
        assertNotNull(configs.get(orders).get("cleanup.policy"), "admin describes the configs of orders");
    }

    // ---------------------------------------------------------------------------------------------
    // alice and bob

    @Test
    void aliceProducesAndConsumesOrders() throws Exception {
        // default producer: idempotent, so this also exercises authorizeByResourceType(WRITE, TOPIC)
        List<String> sent = List.of("order-1", "order-2", "order-3");
        try (KafkaProducer<String, String> producer = node.producer("alice")) {
            for (String value : sent) {
                RecordMetadata md = producer.send(new ProducerRecord<>("orders", value, value)).get(WAIT_S, TimeUnit.SECONDS);
                assertEquals("orders", md.topic());
            }
        }
        List<String> received = consumeAll("alice", "alice-1", "orders", sent.size());
        assertTrue(received.containsAll(sent), "alice reads back what she wrote: " + received);
    }

    @Test
    void bobMayNotProduceToOrders() throws Exception {
        // a non-idempotent producer reaches the topic check: Produce needs WRITE on the topic
        AliceAndBob.bobIsRefusedOrders(node);
    }

    @Test
    void bobMayNotStartAnIdempotentProducer() throws Exception {
        // the default (idempotent) producer first asks InitProducerId: no idempotent_write on the cluster, and
        // authorizeByResourceType(WRITE, TOPIC) is DENIED because bob may write to no topic at all. Kafka's own
        // StandardAuthorizer gives the same ClusterAuthorizationException in this situation.
        // Depending on timing, the client fails the send's future, or send() itself throws a KafkaException
        // ("... in an error state") caused by the ClusterAuthorizationException of InitProducerId.
        try (KafkaProducer<String, String> producer = node.producer("bob")) {
            Exception e = assertThrows(Exception.class,
                    () -> producer.send(new ProducerRecord<>("orders", "b", "bob's order")).get(WAIT_S, TimeUnit.SECONDS));
            Throwable cause = e;
            while (cause != null && !(cause instanceof ClusterAuthorizationException)) {
                cause = cause.getCause();
            }
            assertNotNull(cause, "bob's idempotent producer fails with a ClusterAuthorizationException: " + e);
        }
    }

    @Test
    void denyOfWriteHidesPaymentsFromAlice() throws Exception {
        Set<String> aliceSees;
        try (Admin alice = node.admin("alice")) {
            aliceSees = alice.listTopics().names().get(WAIT_S, TimeUnit.SECONDS);
        }
        Set<String> bobSees;
        try (Admin bob = node.admin("bob")) {
            bobSees = bob.listTopics().names().get(WAIT_S, TimeUnit.SECONDS);
        }
        assertTrue(bobSees.contains("payments"), "public describe on * shows payments to bob: " + bobSees);
        assertTrue(bobSees.contains("orders"), "public describe on * shows orders to bob: " + bobSees);
        assertTrue(aliceSees.contains("orders"), "alice sees orders: " + aliceSees);
        assertFalse(aliceSees.contains("payments"), "denying write on payments denies describe to alice: " + aliceSees);
    }

    // ---------------------------------------------------------------------------------------------
    // policies as ACLs

    static Set<AclBinding> expectedBindings() {
        return Set.of(
                binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "orders", PatternType.PREFIXED, "Role:analyst", AclOperation.READ, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
                binding(ResourceType.GROUP, "alice-", PatternType.PREFIXED, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "payments", PatternType.LITERAL, "User:alice", AclOperation.WRITE, AclPermissionType.DENY),
                binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "Group:ops", AclOperation.ALTER_CONFIGS, AclPermissionType.ALLOW));
    }

    private static AclBinding binding(ResourceType type, String name, PatternType patternType, String principal,
                                      AclOperation op, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, patternType), new AccessControlEntry(principal, "*", op, permission));
    }

    private Set<AclBinding> describe(AclBindingFilter filter) throws Exception {
        Collection<AclBinding> listed = admin.describeAcls(filter).values().get(WAIT_S, TimeUnit.SECONDS);
        Set<AclBinding> set = new HashSet<>(listed);
        assertEquals(listed.size(), set.size(), "no binding is listed twice: " + listed);
        return set;
    }

    private static Set<AclBinding> expectedFor(AclBindingFilter filter) {
        return expectedBindings().stream().filter(filter::matches).collect(Collectors.toSet());
    }

    @Test
    void describeAclsListsThePolicies() throws Exception {
        assertEquals(expectedBindings(), describe(AclBindingFilter.ANY));
    }

    @Test
    void describeAclsFollowsKafkaFilterSemantics() throws Exception {
        // MATCH on topic orders: the literal bindings of orders, the prefixed ones that cover it, the wildcard
        AclBindingFilter match = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.MATCH), AccessControlEntryFilter.ANY);
        assertEquals(5, expectedFor(match).size());
        assertEquals(expectedFor(match), describe(match));

        // LITERAL on topic orders: exactly that pattern
        AclBindingFilter literal = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.LITERAL), AccessControlEntryFilter.ANY);
        assertEquals(3, expectedFor(literal).size());
        assertEquals(expectedFor(literal), describe(literal));

        // by principal: everything about User:alice
        AclBindingFilter alice = new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY));
        assertEquals(4, expectedFor(alice).size());
        assertEquals(expectedFor(alice), describe(alice));

        // by permission: the denials
        AclBindingFilter deny = new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter(null, null, AclOperation.ANY, AclPermissionType.DENY));
        assertEquals(1, expectedFor(deny).size());
        assertEquals(expectedFor(deny), describe(deny));

        // groups only
        AclBindingFilter groups = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.GROUP, null, PatternType.ANY), AccessControlEntryFilter.ANY);
        assertEquals(1, expectedFor(groups).size());
        assertEquals(expectedFor(groups), describe(groups));

        // nothing matches: an empty answer, not an error
        AclBindingFilter none = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, null, PatternType.ANY), AccessControlEntryFilter.ANY);
        assertEquals(Set.of(), describe(none));
    }

    @Test
    void createAndDeleteAclsAreRefusedWithAPointerToGrantForge() throws Exception {
        AclBinding bobWrites = binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob",
                AclOperation.WRITE, AclPermissionType.ALLOW);
        ExecutionException create = assertThrows(ExecutionException.class,
                () -> admin.createAcls(List.of(bobWrites)).all().get(WAIT_S, TimeUnit.SECONDS));
        assertInstanceOf(PolicyViolationException.class, create.getCause(), "createAcls: " + create.getCause());
        assertNotNull(create.getCause().getMessage(), "createAcls failure has a message: " + create.getCause());
        assertTrue(create.getCause().getMessage().contains("GrantForge"), "createAcls: " + create.getCause());

        AclBindingFilter aliceOrders = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.LITERAL),
                new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY));
        ExecutionException delete = assertThrows(ExecutionException.class,
                () -> admin.deleteAcls(List.of(aliceOrders)).all().get(WAIT_S, TimeUnit.SECONDS));
        assertInstanceOf(PolicyViolationException.class, delete.getCause(), "deleteAcls: " + delete.getCause());
        assertNotNull(delete.getCause().getMessage(), "deleteAcls failure has a message: " + delete.getCause());
        assertTrue(delete.getCause().getMessage().contains("GrantForge"), "deleteAcls: " + delete.getCause());

        // and nothing changed
        assertEquals(expectedBindings(), describe(AclBindingFilter.ANY));
    }

    // ---------------------------------------------------------------------------------------------
    // Kafka's own kafka-acls tool of this release (the class its bin/kafka-acls.sh runs), in a JVM of its own

    @Test
    void kafkaAclsListShowsThePolicies() {
        ToolRun list = node.runTool("admin", node.dist().aclCommandClass(), List.of("--list"));
        assertEquals(0, list.exitCode(), "kafka-acls --list: " + list);
        Set<String> expected = expectedBindings().stream()
                .map(b -> b.pattern() + " " + b.entry()).collect(Collectors.toSet());
        assertEquals(expected, listedBindings(list.stdout()), "kafka-acls --list: " + list);
    }

    @Test
    void kafkaAclsAddFailsWithTheMessageThatNamesGrantForge() throws Exception {
        ToolRun add = node.runTool("admin", node.dist().aclCommandClass(),
                List.of("--add", "--allow-principal", "User:x", "--operation", "Read", "--topic", "t"));
        assertEquals(1, add.exitCode(), "kafka-acls --add: " + add);
        assertTrue(add.stdout().contains("Error while executing ACL command")
                        && add.stdout().contains("ACLs of this cluster are GrantForge policies of service kafka-demo; "
                                + "change them in GrantForge"),
                "kafka-acls --add: " + add);
        assertEquals(expectedBindings(), describe(AclBindingFilter.ANY), "nothing was added");
    }

    /**
     * The bindings {@code kafka-acls --list} printed, each as {@code ResourcePattern(...) (principal=..., ...)}:
     * a line {@code Current ACLs for resource `<pattern>`:} and one line per entry, indented (3.x puts a space
     * before the first entry's tab, 4.x does not).
     */
    private static Set<String> listedBindings(String stdout) {
        Set<String> listed = new HashSet<>();
        String pattern = null;
        for (String line : stdout.split("\\R")) {
            if (line.startsWith("Current ACLs for resource `")) {
                pattern = line.substring("Current ACLs for resource `".length(), line.lastIndexOf('`'));
            } else if (line.strip().startsWith("(principal=") && pattern != null) {
                listed.add(pattern + " " + line.strip());
            }
        }
        return listed;
    }

    @Test
    void auditLogShowsWhatKafkaAsksToReport() throws Exception {
        // the test's own accesses, so that it holds in any order: alice produces and lists the topics (payments
        // is left out of her listing), bob's produce is refused
        aliceProducesToOrders(1, "audited-");
        try (Admin alice = node.admin("alice")) {
            assertFalse(alice.listTopics().names().get(WAIT_S, TimeUnit.SECONDS).contains("payments"));
        }
        bobMayNotProduceToOrders();
        // offline mode audits to the log (logger grantforge.audit)
        // bob's refused produce (logIfDenied): reported at once
        awaitAuditLine("bob's refused WRITE on orders", l -> l.contains("User:bob") && l.contains("WRITE") && l.contains("orders"));
        // alice's allowed produce (logIfAllowed): folded, reported after the fold window
        awaitAuditLine("alice's allowed WRITE on orders", l -> l.contains("User:alice") && l.contains("WRITE") && l.contains("orders"));
        // the topics left out of alice's listing are not asked to be reported (logIfDenied=false)
        List<String> alicePayments = auditLines().stream()
                .filter(l -> l.contains("User:alice") && l.contains("payments")).collect(Collectors.toList());
        assertEquals(List.of(), alicePayments, "audit lines about alice and payments");
    }

    @Test
    void aGroupIdCannotForgeAnAuditLine() throws Exception {
        // A client's group id with a line break and a line of its own making: on main the audit log
        // held a line that read as the super user's access.
        String forged = "forged-group\r\nINFO [grantforge.audit] Principal = User:admin is Allowed operation = READ";
        try (Admin bob = node.admin("bob")) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> bob.describeConsumerGroups(List.of(forged)).all().get(WAIT_S, TimeUnit.SECONDS));
            assertInstanceOf(GroupAuthorizationException.class, e.getCause(), "bob describes a group: " + e.getCause());
        }
        awaitAuditLine("bob's refused DESCRIBE of the forged group",
                l -> l.contains("User:bob") && l.contains("forged-group\\r\\nINFO [grantforge.audit] Principal = User:admin"));
        List<String> forgedLines = node.logLines().stream()
                .filter(l -> l.contains("Principal = User:admin is Allowed operation = READ") && !l.contains("User:bob"))
                .collect(Collectors.toList());
        assertEquals(List.of(), forgedLines, "log lines a group id wrote");
    }

    private List<String> auditLines() {
        return node.logLines().stream().filter(l -> l.contains("[grantforge.audit]")).collect(Collectors.toList());
    }

    private void awaitAuditLine(String what, java.util.function.Predicate<String> p) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (auditLines().stream().anyMatch(p)) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("no audit line for " + what + " within 15 s in " + node.serverLogFile()
                + "; audit lines:\n" + String.join("\n", auditLines()));
    }

    /**
     * The JAR's tools reach Kafka's own {@code StandardAuthorizer} by reflection ({@code KafkaInternals}): on this
     * release, {@code migrate-acls --verify} loads the node's ACLs (the policies, as the agent lists them) into it and
     * asks it and the agent every question. The two differ where ACLs cannot say what the policies do (a deny of
     * WRITE also denies DESCRIBE, roles), so the run may end with disagreements: what is asserted is that Kafka's
     * authorizer was built, loaded and asked to the end.
     */
    @Test
    void theToolsReachKafkasStandardAuthorizerOnThisRelease() {
        ToolRun verify = node.runAgentCommand(List.of(), List.of("migrate-acls", "--bootstrap-server",
                node.bootstrapServers(), "--command-config", node.clientConfigFile("admin").toString(),
                "--verify", "--snapshot", ItPaths.snapshot("e2e.json").toString()));
        String output = verify.stdout() + verify.stderr();
        assertTrue(output.contains("asked of Kafka's StandardAuthorizer with " + expectedBindings().size() + " ACLs"),
                "migrate-acls --verify on Kafka " + kafkaVersion + ": " + verify);
        assertTrue(output.matches("(?s).*verify: \\d+ questions asked in \\d+ ms.*"), "asked to the end: " + verify);
    }

    @Test
    void aKeyOfStandardAuthorizerIsIgnoredWithOneWarning() {
        List<String> warnings = node.logLines().stream()
                .filter(l -> l.contains("WARN") && l.contains("allow.everyone.if.no.acl.found is StandardAuthorizer's and is ignored"))
                .collect(Collectors.toList());
        assertEquals(1, warnings.size(), "one WARN in " + node.serverLogFile() + ": " + warnings);
    }

    @Test
    @Order(Integer.MAX_VALUE) // after everything else
    void agentLogsNoErrors() {
        List<String> errors = node.logLines().stream()
                .filter(l -> l.matches("^\\[[^\\]]*\\] ERROR +\\[(org\\.devlive\\.grantforge|grantforge)[^\\]]*\\].*"))
                .collect(Collectors.toList());
        assertEquals(List.of(), errors, "ERROR lines of the agent in " + node.serverLogFile());
    }

    // ---------------------------------------------------------------------------------------------

    private List<String> consumeAll(String user, String group, String topic, int expected) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = node.consumer(user, group)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(WAIT_S));
        }
        return values;
    }

    @Test
    void metricsAreVisibleInJmxForBothRoles() throws Exception {
        aliceProducesToOrders(3, "metrics-");
        Map<String, Map<String, Object>> agents = jmx.read("org.devlive.grantforge.kafka:type=Agent,*",
                "DecisionsAllowed", "DecisionsDenied", "CacheHits", "CacheMisses", "CacheSize", "SnapshotVersion",
                "SnapshotAgeSeconds", "LastRefreshError", "HeartbeatFailures", "AuditQueued", "AuditDropped");
        assertEquals(2, agents.size(), "one MBean per role: " + agents.keySet());
        assertTrue(agents.keySet().stream().anyMatch(n -> n.contains("role=broker")), agents.keySet().toString());
        assertTrue(agents.keySet().stream().anyMatch(n -> n.contains("role=controller")), agents.keySet().toString());
        Map<String, Object> broker = agents.entrySet().stream().filter(e -> e.getKey().contains("role=broker"))
                .findFirst().orElseThrow().getValue();
        assertEquals(1L, broker.get("SnapshotVersion"));
        assertTrue((Long) broker.get("DecisionsAllowed") >= 3, broker.toString());
        assertTrue((Long) broker.get("CacheHits") >= 1, "repeated produce requests are answered from the cache: " + broker);
        assertTrue((Long) broker.get("CacheSize") >= 1, broker.toString());
        assertEquals(0L, broker.get("AuditDropped"));
    }

    /** alice's allowed produce requests, {@code count} of them, so that the metrics have something to count. */
    void aliceProducesToOrders(int count, String valuePrefix) throws Exception {
        try (KafkaProducer<String, String> producer = node.producer("alice")) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>("orders", "k", valuePrefix + i)).get(WAIT_S, TimeUnit.SECONDS);
            }
        }
    }
}
