package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link AuditTopicWriter} decodes the golden topic sink's settings and batch the Rust encoder writes
 * ({@code crates/grantforge-jni/src/audit_topic_writer.rs}), without the native library.
 */
class AuditTopicWriterGoldenTest {
    @Test
    void decodesTheGoldenSettings() {
        Map<String, String> settings = AuditTopicWriter.decodeSettings(GoldenFixtures.read("audit-topic-settings.bin"));
        assertEquals(Map.of("topic", "_grantforge_audit", "bootstrap.servers", "localhost:9092", "producer.config", "",
            "client.id", "grantforge-audit", "partitions", "3", "replication.factor", "1", "retention.ms", "7776000000",
            "timeout.ms", "5000"), settings);
    }

    @Test
    void decodesTheGoldenBatch() {
        AuditTopicWriter.Batch batch = AuditTopicWriter.decodeBatch(GoldenFixtures.read("audit-topic-batch.bin"));
        assertEquals(7L, batch.id);
        List<String> records = new ArrayList<>();
        for (String[] record : batch.records) {
            records.add(record[0] + "=" + record[1]);
        }
        assertEquals(List.of("alice={\"specversion\":\"1.0\"}", "bób="), records);
    }
}
