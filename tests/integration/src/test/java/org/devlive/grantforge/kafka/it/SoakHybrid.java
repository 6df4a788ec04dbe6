package org.devlive.grantforge.kafka.it;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * The soak's hybrid-mode broker: broker-{@value #BROKER} runs {@code GrantForgeHybridAuthorizer}, where a question no
 * policy decides would go to Kafka's ACLs. The soak's policies decide every question of its traffic: the grants are
 * OVERRIDE policies, and below them NORMAL policies deny everyone else every operation on the soak's resources, so that
 * a refusal is a policy's deny, not a question left open. Over the soak's traffic (the oracle judging its answers as
 * every broker's) its {@code HybridAclDecisions} must stay 0: what an operator reads before the switch to
 * {@code GrantForgeKafkaAuthorizer} (issue 50, "Hybrid mode"). broker-{@value #BROKER} leads the topics of bob's
 * grants and revocations, so that it decides refusals and allowances of produce requests, not only metadata.
 */
final class SoakHybrid {
    static final int BROKER = 3;
    /** Kafka 4.1 and later take the plugin metrics of the {@code Monitorable} class. */
    static String authorizerClass(String kafkaVersion) {
        return "org.devlive.grantforge.kafka.agent." + (kafkaVersion.compareTo("4.1") >= 0 ? "Monitorable" : "")
            + "GrantForgeHybridAuthorizer";
    }

    /** The logger of each question hybrid mode leaves to the ACLs, at DEBUG (the comparing authorizer's). */
    static final String LOGGER = "org.devlive.grantforge.kafka.agent.ComparingAuthorizer";
    /** How that logger begins the line. */
    static final String LEFT_TO_ACLS = "GrantForge hybrid mode: no policy decides";

    /** The hybrid broker's questions at the end: those Kafka's ACLs decided, GrantForge's, and the first ACLs' in words. */
    record Decided(long byAcls, long allowed, long denied, List<String> firstByAcls) {
    }

    /** The hybrid broker's authorizer, its log of each question the ACLs answer at DEBUG. */
    static void configure(KafkaNode.Builder node, String kafkaVersion) {
        node.authorizer(authorizerClass(kafkaVersion)).logLevel(LOGGER, "DEBUG");
    }

    /** Replicas of a soak topic, the first its preferred leader: the hybrid broker leads bob's two topics. */
    static Map<Integer, List<Integer>> replicas(String topic) {
        List<Integer> order = topic.equals(SoakClients.CHURNED) || topic.equals(SoakClients.TIMED) ? List.of(BROKER, 1, 2)
            : topic.equals(SoakClients.ROLE) ? List.of(2, BROKER, 1) : List.of(1, 2, BROKER);
        return Map.of(0, order);
    }

    /**
     * The resources of the soak's traffic, each with a NORMAL policy that denies everyone every operation there (the
     * grants, OVERRIDE, come first): topics, the groups and transactional ids, and the cluster (an idempotent producer's
     * {@code IDEMPOTENT_WRITE}).
     */
    static final List<List<String>> COVERED = List.of(List.of("topic", "soak-*"), List.of("topic", SoakAuditTopic.TOPIC),
        List.of("group", "*"), List.of("transactional_id", "*"), List.of("cluster", "*"));

    /** Adds the policies of {@link #COVERED} to {@code policies}. */
    static void denyEveryoneElse(ArrayNode policies) {
        for (List<String> resource : COVERED) {
            ObjectNode policy = policies.addObject();
            policy.put("id", String.valueOf(100 + policies.size())).put("name", "everyone else is refused " + resource.get(0) + " "
                + resource.get(1)).put("type", "ACCESS").put("priority", "NORMAL");
            ObjectNode document = policy.putObject("document");
            ObjectNode level = document.putObject("resources").putObject(resource.get(0));
            level.putArray("values").add(resource.get(1));
            level.put("excludes", false).put("recursive", false);
            ObjectNode item = document.putArray("deny").addObject();
            item.putArray("users");
            item.putArray("groups").add("public");
            item.putArray("roles");
            item.putArray("accessTypes").add("all");
            item.putArray("conditions");
            item.putNull("maskType");
            item.putNull("maskValue");
            item.putNull("rowFilter");
            for (String empty : List.of("allow", "allowExceptions", "denyExceptions", "validity")) {
                document.putArray(empty);
            }
        }
    }
}
