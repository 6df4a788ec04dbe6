package org.devlive.grantforge.kafka.agent;

import static org.devlive.grantforge.kafka.agent.TestContexts.action;
import static org.devlive.grantforge.kafka.agent.TestContexts.user;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
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

    private final List<GrantForgeShadowAuthorizer> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (GrantForgeShadowAuthorizer authorizer : opened) {
            authorizer.close();
        }
    }

    private <A extends GrantForgeShadowAuthorizer> A configured(A authorizer) throws IOException {
        Path policies = tmp.resolve("policies.json");
        if (!Files.exists(policies)) {
            Files.copy(FIXTURE, policies);
        }
        Map<String, Object> configs = new HashMap<>();
        configs.put("grantforge.policy.file", policies.toString());
        configs.put("super.users", "User:admin");
        configs.put("node.id", 1);
        authorizer.configure(configs);
        opened.add(authorizer);
        authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(allowAlice(AclOperation.WRITE, "orders")));
        authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(allowAlice(AclOperation.WRITE, "payments")));
        authorizer.completeInitialLoad();
        return authorizer;
    }

    private static AclBinding allowAlice(AclOperation operation, String topic) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", operation, AclPermissionType.ALLOW));
    }

    private static AuthorizationResult ask(GrantForgeShadowAuthorizer authorizer, String who, String topic) {
        return authorizer.authorize(user(who), List.of(action(AclOperation.WRITE, ResourceType.TOPIC, topic))).get(0);
    }

    private static Object metric(GrantForgeShadowAuthorizer authorizer, String name) {
        return AgentMetrics.reader(authorizer.nativeHandle()).value(name);
    }

    @Test
    void shadowModeReturnsKafkasAnswersAndCountsWhereGrantForgeDiffers() throws IOException {
        GrantForgeShadowAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
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
        GrantForgeShadowAuthorizer compare = configured(new GrantForgeCompareAuthorizer());
        assertEquals(AuthorizationResult.DENIED, ask(compare, "alice", "payments"), "GrantForge decides");
        assertEquals(AuthorizationResult.ALLOWED, ask(compare, "alice", "orders"));
        assertEquals(1L, metric(compare, "shadow-grantforge-refuses"));
        assertEquals(1L, metric(compare, "shadow-agreements"));
        assertTrue(((String) metric(compare, "shadow-disagreements")).contains("1\tcompare\t"),
            (String) metric(compare, "shadow-disagreements"));
    }

    @Test
    void anAgentThatFailsLeavesKafkasAnswersAloneInShadowModeAndRefusesInCompareMode() throws IOException {
        GrantForgeShadowAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        GrantForgeShadowAuthorizer compare = configured(new GrantForgeCompareAuthorizer());
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
        GrantForgeShadowAuthorizer compare = configured(new GrantForgeCompareAuthorizer() {
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
        GrantForgeShadowAuthorizer shadow = configured(new GrantForgeShadowAuthorizer());
        assertEquals(AuthorizationResult.ALLOWED,
            shadow.authorizeByResourceType(user("alice"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(AuthorizationResult.DENIED,
            shadow.authorizeByResourceType(user("bob"), AclOperation.WRITE, ResourceType.TOPIC));
        assertEquals(0L, metric(shadow, "shadow-agreements"),
            "the made-up resource Kafka's default implementation asks about is not compared");
        assertEquals(0L, metric(shadow, "shadow-grantforge-refuses"));
    }
}
