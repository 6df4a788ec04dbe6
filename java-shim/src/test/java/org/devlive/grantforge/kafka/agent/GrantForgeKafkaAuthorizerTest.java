package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.devlive.grantforge.kafka.agent.TestContexts.action;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.devlive.grantforge.kafka.agent.jni.RequestEncoder;

/**
 * The shim against the real native library and the e2e snapshot fixture: what Kafka would call,
 * without a broker (the integration tests add the broker).
 */
class GrantForgeKafkaAuthorizerTest {
    private static final Path FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json");

    @TempDir
    Path tmp;

    private final List<GrantForgeKafkaAuthorizer> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(GrantForgeKafkaAuthorizer::close);
    }

    /** The fixture with {@code policies} (a JSON array) as its policies, as the authorizers' policy file. */
    private void writePolicies(String policies) throws IOException {
        String fixture = new String(Files.readAllBytes(FIXTURE), StandardCharsets.UTF_8);
        int policiesAt = fixture.indexOf("\"policies\":[");
        int rolesAt = fixture.indexOf(",\"roles\":{", policiesAt);
        Files.write(tmp.resolve("policies.json"), (fixture.substring(0, policiesAt) + "\"policies\":" + policies
            + fixture.substring(rolesAt)).getBytes(StandardCharsets.UTF_8));
    }

    private GrantForgeKafkaAuthorizer authorizer(Map<String, Object> extra) throws IOException {
        Path policies = tmp.resolve("policies.json");
        if (!Files.exists(policies)) {
            Files.copy(FIXTURE, policies);
        }
        GrantForgeKafkaAuthorizer authorizer = TestAuthorizers.offline(policies, extra);
        opened.add(authorizer);
        return authorizer;
    }

    @Test
    void decidesFromThePolicies() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        List<Action> actions = List.of(
            action(AclOperation.WRITE, ResourceType.TOPIC, "orders"),
            action(AclOperation.READ, ResourceType.TOPIC, "orders-eu"),
            action(AclOperation.DESCRIBE, ResourceType.TOPIC, "payments"),
            action(AclOperation.READ, ResourceType.GROUP, "alice-1"),
            action(AclOperation.READ, ResourceType.GROUP, "bob-1"));
        assertEquals(List.of(AuthorizationResult.ALLOWED, AuthorizationResult.ALLOWED, AuthorizationResult.DENIED,
                AuthorizationResult.ALLOWED, AuthorizationResult.DENIED),
            authorizer.authorize(TestContexts.user("alice"), actions));
        assertEquals(List.of(AuthorizationResult.DENIED, AuthorizationResult.DENIED, AuthorizationResult.ALLOWED,
                AuthorizationResult.DENIED, AuthorizationResult.DENIED),
            authorizer.authorize(TestContexts.user("bob"), actions));
        assertEquals(Collections.nCopies(5, AuthorizationResult.ALLOWED),
            authorizer.authorize(TestContexts.user("admin"), actions), "super users may do everything");
        assertEquals(List.of(AuthorizationResult.DENIED),
            authorizer.authorize(TestContexts.of("Group", "alice", "127.0.0.1"), actions.subList(0, 1)),
            "a principal of another type is not the user alice");
    }

    @Test
    void manyActionsInOneCall() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        List<Action> actions = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            actions.add(action(i % 2 == 0 ? AclOperation.READ : AclOperation.DELETE, ResourceType.TOPIC, "orders"));
        }
        List<AuthorizationResult> results = authorizer.authorize(TestContexts.user("alice"), actions);
        for (int i = 0; i < 200; i++) {
            assertEquals(i % 2 == 0 ? AuthorizationResult.ALLOWED : AuthorizationResult.DENIED, results.get(i), "action " + i);
        }
    }

    /** The answers to a call of more than 63 actions come back over the request; the next call must not reuse it. */
    @Test
    void aCallAfterManyActionsWithTheSameContextIsAnsweredRight() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        AuthorizableRequestContext alice = TestContexts.user("alice");
        List<Action> many = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            many.add(action(AclOperation.READ, ResourceType.TOPIC, "orders"));
        }
        assertEquals(Collections.nCopies(100, AuthorizationResult.ALLOWED), authorizer.authorize(alice, many));
        assertEquals(Collections.singletonList(AuthorizationResult.ALLOWED),
            authorizer.authorize(alice, Collections.singletonList(action(AclOperation.READ, ResourceType.TOPIC, "orders"))));
    }

    /** More than 65,535 actions (the old u16 count) in one call: each is answered. */
    @Test
    void seventyThousandActionsInOneCallAreAnswered() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        List<Action> actions = new ArrayList<>();
        for (int i = 0; i < 70_000; i++) {
            actions.add(action(i % 2 == 0 ? AclOperation.READ : AclOperation.DELETE, ResourceType.TOPIC, "orders"));
        }
        List<AuthorizationResult> results = authorizer.authorize(TestContexts.user("alice"), actions);
        assertEquals(70_000, results.size());
        for (int i = 0; i < 70_000; i++) {
            assertEquals(i % 2 == 0 ? AuthorizationResult.ALLOWED : AuthorizationResult.DENIED, results.get(i), "action " + i);
        }
    }

    /** The thread's direct buffer grows for one oversized call and goes back to its default size after it. */
    @Test
    void aCallWithAOneMibResourceNameLeavesTheThreadsBufferAtItsDefaultSize() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        AuthorizableRequestContext alice = TestContexts.user("alice");
        StringBuilder name = new StringBuilder("orders-");
        while (name.length() < 1024 * 1024) {
            name.append('x');
        }
        assertEquals(List.of(AuthorizationResult.ALLOWED),
            authorizer.authorize(alice, List.of(action(AclOperation.READ, ResourceType.TOPIC, name.toString()))),
            "analysts read orders*");
        assertEquals(RequestEncoder.INITIAL_CAPACITY, RequestEncoder.forThisThread().capacity());
        assertEquals(List.of(AuthorizationResult.ALLOWED, AuthorizationResult.DENIED),
            authorizer.authorize(alice, List.of(action(AclOperation.WRITE, ResourceType.TOPIC, "orders"),
                action(AclOperation.WRITE, ResourceType.TOPIC, "payments"))),
            "the next call goes through the new buffer");

        AuthorizableRequestContext huge = TestContexts.user(name.toString());
        assertEquals(AuthorizationResult.DENIED,
            authorizer.authorizeByResourceType(huge, AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(RequestEncoder.INITIAL_CAPACITY, RequestEncoder.forThisThread().capacity());
    }

    /**
     * The ACL view sends each name once: one policy naming a 4 MiB topic for 500 users is 500 rows of one
     * name, listed with one copy of it, not 500 (which asked for gigabytes of native and heap memory).
     */
    @Test
    void aListingOfOneHugeNameForManyUsersStaysSmall() throws Exception {
        StringBuilder name = new StringBuilder("huge-");
        while (name.length() < 4 * 1024 * 1024) {
            name.append('x');
        }
        StringBuilder users = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            users.append(i == 0 ? "" : ",").append("\"user-").append(i).append('"');
        }
        String policy = "[{\"id\":\"1\",\"name\":\"one huge topic\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\","
            + "\"document\":{\"resources\":{\"topic\":{\"values\":[\"" + name + "\"],\"excludes\":false,"
            + "\"recursive\":false}},\"allow\":[{\"users\":[" + users + "],\"groups\":[],\"roles\":[],"
            + "\"accessTypes\":[\"read\"],\"conditions\":[],\"maskType\":null,\"maskValue\":null,"
            + "\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}]";
        writePolicies(policy);
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        assertEquals(500, authorizer.aclCount());

        long before = ResidentMemory.resetPeak();
        List<AclBinding> all = listed(authorizer);
        long grew = ResidentMemory.peak() - before;

        assertEquals(500, all.size());
        assertEquals(name.toString(), all.get(499).pattern().name());
        assertTrue(grew < 512L << 20, "listing grew the resident set by " + (grew >> 20) + " MiB");
    }

    /**
     * A Kafka release without an operation (3.x has no TWO_PHASE_COMMIT, and these tests run on 3.7) lists no row
     * of it, and counts none: {@code aclCount()} is the size of {@code acls(ANY)}.
     */
    @Test
    void aclCountCountsTheRowsThisKafkaLists() throws Exception {
        assertEquals(AclOperation.UNKNOWN, AclOperation.fromCode((byte) 15), "a Kafka without TWO_PHASE_COMMIT");
        String policy = "[{\"id\":\"1\",\"name\":\"tx\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\","
            + "\"document\":{\"resources\":{\"transactional_id\":{\"values\":[\"tx\"],\"excludes\":false,"
            + "\"recursive\":false}},\"allow\":[{\"users\":[\"bob\"],\"groups\":[],\"roles\":[],"
            + "\"accessTypes\":[\"two_phase_commit\",\"describe\"],\"conditions\":[]}],"
            + "\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}]";
        writePolicies(policy);
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());

        List<AclBinding> all = listed(authorizer);
        assertEquals(List.of(binding(ResourceType.TRANSACTIONAL_ID, "tx", PatternType.LITERAL, "User:bob",
            AclOperation.DESCRIBE, AclPermissionType.ALLOW)), all);
        assertEquals(all.size(), authorizer.aclCount());
    }

    /** After close, the handle answers nothing: every request is refused, super users' too, without a crash. */
    @Test
    void afterCloseEveryRequestIsRefused() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        List<Action> write = List.of(action(AclOperation.WRITE, ResourceType.TOPIC, "orders"));
        assertEquals(List.of(AuthorizationResult.ALLOWED), authorizer.authorize(TestContexts.user("admin"), write));
        assertTrue(authorizer.aclCount() > 0);
        authorizer.close();
        assertEquals(List.of(AuthorizationResult.DENIED), authorizer.authorize(TestContexts.user("alice"), write));
        assertEquals(List.of(AuthorizationResult.DENIED), authorizer.authorize(TestContexts.user("admin"), write));
        List<Action> many = new ArrayList<>(Collections.nCopies(100, write.get(0)));
        assertEquals(Collections.nCopies(100, AuthorizationResult.DENIED), authorizer.authorize(TestContexts.user("alice"), many));
        assertEquals(AuthorizationResult.DENIED,
            authorizer.authorizeByResourceType(TestContexts.user("admin"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(0, authorizer.aclCount());
        assertFalse(authorizer.acls(AclBindingFilter.ANY).iterator().hasNext());
        authorizer.close();
    }

    @Test
    void theStartTimeoutIsTheOneTheNativeConfigurationParsed() throws IOException {
        Map<String, Object> timeout = new HashMap<>();
        timeout.put("grantforge.start.timeout.ms", " 4500 ");
        assertEquals(4500L, authorizer(timeout).startTimeoutMs());
    }

    /** A blank start timeout stops the broker naming the key, and leaves no native agent behind. */
    @Test
    void aBlankStartTimeoutIsRefusedNamingTheKeyAndLeavesNoAgent() throws IOException {
        for (String blank : new String[] {"", "  "}) {
            Map<String, Object> timeout = new HashMap<>();
            timeout.put("grantforge.start.timeout.ms", blank);
            ConfigException e = assertThrows(ConfigException.class, () -> authorizer(timeout));
            assertTrue(e.getMessage().contains("grantforge.start.timeout.ms"), e.getMessage());
        }
        // An agent left open by the failed configure would hold the policy file with other settings.
        Map<String, Object> other = new HashMap<>();
        other.put("super.users", "User:someone-else");
        assertEquals(List.of(AuthorizationResult.ALLOWED),
            authorizer(other).authorize(TestContexts.user("alice"), List.of(action(AclOperation.WRITE, ResourceType.TOPIC, "orders"))));
    }

    @Test
    void idempotentProducersNeedWriteOnSomeTopic() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        assertEquals(AuthorizationResult.ALLOWED,
            authorizer.authorizeByResourceType(TestContexts.user("alice"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(AuthorizationResult.DENIED,
            authorizer.authorizeByResourceType(TestContexts.user("bob"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(AuthorizationResult.ALLOWED,
            authorizer.authorizeByResourceType(TestContexts.user("admin"), AclOperation.WRITE, ResourceType.TOPIC));
        assertThrows(IllegalArgumentException.class,
            () -> authorizer.authorizeByResourceType(TestContexts.user("alice"), AclOperation.ANY, ResourceType.TOPIC));
    }

    @Test
    void policiesShowAsAclsAndAclsCannotBeChanged() throws Exception {
        GrantForgeKafkaAuthorizer authorizer = authorizer(Collections.emptyMap());
        List<AclBinding> all = new ArrayList<>();
        authorizer.acls(AclBindingFilter.ANY).forEach(all::add);
        assertTrue(all.contains(binding(ResourceType.TOPIC, "orders", PatternType.PREFIXED, "Role:analyst",
            AclOperation.READ, AclPermissionType.ALLOW)), all.toString());
        assertTrue(all.contains(binding(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*",
            AclOperation.DESCRIBE, AclPermissionType.ALLOW)), all.toString());
        assertTrue(all.contains(binding(ResourceType.TOPIC, "payments", PatternType.LITERAL, "User:alice",
            AclOperation.WRITE, AclPermissionType.DENY)), all.toString());
        assertEquals(all.size(), authorizer.aclCount());

        AclBindingFilter ordersMatch = new AclBindingFilter(
            new ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.MATCH), AccessControlEntryFilter.ANY);
        List<AclBinding> matching = new ArrayList<>();
        authorizer.acls(ordersMatch).forEach(matching::add);
        assertTrue(matching.stream().allMatch(b -> b.pattern().name().equals("orders") || b.pattern().name().equals("*")));
        assertTrue(matching.stream().anyMatch(b -> b.pattern().patternType() == PatternType.PREFIXED));
        assertFalse(matching.stream().anyMatch(b -> b.pattern().name().equals("payments")));

        List<? extends CompletionStage<AclCreateResult>> created = authorizer.createAcls(TestContexts.user("admin"),
            List.of(all.get(0)));
        AclCreateResult result = created.get(0).toCompletableFuture().get(1, TimeUnit.SECONDS);
        assertTrue(result.exception().isPresent());
        assertTrue(result.exception().get() instanceof PolicyViolationException);
        assertTrue(result.exception().get().getMessage().contains("GrantForge policies of service kafka-demo"),
            result.exception().get().getMessage());
        assertTrue(authorizer.deleteAcls(TestContexts.user("admin"), List.of(AclBindingFilter.ANY)).get(0)
            .toCompletableFuture().get(1, TimeUnit.SECONDS).exception().isPresent());
    }

    /** The listing is decoded once per view, and a changed view (here a changed policy file) is listed anew. */
    @Test
    void aListingIsKeptUntilTheViewChangesAndEmptyOnceClosed() throws Exception {
        Map<String, Object> fastPoll = new HashMap<>();
        fastPoll.put("grantforge.policy.file.poll.interval.ms", "20");
        GrantForgeKafkaAuthorizer authorizer = authorizer(fastPoll);
        Iterable<AclBinding> first = authorizer.acls(AclBindingFilter.ANY);
        assertSame(first, authorizer.acls(AclBindingFilter.ANY), "the same view: the decoded bindings are kept");
        AclBinding bobWritesOrders = binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob",
            AclOperation.WRITE, AclPermissionType.ALLOW);
        assertFalse(listed(authorizer).contains(bobWritesOrders));

        String allowBob = new String(Files.readAllBytes(FIXTURE), StandardCharsets.UTF_8)
            .replace("\"users\":[\"alice\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\",\"write\"]",
                "\"users\":[\"alice\",\"bob\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\",\"write\"]")
            .replace("\"policyVersion\":1", "\"policyVersion\":2");
        Files.write(tmp.resolve("policies.json"), allowBob.getBytes(StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!listed(authorizer).contains(bobWritesOrders)) {
            assertTrue(System.nanoTime() < deadline, "the changed policy file was never listed");
            Thread.sleep(20);
        }
        assertTrue(listed(authorizer).containsAll(listed(first)), "the rest of the view stays");

        authorizer.close();
        assertEquals(List.of(), listed(authorizer), "a closed authorizer lists nothing");
    }

    private static List<AclBinding> listed(Iterable<AclBinding> bindings) {
        List<AclBinding> all = new ArrayList<>();
        bindings.forEach(all::add);
        return all;
    }

    private static List<AclBinding> listed(GrantForgeKafkaAuthorizer authorizer) {
        return listed(authorizer.acls(AclBindingFilter.ANY));
    }

    private static AclBinding binding(ResourceType type, String name, PatternType patternType, String principal,
                                      AclOperation op, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, patternType),
            new org.apache.kafka.common.acl.AccessControlEntry(principal, "*", op, permission));
    }

    @Test
    void brokerAndControllerShareOneAgentAndCloseInAnyOrder() throws IOException {
        GrantForgeKafkaAuthorizer broker = authorizer(Collections.emptyMap());
        GrantForgeKafkaAuthorizer controller = authorizer(Collections.emptyMap());
        List<Action> write = List.of(action(AclOperation.WRITE, ResourceType.TOPIC, "orders"));
        broker.close();
        opened.remove(broker);
        assertEquals(List.of(AuthorizationResult.ALLOWED), controller.authorize(TestContexts.user("alice"), write),
            "closing one authorizer leaves the other working");
        Map<String, Object> other = new HashMap<>();
        other.put("super.users", "User:someone-else");
        ConfigException e = assertThrows(ConfigException.class, () -> authorizer(other));
        assertTrue(e.getMessage().contains("different"), e.getMessage());
    }

    @Test
    void aChangedPolicyFileAppliesAndABadOneKeepsTheLastGood() throws Exception {
        Map<String, Object> fastPoll = new HashMap<>();
        fastPoll.put("grantforge.policy.file.poll.interval.ms", "50");
        GrantForgeKafkaAuthorizer authorizer = authorizer(fastPoll);
        Path policies = tmp.resolve("policies.json");
        List<Action> bobWrites = List.of(action(AclOperation.WRITE, ResourceType.TOPIC, "orders"));
        assertEquals(List.of(AuthorizationResult.DENIED), authorizer.authorize(TestContexts.user("bob"), bobWrites));

        Files.write(policies, "{not json".getBytes(StandardCharsets.UTF_8));
        // The bad file was read and refused (the agent says so), not merely not yet seen.
        AgentMetrics metrics = AgentMetrics.reader(authorizer.nativeHandle());
        long refusedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (String.valueOf(metrics.value("last-refresh-error")).isEmpty()) {
            assertTrue(System.nanoTime() < refusedBy, "the bad policy file was never refused");
            Thread.sleep(20);
        }
        assertEquals(List.of(AuthorizationResult.ALLOWED),
            authorizer.authorize(TestContexts.user("alice"), bobWrites), "the last good snapshot stays in force");

        String allowBob = new String(Files.readAllBytes(FIXTURE), StandardCharsets.UTF_8)
            .replace("\"users\":[\"alice\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\",\"write\"]",
                "\"users\":[\"alice\",\"bob\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\",\"write\"]")
            .replace("\"policyVersion\":1", "\"policyVersion\":2");
        Files.write(policies, allowBob.getBytes(StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (authorizer.authorize(TestContexts.user("bob"), bobWrites).get(0) != AuthorizationResult.ALLOWED) {
            assertTrue(System.nanoTime() < deadline, "the changed policy file was not applied");
            Thread.sleep(20);
        }
    }

    @Test
    void badSettingsStopTheBrokerWithTheKeyNamed() {
        Map<String, Object> typo = new HashMap<>();
        typo.put("grantforge.polcy.file", "/x");
        ConfigException e = assertThrows(ConfigException.class, () -> authorizer(typo));
        assertTrue(e.getMessage().contains("grantforge.polcy.file"), e.getMessage());

        Map<String, Object> missing = new HashMap<>();
        missing.put("grantforge.policy.file", tmp.resolve("nope.json").toString());
        e = assertThrows(ConfigException.class, () -> authorizer(missing));
        assertTrue(e.getMessage().contains("grantforge.policy.file") && e.getMessage().contains("nope.json"), e.getMessage());
    }
}
