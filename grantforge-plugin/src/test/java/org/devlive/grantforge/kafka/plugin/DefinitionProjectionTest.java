package org.devlive.grantforge.kafka.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.devlive.grantforge.plugin.api.model.AccessTypeDefinition;
import org.devlive.grantforge.plugin.api.model.MatcherType;
import org.devlive.grantforge.plugin.api.model.PolicyType;
import org.devlive.grantforge.plugin.api.model.ResourceDefinition;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;
import org.devlive.grantforge.standin.host.SnapshotProjection;
import org.junit.jupiter.api.Test;

/**
 * The plugin's definition and {@code crates/grantforge-kafka/kafka-service-type.json} (what the agent, its tests and
 * the test server take as the {@code kafka} type) are one fact: the JSON is the server's projection of the plugin's
 * definition (built from {@link KafkaVocabulary}), byte for byte. {@code -Dgrantforge.updateGolden=true} writes it
 * from the plugin's tables; without it, a change to either side fails here until both agree.
 */
class DefinitionProjectionTest {

    private static final ServiceTypeDefinition DEFINITION = new KafkaProvider().definition();

    private static Path agentDefinitionFile() {
        return Path.of(System.getProperty("grantforge.kafka.service.type", "../crates/grantforge-kafka/kafka-service-type.json"));
    }

    private static String agentDefinition() throws Exception {
        return Files.readString(agentDefinitionFile());
    }

    @Test
    void theProjectedDefinitionIsTheAgentsDefinitionByteForByte() throws Exception {
        String projected = SnapshotProjection.toJson(SnapshotProjection.of(DEFINITION));
        if (Boolean.getBoolean("grantforge.updateGolden")) {
            Files.writeString(agentDefinitionFile(), projected);
        }
        assertEquals(agentDefinition(), projected, agentDefinitionFile() + " is not the projection of the plugin's "
                + "definition: write it from KafkaVocabulary with -Dgrantforge.updateGolden=true (grantforge-plugin/README.md)");
    }

    @Test
    void theTypeIsKafkaVersionOneWithAccessPoliciesOnly() {
        assertEquals("kafka", DEFINITION.name());
        assertEquals(1, DEFINITION.version());
        assertEquals(Set.of(PolicyType.ACCESS), DEFINITION.policyTypes());
        assertNull(DEFINITION.dataMask());
        assertNull(DEFINITION.rowFilter());
    }

    @Test
    void everyLevelIsARootWildcardCaseSensitiveLevelAPolicyNamesAlone() {
        for (ResourceDefinition level : DEFINITION.resources()) {
            assertNull(level.parent(), level.name());
            assertEquals(MatcherType.WILDCARD, level.matcher(), level.name());
            assertTrue(level.caseSensitive(), level.name());
            assertTrue(DEFINITION.isValidPolicyResource(List.of(level.name())), level.name());
        }
        // the console starts a new policy at the first declared root
        assertEquals("topic", DEFINITION.resources().get(0).name());
    }

    @Test
    void allImpliesEveryOtherAccessTypeAndNothingImpliesItself() {
        List<String> names = DEFINITION.accessTypes().stream().map(AccessTypeDefinition::name).toList();
        assertEquals(Set.copyOf(names), DEFINITION.impliedAccessTypes("all"));
        for (AccessTypeDefinition accessType : DEFINITION.accessTypes()) {
            assertFalse(accessType.impliedGrants().contains(accessType.name()), accessType.name());
        }
    }

    /**
     * The access types each level accepts are the table in docs/kafka-service-type.md, which the agent's
     * {@code ResourceType::access_types} (what {@code migrate-acls} writes) is held to as well.
     */
    @Test
    void eachLevelAcceptsTheAccessTypesTheServiceTypesDocListsAsTheAgentDoes() throws Exception {
        String doc = Files.readString(Path.of(System.getProperty("grantforge.docs", "../docs"), "kafka-service-type.md"));
        for (ResourceDefinition level : DEFINITION.resources()) {
            String listed = DEFINITION.accessTypesFor(level.name()).stream().map(name -> "`" + name + "`")
                    .collect(java.util.stream.Collectors.joining(", "));
            assertEquals(level.accessTypes().size(), DEFINITION.accessTypesFor(level.name()).size(), level.name());
            String row = "| `" + level.name() + "` | " + listed + " |";
            assertTrue(doc.contains(row), "docs/kafka-service-type.md has " + row);
        }
    }

    @Test
    void lookupsAreOfferedWhereKafkaCanListTheNames() {
        List<String> lookups = DEFINITION.resources().stream().filter(ResourceDefinition::lookupSupported)
                .map(ResourceDefinition::name).toList();
        assertEquals(List.of("topic", "group", "cluster", "transactional_id"), lookups);
    }

    @Test
    void aDefinitionWhoseAllImpliesLessProjectsToOtherBytes() throws Exception {
        ServiceTypeDefinition narrower = ServiceTypeDefinition.builder("kafka")
                .resources(DEFINITION.resources().toArray(ResourceDefinition[]::new))
                .accessTypes(DEFINITION.accessTypes().subList(0, 13).toArray(AccessTypeDefinition[]::new))
                .accessTypes(AccessTypeDefinition.of("all", "All", "read"))
                .conditions(DEFINITION.conditions().toArray(org.devlive.grantforge.plugin.api.model.ConditionDefinition[]::new))
                .build();
        assertFalse(agentDefinition().equals(SnapshotProjection.toJson(SnapshotProjection.of(narrower))));
    }
}
