package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.Test;

/**
 * Kafka's own codes of the enums the JNI payloads carry, from kafka-clients itself:
 * {@code tests/fixtures/jni/kafka-codes.txt}. The Rust side's mapping is held to that file
 * ({@code crates/grantforge-kafka/tests/kafka_codes.rs}), so a code that is wrong on the Rust side fails there even
 * when it round-trips. Regenerate with {@code -Dgrantforge.updateGolden=true} (after a change of the Kafka release
 * the shim compiles against).
 */
class KafkaCodesGoldenTest {
    static final String FILE = "kafka-codes.txt";

    static String kafkasCodes() {
        StringBuilder text = new StringBuilder();
        text.append("# Kafka's codes, from kafka-clients ").append(AppInfoParser.getVersion())
            .append(" (KafkaCodesGoldenTest): enum, constant, code\n");
        for (AclOperation operation : AclOperation.values()) {
            line(text, "AclOperation", operation.name(), operation.code());
        }
        for (ResourceType type : ResourceType.values()) {
            line(text, "ResourceType", type.name(), type.code());
        }
        for (PatternType pattern : PatternType.values()) {
            line(text, "PatternType", pattern.name(), pattern.code());
        }
        for (AclPermissionType permission : AclPermissionType.values()) {
            line(text, "AclPermissionType", permission.name(), permission.code());
        }
        return text.toString();
    }

    private static void line(StringBuilder text, String enumName, String constant, byte code) {
        text.append(enumName).append(' ').append(constant).append(' ').append(code).append('\n');
    }

    @Test
    void theFixtureHoldsKafkasOwnCodes() throws IOException {
        Path path = GoldenFixtures.path(FILE);
        String codes = kafkasCodes();
        if (Boolean.getBoolean("grantforge.updateGolden")) {
            Files.write(path, codes.getBytes(StandardCharsets.UTF_8));
        }
        assertEquals(codes, new String(GoldenFixtures.read(FILE), StandardCharsets.UTF_8),
            path + " differs from kafka-clients' codes: regenerate it with -Dgrantforge.updateGolden=true, "
                + "then make crates/grantforge-kafka agree");
    }
}
