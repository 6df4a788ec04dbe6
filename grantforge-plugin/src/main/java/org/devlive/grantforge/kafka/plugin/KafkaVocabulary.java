package org.devlive.grantforge.kafka.plugin;

import java.util.List;

/**
 * The {@code kafka} service type's vocabulary as tables: its levels (one per Kafka resource type, all roots, in the
 * order of {@code crates/grantforge-kafka/kafka-service-type.json}) and its access types (one per Kafka operation,
 * in that file's order, with the grants each implies). The definition the plugin offers is built from these rows;
 * its projection into the agents' snapshot is held equal to the JSON, byte for byte, by DefinitionProjectionTest.
 */
final class KafkaVocabulary {

    /** The one value of the cluster level, as Kafka names the cluster resource. */
    static final String CLUSTER_NAME = "kafka-cluster";

    /**
     * A level: its console label, whether values can be looked up, and the access types a policy may name on it:
     * Kafka's own operations for the resource type (the union of {@code AclEntry.supportedOperations} over the
     * releases the agent supports), plus {@code all}, and {@code delete} on the cluster, which no release lists
     * (docs/kafka-service-type.md, "Access types per level", held to each release by KafkaVocabularyTest).
     */
    record Level(String name, String label, boolean lookup, List<String> accessTypes) {
    }

    /** An access type: Kafka's operation in lower case, its label, and the access types it implies. */
    record AccessType(String name, String label, List<String> implies) {
    }

    /** Condition names are also their evaluators' names (the agent evaluates them). */
    record Condition(String name, String label) {
    }

    static final List<Level> LEVELS = List.of(
            new Level("topic", "Topic", true, List.of("read", "write", "create", "delete", "alter", "describe",
                    "describe_configs", "alter_configs", "all")),
            new Level("group", "Group", true, List.of("read", "describe", "delete", "describe_configs", "alter_configs", "all")),
            new Level("cluster", "Cluster (its one value is " + CLUSTER_NAME + ")", true, List.of("create", "cluster_action",
                    "describe_configs", "alter_configs", "idempotent_write", "alter", "describe", "delete", "all")),
            new Level("transactional_id", "Transactional ID", true, List.of("describe", "write", "two_phase_commit", "all")),
            new Level("delegation_token", "Delegation token", false, List.of("describe", "all")),
            new Level("user", "User (token owner)", false, List.of("create_tokens", "describe_tokens", "all")));

    static final List<AccessType> ACCESS_TYPES = List.of(
            new AccessType("read", "Read", List.of("describe")),
            new AccessType("write", "Write", List.of("describe")),
            new AccessType("create", "Create", List.of()),
            new AccessType("delete", "Delete", List.of("describe")),
            new AccessType("alter", "Alter", List.of("describe")),
            new AccessType("describe", "Describe", List.of()),
            new AccessType("cluster_action", "Cluster action", List.of()),
            new AccessType("describe_configs", "Describe configs", List.of()),
            new AccessType("alter_configs", "Alter configs", List.of("describe_configs")),
            new AccessType("idempotent_write", "Idempotent write", List.of()),
            new AccessType("create_tokens", "Create tokens", List.of()),
            new AccessType("describe_tokens", "Describe tokens", List.of()),
            new AccessType("two_phase_commit", "Two-phase commit (Kafka 4.1+)", List.of()),
            new AccessType("all", "All", List.of("read", "write", "create", "delete", "alter", "describe", "cluster_action",
                    "describe_configs", "alter_configs", "idempotent_write", "create_tokens", "describe_tokens",
                    "two_phase_commit")));

    static final List<Condition> CONDITIONS = List.of(
            new Condition("ip-range", "Client addresses (IPv4/IPv6 addresses or CIDR blocks)"),
            new Condition("listener", "Listeners (listener names)"),
            new Condition("client-id", "Client ids (wildcard patterns)"));

    private KafkaVocabulary() {
    }

    static boolean offersLookup(String level) {
        return LEVELS.stream().anyMatch(l -> l.name().equals(level) && l.lookup());
    }
}
