package org.devlive.grantforge.kafka.agent;

import static org.devlive.grantforge.kafka.agent.TestContexts.user;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
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
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.Test;

/**
 * {@link KafkaAclBasis}, the Java copy of Kafka's ACL rules that names the ACL behind a disagreement, held to Kafka's own
 * {@code StandardAuthorizer}: for every operation granted or denied, on every pattern type (a literal name, a prefix, the
 * wildcard), to the principal or to every principal, every operation asked must get a basis that says what Kafka
 * answered: an ALLOW ACL where Kafka allows, a DENY ACL or no allowing ACL where it refuses.
 */
class KafkaAclBasisTest {
    private static final List<AclOperation> OPERATIONS = operations();
    private static final List<ResourcePattern> PATTERNS = List.of(
        new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
        new ResourcePattern(ResourceType.TOPIC, "ord", PatternType.PREFIXED),
        new ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL));

    private static List<AclOperation> operations() {
        EnumSet<AclOperation> all = EnumSet.allOf(AclOperation.class);
        all.removeAll(List.of(AclOperation.ANY, AclOperation.UNKNOWN));
        return new ArrayList<>(all);
    }

    private static StandardAuthorizer kafkaWith(List<AclBinding> acls) {
        StandardAuthorizer kafka = new StandardAuthorizer();
        kafka.configure(Map.of("node.id", 1));
        for (AclBinding acl : acls) {
            kafka.addAcl(Uuid.randomUuid(), StandardAcl.fromAclBinding(acl));
        }
        kafka.completeInitialLoad();
        return kafka;
    }

    private static AclBinding acl(ResourcePattern pattern, String principal, AclOperation operation,
                                  AclPermissionType permission) {
        return new AclBinding(pattern, new AccessControlEntry(principal, "*", operation, permission));
    }

    @Test
    void everyBasisSaysWhatStandardAuthorizerAnswered() throws Exception {
        AuthorizableRequestContext alice = user("alice");
        int asked = 0;
        for (ResourcePattern pattern : PATTERNS) {
            for (AclOperation operation : OPERATIONS) {
                for (String principal : List.of("User:alice", "User:*", "User:bob")) {
                    // an ALLOW alone; a DENY beside an ALLOW of everything, so that only the DENY can refuse
                    List<List<AclBinding>> cases = List.of(
                        List.of(acl(pattern, principal, operation, AclPermissionType.ALLOW)),
                        List.of(acl(pattern, principal, operation, AclPermissionType.DENY),
                            acl(pattern, "User:alice", AclOperation.ALL, AclPermissionType.ALLOW)));
                    for (List<AclBinding> acls : cases) {
                        StandardAuthorizer kafka = kafkaWith(acls);
                        for (AclOperation question : OPERATIONS) {
                            if (question == AclOperation.ALL) {
                                continue;
                            }
                            Action action = new Action(question,
                                new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL), 1, true, true);
                            boolean allowed = kafka.authorize(alice, List.of(action)).get(0) == AuthorizationResult.ALLOWED;
                            String basis = KafkaAclBasis.of(kafka, alice, action, allowed);
                            String what = acls + " asked " + question + ": Kafka " + (allowed ? "allows" : "refuses")
                                + ", the basis says " + basis;
                            assertEquals(allowed, basis.startsWith("ALLOW ACL "), what);
                            assertTrue(allowed || basis.startsWith("DENY ACL ") || basis.equals("no ACL allows it"), what);
                            asked++;
                        }
                    }
                }
            }
        }
        assertEquals(PATTERNS.size() * OPERATIONS.size() * 3 * 2 * (OPERATIONS.size() - 1), asked);
    }

    @Test
    void aResourceWithoutAclsIsNamedAsSuch() {
        StandardAuthorizer kafka = kafkaWith(List.of());
        Action read = new Action(AclOperation.READ, new ResourcePattern(ResourceType.TOPIC, "orders",
            PatternType.LITERAL), 1, true, true);
        assertEquals("no ACL on the resource (allow.everyone.if.no.acl.found decides)",
            KafkaAclBasis.of(kafka, user("alice"), read, false));
    }

    @Test
    void anAnswerAboutAHugeNameIsGivenButNotKept() {
        StandardAuthorizer kafka = kafkaWith(List.of());
        KafkaAclBases bases = new KafkaAclBases();
        Action huge = new Action(AclOperation.READ, new ResourcePattern(ResourceType.GROUP,
            "g".repeat(100_000), PatternType.LITERAL), 1, true, true);
        assertEquals("no ACL on the resource (allow.everyone.if.no.acl.found decides)",
            bases.of(kafka, user("alice"), huge, false));
        assertEquals(0, bases.size(), "a question past the longest kept is worked out each time");
        Action usual = new Action(AclOperation.READ, new ResourcePattern(ResourceType.GROUP, "g", PatternType.LITERAL),
            1, true, true);
        bases.of(kafka, user("alice"), usual, false);
        assertEquals(1, bases.size());
        bases.clear();
        assertEquals(0, bases.size());
    }

    @Test
    void aQuestionAskedAgainWithNewObjectsIsAnsweredFromWhatWasKept() {
        StandardAuthorizer kafka = kafkaWith(List.of());
        KafkaAclBases bases = new KafkaAclBases();
        // Kafka builds a new principal and a new action per request: equal by value, the same question.
        for (int i = 0; i < 3; i++) {
            bases.of(kafka, TestContexts.of("User", new String("alice"), "10.0.0.1"), new Action(AclOperation.READ,
                new ResourcePattern(ResourceType.TOPIC, new String("orders"), PatternType.LITERAL), 1, true, true),
                false);
        }
        assertEquals(1, bases.size(), "one question, kept once");
        bases.of(kafka, TestContexts.of("User", "alice", "10.0.0.2"), new Action(AclOperation.READ,
            new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL), 1, true, true), false);
        bases.of(kafka, TestContexts.of("User", "alice", "10.0.0.1"), new Action(AclOperation.READ,
            new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL), 1, true, true), true);
        bases.of(kafka, TestContexts.of("User", "alice", "10.0.0.1"), new Action(AclOperation.WRITE,
            new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL), 1, true, true), false);
        assertEquals(4, bases.size(), "another address, answer or operation is another question");
    }
}
