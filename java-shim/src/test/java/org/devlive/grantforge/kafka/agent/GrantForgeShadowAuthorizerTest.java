package org.devlive.grantforge.kafka.agent;

import static org.devlive.grantforge.kafka.agent.TestContexts.action;
import static org.devlive.grantforge.kafka.agent.TestContexts.user;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.ClusterResource;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shadow and compare modes against the real native library and Kafka's own {@code StandardAuthorizer}, without a
 * broker: the decider's answers are the ones returned, disagreements are counted by kind with the Kafka ACL behind
 * them, and an agent that fails leaves Kafka's answers alone (shadow) or refuses (compare).
 *
 * <p>The e2e snapshot lets alice write {@code orders} and denies her writing {@code payments}; Kafka's ACLs here let
 * alice write both.
 */
class GrantForgeShadowAuthorizerTest {
    private static final Path FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json");

    @TempDir
    Path tmp;

    private final List<ComparingAuthorizer> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (ComparingAuthorizer authorizer : opened) {
            authorizer.close();
        }
    }

    private <A extends ComparingAuthorizer> A configured(A authorizer) throws IOException {
        A loading = withAclsLoading(authorizer);
        loading.completeInitialLoad();
        return loading;
    }

    /** Configured, Kafka's ACLs added, and Kafka's initial load of them not complete yet (a starting broker). */
    private <A extends ComparingAuthorizer> A withAclsLoading(A authorizer) throws IOException {
        Path policies = tmp.resolve("policies.json");
        if (!Files.exists(policies)) {
            Files.copy(FIXTURE, policies);
        }
        return withAclsLoading(authorizer, Map.of("grantforge.policy.file", policies.toString()));
    }

    private <A extends ComparingAuthorizer> A withAclsLoading(A authorizer, Map<String, Object> agentSettings) {
        Map<String, Object> configs = new HashMap<>(agentSettings);
        configs.put("super.users", "User:admin");
        configs.put("node.id", 1);
        authorizer.configure(configs);
        opened.add(authorizer);
        authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(allowAlice(AclOperation.WRITE, "orders")));
        authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(allowAlice(AclOperation.WRITE, "payments")));
        return authorizer;
    }

    private static AclBinding allowAlice(AclOperation operation, String topic) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", operation, AclPermissionType.ALLOW));
    }

    private static AuthorizationResult ask(ComparingAuthorizer authorizer, String who, String topic) {
        return authorizer.authorize(user(who), List.of(action(AclOperation.WRITE, ResourceType.TOPIC, topic))).get(0);
    }

    private static Object metric(ComparingAuthorizer authorizer, String name) {
        return AgentMetrics.reader(authorizer.nativeHandle()).value(name);
    }

    @Test
    void shadowModeReturnsKafkasAnswersAndCountsWhereGrantForgeDiffers() throws IOException {
        ComparingAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        assertEquals(AuthorizationResult.ALLOWED, ask(shadow, "alice", "orders"), "both allow");
        assertEquals(AuthorizationResult.DENIED, ask(shadow, "bob", "orders"), "both refuse");
        for (int i = 0; i < 3; i++) {
            assertEquals(AuthorizationResult.ALLOWED, ask(shadow, "alice", "payments"),
                "Kafka's ACL allows, and Kafka decides: GrantForge's policy 5 denies, which changes nothing");
        }
        assertEquals(2L, metric(shadow, "shadow-agreements"));
        assertEquals(3L, metric(shadow, "shadow-grantforge-refuses"));
        assertEquals(0L, metric(shadow, "shadow-grantforge-allows"));
        String table = (String) metric(shadow, "shadow-disagreements");
        assertTrue(table.contains("3\tshadow\tGrantForge refuses what Kafka allows\tUser:alice\tWRITE\tTOPIC:payments\t"
            + "policy 5\tALLOW ACL TOPIC:LITERAL:payments User:alice from * ALLOW WRITE"), table);
    }

    @Test
    void compareModeReturnsGrantForgesAnswersAndCountsTheReverse() throws IOException {
        ComparingAuthorizer compare = configured(new GrantForgeCompareAuthorizer());
        assertEquals(AuthorizationResult.DENIED, ask(compare, "alice", "payments"), "GrantForge decides");
        assertEquals(AuthorizationResult.ALLOWED, ask(compare, "alice", "orders"));
        assertEquals(1L, metric(compare, "shadow-grantforge-refuses"));
        assertEquals(1L, metric(compare, "shadow-agreements"));
        assertTrue(((String) metric(compare, "shadow-disagreements")).contains("1\tcompare\t"),
            (String) metric(compare, "shadow-disagreements"));
    }

    @Test
    void anAgentThatFailsLeavesKafkasAnswersAloneInShadowModeAndRefusesInCompareMode() throws IOException {
        ComparingAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        ComparingAuthorizer compare = configured(new GrantForgeCompareAuthorizer());
        // The native agent's handles given back: every call to them fails from now on.
        NativeAgent.close(shadow.nativeHandle());
        NativeAgent.close(compare.nativeHandle());
        assertEquals(AuthorizationResult.ALLOWED, ask(shadow, "alice", "payments"));
        assertEquals(AuthorizationResult.DENIED, ask(shadow, "bob", "orders"));
        assertEquals(2L, shadow.failures());
        assertEquals(AuthorizationResult.DENIED, ask(compare, "alice", "orders"), "fail closed");
        assertEquals(1L, compare.failures());
    }

    /** The Kafka ACL behind a disagreement only words its audit: failing to find it leaves the settled answer alone. */
    @Test
    void aFailureDescribingKafkasAclLeavesTheDecidedAnswerAlone() throws IOException {
        ComparingAuthorizer compare = configured(new GrantForgeCompareAuthorizer() {
            @Override
            public Iterable<AclBinding> acls(AclBindingFilter filter) {
                throw new IllegalStateException("the ACLs cannot be listed");
            }
        });
        List<Action> describe = List.of(action(AclOperation.DESCRIBE, ResourceType.TOPIC, "orders"));
        assertEquals(List.of(AuthorizationResult.ALLOWED), compare.authorize(user("bob"), describe),
            "GrantForge's policy 3 lets everyone describe topics, Kafka's ACLs do not: GrantForge decides");
        assertEquals(0L, compare.failures());
        assertEquals(1L, metric(compare, "shadow-grantforge-allows"));
    }

    @Test
    void kafkasQuestionAboutSomeResourceOfATypeIsAnsweredByTheDeciderAndNotCompared() throws IOException {
        ComparingAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        assertEquals(AuthorizationResult.ALLOWED,
            shadow.authorizeByResourceType(user("alice"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(AuthorizationResult.DENIED,
            shadow.authorizeByResourceType(user("bob"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(0L, metric(shadow, "shadow-agreements"),
            "the made-up resource Kafka's default implementation asks about is not compared");
        assertEquals(0L, metric(shadow, "shadow-grantforge-refuses"));
    }

    /** The dangerous direction: GrantForge allows what Kafka refuses, and in shadow mode the client gets the refusal. */
    @Test
    void shadowModeReturnsKafkasRefusalWhereGrantForgeWouldAllow() throws IOException {
        ComparingAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        List<Action> describe = List.of(action(AclOperation.DESCRIBE, ResourceType.TOPIC, "orders"));
        for (int i = 0; i < 2; i++) {
            assertEquals(List.of(AuthorizationResult.DENIED), shadow.authorize(user("bob"), describe),
                "GrantForge's policy 3 lets everyone describe topics; Kafka's ACLs do not, and Kafka decides");
        }
        assertEquals(2L, metric(shadow, "shadow-grantforge-allows"));
        assertEquals(0L, shadow.failures());
    }

    /** An agent that throws an {@code Error} (direct memory exhausted) is a failure, whatever the mode. */
    @Test
    void anErrorFromTheAgentLeavesKafkasAnswersInShadowModeAndRefusesInCompareMode() throws IOException {
        ComparingAuthorizer shadow = configured(new GrantForgeShadowAuthorizer() {
            @Override
            long nativeCompare(org.devlive.grantforge.kafka.agent.jni.RequestEncoder encoder, int requestLength) {
                // as OutOfMemoryError("Direct buffer memory") would, which JUnit itself rethrows to stop the run
                throw new VirtualMachineError("Direct buffer memory") {
                };
            }
        });
        ComparingAuthorizer compare = configured(new GrantForgeCompareAuthorizer() {
            @Override
            long nativeCompare(org.devlive.grantforge.kafka.agent.jni.RequestEncoder encoder, int requestLength) {
                throw new StackOverflowError();
            }
        });
        assertEquals(AuthorizationResult.ALLOWED, ask(shadow, "alice", "payments"), "Kafka's answer stands");
        assertEquals(AuthorizationResult.DENIED, ask(shadow, "bob", "orders"), "Kafka's answer stands");
        assertEquals(List.of(AuthorizationResult.DENIED), shadow.authorize(user("bob"),
            List.of(action(AclOperation.DESCRIBE, ResourceType.TOPIC, "orders"))), "Kafka's answer stands");
        assertEquals(3L, shadow.failures());
        assertEquals(AuthorizationResult.DENIED, ask(compare, "alice", "orders"), "fail closed");
        assertEquals(1L, compare.failures());
    }

    @Test
    void compareModeAnswersTheQuestionAboutSomeResourceOfATypeWithGrantForgesPolicies() throws IOException {
        ComparingAuthorizer compare = configured(new GrantForgeCompareAuthorizer());
        ComparingAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        // policy 3 lets everyone describe topics; Kafka's ACLs give bob nothing
        assertEquals(AuthorizationResult.ALLOWED,
            compare.authorizeByResourceType(user("bob"), AclOperation.DESCRIBE, ResourceType.TOPIC));
        assertEquals(AuthorizationResult.DENIED,
            shadow.authorizeByResourceType(user("bob"), AclOperation.DESCRIBE, ResourceType.TOPIC));
        // Kafka's ACLs let alice write some topic; no policy lets bob
        assertEquals(AuthorizationResult.DENIED,
            compare.authorizeByResourceType(user("bob"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(AuthorizationResult.ALLOWED,
            compare.authorizeByResourceType(user("alice"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(0L, metric(compare, "shadow-agreements"), "not compared");
        assertEquals(0L, metric(compare, "shadow-grantforge-allows"));
    }

    @Test
    void whileKafkasAclsAreNotLoadedCompareModeAnswersWithTheAgentAndShadowModeAsKafkaDoes() throws IOException {
        ComparingAuthorizer compare = withAclsLoading(new GrantForgeCompareAuthorizer());
        ComparingAuthorizer shadow = withAclsLoading(new GrantForgeShadowAuthorizer());
        assertEquals(AuthorizationResult.ALLOWED, ask(compare, "alice", "orders"), "policy 1");
        assertEquals(AuthorizationResult.DENIED, ask(compare, "alice", "payments"), "policy 5, whatever the ACLs say");
        assertEquals(AuthorizationResult.ALLOWED, compare.authorize(user("bob"),
            List.of(action(AclOperation.DESCRIBE, ResourceType.TOPIC, "orders"))).get(0), "policy 3");
        assertEquals(0L, metric(compare, "shadow-agreements"), "nothing to compare with yet");
        org.junit.jupiter.api.Assertions.assertThrows(
            org.apache.kafka.common.errors.AuthorizerNotReadyException.class, () -> ask(shadow, "alice", "orders"),
            "Kafka's own answer while its ACLs load");
    }

    /** Server mode against a port nothing listens on: no snapshot comes before the start timeout. */
    private <A extends ComparingAuthorizer> A withoutSnapshot(A authorizer) throws IOException {
        Path token = Files.writeString(tmp.resolve("token"), "t");
        A loading = withAclsLoading(authorizer, Map.of("grantforge.server.url", "https://127.0.0.1:1",
            "grantforge.token.file", token.toString(), "grantforge.cache.dir", tmp.resolve("cache").toString(),
            "grantforge.start.timeout.ms", String.valueOf(START_TIMEOUT_MS)));
        loading.completeInitialLoad();
        return loading;
    }

    private static final long START_TIMEOUT_MS = 3000;

    /** A broker's one client listener (a controller's are early-start listeners, which open at once). */
    private static AuthorizerServerInfo brokerInfo() {
        final Endpoint client = new Endpoint("CLIENT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092);
        return new AuthorizerServerInfo() {
            public ClusterResource clusterResource() {
                return new ClusterResource("cluster");
            }

            public int brokerId() {
                return 1;
            }

            public Collection<Endpoint> endpoints() {
                return List.of(client);
            }

            public Endpoint interBrokerEndpoint() {
                return client;
            }

            public Collection<String> earlyStartListeners() {
                return List.of();
            }
        };
    }

    @Test
    void compareModesClientListenersWaitForTheFirstSnapshotAtMostTheStartTimeoutAndShadowModesDoNot()
        throws Exception {
        ComparingAuthorizer compare = withoutSnapshot(new GrantForgeCompareAuthorizer());
        ComparingAuthorizer shadow = withoutSnapshot(new GrantForgeShadowAuthorizer());
        long started = System.nanoTime();
        CompletableFuture<Void> compareOpens = compare.start(brokerInfo()).values().iterator().next().toCompletableFuture();
        CompletableFuture<Void> shadowOpens = shadow.start(brokerInfo()).values().iterator().next().toCompletableFuture();
        shadowOpens.get(START_TIMEOUT_MS / 2, TimeUnit.MILLISECONDS);
        assertFalse(compareOpens.isDone(), "compare mode's answers need a snapshot: its listener waits");
        compareOpens.get(30, TimeUnit.SECONDS);
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(waitedMs >= START_TIMEOUT_MS - 100, "opened after the start timeout, not before: " + waitedMs);
        assertEquals(AuthorizationResult.DENIED, ask(compare, "alice", "orders"), "no snapshot: fail closed");
        assertEquals(AuthorizationResult.ALLOWED, ask(shadow, "alice", "orders"), "Kafka's ACLs decide");
    }
}
