package org.devlive.grantforge.kafka.agent;

import static org.devlive.grantforge.kafka.agent.TestContexts.action;
import static org.devlive.grantforge.kafka.agent.TestContexts.user;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.devlive.grantforge.kafka.agent.jni.RequestEncoder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hybrid mode against the real native library and Kafka's own {@code StandardAuthorizer}, without a broker. The e2e
 * snapshot lets alice write {@code orders} and denies her writing {@code payments}; no policy speaks of
 * {@code inventory}. Kafka's ACLs here let alice write {@code payments} and {@code inventory}.
 */
class GrantForgeHybridAuthorizerTest {
    private static final Path FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json");

    @TempDir
    Path tmp;

    private final List<GrantForgeHybridAuthorizer> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (GrantForgeHybridAuthorizer authorizer : opened) {
            authorizer.close();
        }
    }

    private <A extends GrantForgeHybridAuthorizer> A configured(A authorizer) throws IOException {
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
        authorizer.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(allowAlice("payments")));
        authorizer.addAcl(INVENTORY, StandardAcl.fromAclBinding(allowAlice("inventory")));
        authorizer.completeInitialLoad();
        return authorizer;
    }

    private static final Uuid INVENTORY = Uuid.randomUuid();

    private static AclBinding allowAlice(String topic) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW));
    }

    private static AuthorizationResult ask(GrantForgeHybridAuthorizer authorizer, String who, String topic) {
        return authorizer.authorize(user(who), List.of(action(AclOperation.WRITE, ResourceType.TOPIC, topic))).get(0);
    }

    private static Object metric(GrantForgeHybridAuthorizer authorizer, String name) {
        return AgentMetrics.reader(authorizer.nativeHandle()).value(name);
    }

    @Test
    void aPolicyDecidesWhereItSpeaksAndKafkasAclsAnswerTheRest() throws IOException {
        GrantForgeHybridAuthorizer hybrid = configured(new GrantForgeHybridAuthorizer());
        assertEquals(AuthorizationResult.ALLOWED, ask(hybrid, "alice", "orders"), "policy 1, though no ACL allows");
        assertEquals(AuthorizationResult.DENIED, ask(hybrid, "alice", "payments"), "policy 5's deny beats the ACL");
        assertEquals(AuthorizationResult.ALLOWED, ask(hybrid, "alice", "inventory"), "no policy: her ACL");
        assertEquals(AuthorizationResult.DENIED, ask(hybrid, "bob", "inventory"), "no policy, no ACL for bob");
        assertEquals(2L, metric(hybrid, "hybrid-acl-decisions"));
        hybrid.removeAcl(INVENTORY);
        assertEquals(AuthorizationResult.DENIED, ask(hybrid, "alice", "inventory"), "her ACL removed");
    }

    @Test
    void oneCallMixesTheTwoSidesInTheOrderAsked() throws IOException {
        GrantForgeHybridAuthorizer hybrid = configured(new GrantForgeHybridAuthorizer());
        List<Action> actions = new ArrayList<>();
        List<AuthorizationResult> expected = new ArrayList<>();
        // more actions than a bit mask holds: every answer must still land at its own index
        for (int i = 0; i < 40; i++) {
            actions.add(action(AclOperation.WRITE, ResourceType.TOPIC, "inventory"));
            expected.add(AuthorizationResult.ALLOWED);
            actions.add(action(AclOperation.WRITE, ResourceType.TOPIC, "payments"));
            expected.add(AuthorizationResult.DENIED);
        }
        assertEquals(expected, hybrid.authorize(user("alice"), actions));
    }

    @Test
    void anAgentThatFailsRefusesEverything() throws IOException {
        GrantForgeHybridAuthorizer throwing = configured(new GrantForgeHybridAuthorizer() {
            @Override
            long nativeHybrid(RequestEncoder encoder, int requestLength) {
                throw new VirtualMachineError("Direct buffer memory") {
                };
            }
        });
        GrantForgeHybridAuthorizer answeringNothing = configured(new GrantForgeHybridAuthorizer() {
            @Override
            long nativeHybrid(RequestEncoder encoder, int requestLength) {
                return 0L;
            }
        });
        for (GrantForgeHybridAuthorizer failing : List.of(throwing, answeringNothing)) {
            assertEquals(AuthorizationResult.DENIED, ask(failing, "alice", "inventory"), "not the ACL's allow");
            assertEquals(AuthorizationResult.DENIED, ask(failing, "alice", "orders"), "not the policy's allow");
        }
    }

    @Test
    void theQuestionAboutSomeResourceOfATypeIsAllowedByEitherSide() throws IOException {
        GrantForgeHybridAuthorizer hybrid = configured(new GrantForgeHybridAuthorizer());
        assertEquals(AuthorizationResult.ALLOWED,
            hybrid.authorizeByResourceType(user("bob"), AclOperation.DESCRIBE, ResourceType.TOPIC), "policy 3");
        assertEquals(AuthorizationResult.ALLOWED,
            hybrid.authorizeByResourceType(user("alice"), AclOperation.WRITE, ResourceType.TOPIC), "policy 1");
        assertEquals(AuthorizationResult.DENIED,
            hybrid.authorizeByResourceType(user("bob"), AclOperation.WRITE, ResourceType.TOPIC), "neither");
        assertEquals(0L, metric(hybrid, "hybrid-acl-decisions"), "Kafka's made-up resource is no decision");
    }
}
