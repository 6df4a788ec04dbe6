package org.devlive.grantforge.kafka.agent.tools;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;

/**
 * {@code explain --quota --bootstrap-server B}: a running cluster's quota entities, read with the Admin API's
 * {@code describeClientQuotas} as {@code kafka-configs --describe} reads them, written as that tool prints them, so
 * that the native {@code explain --quota} has one reader for a file and for a cluster. Needs kafka-clients on the
 * class path (a broker's {@code libs/}); {@link Main} loads this class only for {@code --bootstrap-server}.
 */
final class ClusterQuotas {
    private static final long TIMEOUT_S = 60;

    private ClusterQuotas() {
    }

    /** Every quota entity of the cluster, one line each; {@code commandConfig} (may be null) holds the client's settings. */
    static String describe(String bootstrapServers, String commandConfig)
            throws IOException, InterruptedException, ExecutionException, TimeoutException {
        Properties props = new Properties();
        if (commandConfig != null) {
            try (InputStream in = Files.newInputStream(Paths.get(commandConfig))) {
                props.load(in);
            }
        }
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (Admin admin = Admin.create(props)) {
            Map<ClientQuotaEntity, Map<String, Double>> entities =
                admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(TIMEOUT_S, TimeUnit.SECONDS);
            StringBuilder out = new StringBuilder();
            for (Map.Entry<ClientQuotaEntity, Map<String, Double>> entity : entities.entrySet()) {
                out.append(line(entity.getKey(), entity.getValue())).append('\n');
            }
            return out.toString();
        }
    }

    /**
     * One entity as {@code ConfigCommand.describeQuotaConfigs} (Kafka 3.7 to 4.3) prints it: {@code Quota configs for
     * user-principal 'user2', client-id 'clientA' are producer_byte_rate=10.0}; a default (a null name) is
     * {@code the default user-principal}.
     */
    static String line(ClientQuotaEntity entity, Map<String, Double> values) {
        Map<String, String> parts = entity.entries();
        List<String> sides = new ArrayList<>();
        String[][] kinds = {{ClientQuotaEntity.USER, "user-principal"}, {ClientQuotaEntity.CLIENT_ID, "client-id"},
            {ClientQuotaEntity.IP, "ip"}};
        for (String[] kind : kinds) {
            if (parts.containsKey(kind[0])) {
                String name = parts.get(kind[0]);
                sides.add(name == null ? "the default " + kind[1] : kind[1] + " '" + name + "'");
            }
        }
        List<String> entries = new ArrayList<>();
        for (Map.Entry<String, Double> value : values.entrySet()) {
            entries.add(value.getKey() + "=" + value.getValue());
        }
        return "Quota configs for " + String.join(", ", sides) + " are " + String.join(", ", entries);
    }
}
