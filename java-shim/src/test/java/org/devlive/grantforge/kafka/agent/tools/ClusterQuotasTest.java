package org.devlive.grantforge.kafka.agent.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;

/** A cluster's entities reach the native explain as the text kafka-configs prints, and resolve as documented. */
class ClusterQuotasTest {
    private static ClientQuotaEntity entity(String user, String clientId) {
        Map<String, String> parts = new HashMap<>();
        if (user != null) {
            parts.put(ClientQuotaEntity.USER, user.isEmpty() ? null : user);
        }
        if (clientId != null) {
            parts.put(ClientQuotaEntity.CLIENT_ID, clientId.isEmpty() ? null : clientId);
        }
        return new ClientQuotaEntity(parts);
    }

    private static Map<String, Double> rates(double produce, double fetch) {
        Map<String, Double> values = new LinkedHashMap<>();
        values.put("producer_byte_rate", produce);
        values.put("consumer_byte_rate", fetch);
        return values;
    }

    @Test
    void linesAreWhatKafkaConfigsPrintsDefaultsIncluded() {
        assertEquals("Quota configs for user-principal 'user2', client-id 'clientA' are producer_byte_rate=10.0, consumer_byte_rate=20.0",
            ClusterQuotas.line(entity("user2", "clientA"), rates(10, 20)));
        assertEquals("Quota configs for the default user-principal, the default client-id are producer_byte_rate=1.0E7, consumer_byte_rate=2.0",
            ClusterQuotas.line(entity("", ""), rates(1e7, 2)));
        assertEquals("Quota configs for the default client-id are producer_byte_rate=1.0, consumer_byte_rate=2.0",
            ClusterQuotas.line(entity(null, ""), rates(1, 2)));
    }

    @Test
    void theWorkedExampleThroughTheNativeExplain() {
        String text = ClusterQuotas.line(entity("user2", null), rates(4096, 8192)) + "\n"
            + ClusterQuotas.line(entity("user2", "clientA"), rates(10, 20)) + "\n"
            + ClusterQuotas.line(entity("user2", "clientB"), rates(30, 40)) + "\n";
        NativeLibraryLoader.load(null);
        ExplainCodec.Answer answer = ExplainCodec.run(
            java.util.List.of("--quota", "--user", "user2", "--client-id", "clientC", "--quota-file", "-"),
            text.getBytes(StandardCharsets.UTF_8));
        String out = answer.output;
        assertEquals(0, answer.exitCode, out);
        assertTrue(out.contains("producer_byte_rate: 4056 bytes/s\n    group: user=user2\n    rule 3:"), out);
        assertTrue(out.contains("consumer_byte_rate: 8132 bytes/s\n    group: user=user2\n    rule 3:"), out);
    }
}
