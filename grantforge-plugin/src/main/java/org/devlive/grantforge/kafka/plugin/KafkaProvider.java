package org.devlive.grantforge.kafka.plugin;

import java.util.List;
import java.util.stream.Stream;

import org.devlive.grantforge.plugin.api.ConnectionResult;
import org.devlive.grantforge.plugin.api.LookupException;
import org.devlive.grantforge.plugin.api.LookupRequest;
import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.devlive.grantforge.plugin.api.ServiceTypeProvider;
import org.devlive.grantforge.plugin.api.model.ConfigProblem;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;

/**
 * The {@code kafka} service type for GrantForge, named in {@code grantforge-plugin.yaml}. Stateless apart from its
 * constant definition, so the host may call it from many threads; the constructor does no I/O.
 */
public final class KafkaProvider implements ServiceTypeProvider {

    private static final ServiceTypeDefinition DEFINITION = KafkaServiceType.definition();

    public KafkaProvider() {
        // the host instantiates providers by their public no-arg constructor
    }

    @Override
    public ServiceTypeDefinition definition() {
        return DEFINITION;
    }

    @Override
    public List<ConfigProblem> validateConfig(ServiceConfig config) {
        return ConfigValidation.problems(config);
    }

    /**
     * Describes the cluster and lists the topics the service's principal may see. Never throws: the host shows an
     * exception from here as it is, secrets and all, so every failure becomes one scrubbed line.
     */
    @Override
    public ConnectionResult testConnection(ServiceConfig config) {
        SafeText safe = SafeText.of(config);
        try (KafkaAdminCalls kafka = KafkaAdminCalls.open(config)) {
            KafkaAdminCalls.ClusterSummary summary = kafka.describe();
            String found = "cluster " + summary.clusterId() + ": " + summary.brokers() + " broker(s), "
                    + summary.visibleTopics() + " topic(s) visible";
            if (summary.visibleTopics() == 0) {
                found += "; Kafka hides topics the principal may not DESCRIBE, so topic lookups will offer nothing "
                        + "until it may";
            }
            return new ConnectionResult(ConnectionResult.Status.SUCCEEDED, safe.line(found));
        } catch (Exception e) {
            return ConnectionResult.failed(safe.line(failureOf(e, config).message()));
        } catch (LinkageError | StackOverflowError e) {
            // a broken package or client: still one line, never the host's unscrubbed toString()
            return ConnectionResult.failed(safe.line("the plugin failed: " + e));
        }
    }

    /** Names of the level starting with what the user typed, sorted, at most the request's limit. */
    @Override
    public List<String> lookup(LookupRequest request) {
        String level = request.resource();
        if (level.equals("cluster")) {
            return KafkaAdminCalls.matching(Stream.of(KafkaVocabulary.CLUSTER_NAME), request.userInput(), request.limit());
        }
        if (!KafkaVocabulary.offersLookup(level)) {
            throw new LookupException(LookupException.Reason.INVALID_INPUT, "level " + level + " has no lookup: its values "
                    + "are named by hand");
        }
        ServiceConfig config = request.config();
        try (KafkaAdminCalls kafka = KafkaAdminCalls.open(config)) {
            Stream<String> names = switch (level) {
                case "topic" -> kafka.topics(config.getBoolean(KafkaConfigFields.LOOKUP_INTERNAL_TOPICS, false)).stream();
                case "group" -> kafka.groups();
                default -> kafka.transactionalIds();
            };
            return KafkaAdminCalls.matching(names, request.userInput(), request.limit());
        } catch (Exception e) {
            KafkaFailure failure = failureOf(e, config);
            throw new LookupException(failure.reason(), SafeText.of(config).line("lookup of " + level + " failed: "
                    + failure.message()));
        }
    }

    private static KafkaFailure failureOf(Exception e, ServiceConfig config) {
        String bootstrap = config.get(KafkaConfigFields.BOOTSTRAP_SERVERS) == null ? "the bootstrap servers"
                : AdminSettings.bootstrapServers(config);
        return KafkaFailure.of(e, bootstrap, AdminSettings.timeoutMs(config));
    }
}
