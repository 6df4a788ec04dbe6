package org.devlive.grantforge.kafka.plugin;

import org.devlive.grantforge.plugin.api.model.AccessTypeDefinition;
import org.devlive.grantforge.plugin.api.model.ConditionDefinition;
import org.devlive.grantforge.plugin.api.model.ConfigField;
import org.devlive.grantforge.plugin.api.model.ResourceDefinition;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;

/** The {@code kafka} service type, built through the API's builders and factories from {@link KafkaVocabulary}. */
final class KafkaServiceType {

    static final String NAME = "kafka";
    /**
     * Raised on every change of what agents see (levels, access types, conditions): the snapshot carries it as
     * {@code typeVersion}. Agents see a new definition only with the next policy change (docs/grantforge-plugin.md).
     */
    static final int VERSION = 1;

    private KafkaServiceType() {
    }

    static ServiceTypeDefinition definition() {
        ServiceTypeDefinition.Builder builder = ServiceTypeDefinition.builder(NAME)
                .label("Apache Kafka")
                .description("Kafka's resources as the GrantForge agent for Apache Kafka decides on them: topics, groups, "
                        + "the cluster, transactional ids, delegation tokens and token owners, one level each")
                .version(VERSION);
        for (KafkaVocabulary.Level level : KafkaVocabulary.LEVELS) {
            builder.resources(resource(level));
        }
        for (KafkaVocabulary.AccessType accessType : KafkaVocabulary.ACCESS_TYPES) {
            builder.accessTypes(AccessTypeDefinition.of(accessType.name(), accessType.label(),
                    accessType.implies().toArray(String[]::new)));
        }
        for (KafkaVocabulary.Condition condition : KafkaVocabulary.CONDITIONS) {
            builder.conditions(ConditionDefinition.of(condition.name(), condition.label(), condition.name()));
        }
        return builder.configFields(KafkaConfigFields.ALL.toArray(ConfigField[]::new))
                .build();
    }

    /**
     * Every Kafka level is a root with the builder's defaults, which are also what the agent expects: WILDCARD
     * (whole name, {@code *} and {@code ?}), case-sensitive as Kafka's names are, excludes allowed.
     */
    private static ResourceDefinition resource(KafkaVocabulary.Level level) {
        return ResourceDefinition.builder(level.name())
                .label(level.label())
                .lookupSupported(level.lookup())
                .accessTypes(level.accessTypes().toArray(String[]::new))
                .build();
    }
}
