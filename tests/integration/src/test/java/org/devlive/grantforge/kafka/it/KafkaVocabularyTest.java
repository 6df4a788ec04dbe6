package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * Kafka's vocabulary as the agent's tables are held to it: {@code tests/fixtures/jni/kafka-codes.txt} is the codes of
 * the newest release's enums (written here from the kafka-clients this module runs, the newest; regenerate with
 * {@code -Dgrantforge.updateGolden=true}), and every supported release's own enums agree with it. The Rust side is
 * held to the file by {@code crates/grantforge-kafka/tests/kafka_codes.rs} and
 * {@code crates/grantforge-quotas/tests/kafka_order.rs}.
 */
class KafkaVocabularyTest {

    private static final String FIXTURE = "kafka-codes.txt";

    /** Kafka's enums the JNI payloads carry by code, and {@code ClientQuotaType}, carried by its position. */
    private static final List<String> CODED_ENUMS = List.of(
            "org.apache.kafka.common.acl.AclOperation",
            "org.apache.kafka.common.resource.ResourceType",
            "org.apache.kafka.common.resource.PatternType",
            "org.apache.kafka.common.acl.AclPermissionType");
    private static final String QUOTA_TYPE = "org.apache.kafka.server.quota.ClientQuotaType";
    /** The request types, by their id: the audit names each request it records (a line {@code ApiKeys PRODUCE 0}). */
    private static final String API_KEYS = "org.apache.kafka.common.protocol.ApiKeys";
    /**
     * A request type an older release names otherwise, to the newest release's line for the same id: the audit names an
     * id as the newest release does, so a release's request type must keep its id and change its name only here.
     */
    private static final Map<String, String> RENAMED_REQUEST_TYPES = Map.of(
            "ApiKeys LIST_CLIENT_METRICS_RESOURCES 74", "ApiKeys LIST_CONFIG_RESOURCES 74");

    @Test
    void theFixtureHoldsTheNewestReleasesCodes() throws Exception {
        String version = kafkaClientsVersion();
        assertEquals(KafkaDist.DEFAULT_VERSION, version, "this module's kafka-clients is the newest supported release");
        String codes = header(version) + String.join("", lines(KafkaVocabularyTest.class.getClassLoader()));
        Path path = ItPaths.fixtures().resolve("jni").resolve(FIXTURE);
        if (Boolean.getBoolean("grantforge.updateGolden")) {
            Files.writeString(path, codes, StandardCharsets.UTF_8);
        }
        assertEquals(codes, Files.readString(path, StandardCharsets.UTF_8),
                path + " differs from kafka-clients' codes: regenerate it with -Dgrantforge.updateGolden=true, "
                        + "then make crates/grantforge-kafka agree (docs/architecture.md, \"Adding a Kafka operation\")");
    }

    @Test
    void everyReleasesEnumsAgreeWithTheFixture() throws Exception {
        Set<String> fixture = new LinkedHashSet<>(Files.readAllLines(
                ItPaths.fixtures().resolve("jni").resolve(FIXTURE), StandardCharsets.UTF_8));
        for (String version : KafkaDist.RELEASES) {
            try (URLClassLoader release = kafkaClientsOf(version)) {
                List<String> lines = lines(release);
                assertTrue(lines.size() >= 30, version + ": " + lines);
                for (String line : lines) {
                    String kafkas = RENAMED_REQUEST_TYPES.getOrDefault(line.trim(), line.trim());
                    assertTrue(fixture.contains(kafkas),
                            "Kafka " + version + " has `" + line.trim() + "`, which " + FIXTURE + " lacks or codes otherwise");
                }
            }
        }
    }

    /** The version of the kafka-clients jar this JVM runs, as the jar records it (its own utility moves between releases). */
    private static String kafkaClientsVersion() throws IOException {
        try (InputStream in = KafkaVocabularyTest.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        }
    }

    private static String header(String version) {
        return "# Kafka's codes, from kafka-clients " + version
                + " (KafkaVocabularyTest): enum, constant, code (ClientQuotaType: its position; ApiKeys: its id)\n";
    }

    /** One line per constant: {@code AclOperation READ 3}. */
    private static List<String> lines(ClassLoader loader) throws Exception {
        List<String> lines = new ArrayList<>();
        for (String enumClass : CODED_ENUMS) {
            Class<?> type = Class.forName(enumClass, true, loader);
            for (Object constant : type.getEnumConstants()) {
                byte code = (Byte) type.getMethod("code").invoke(constant);
                lines.add(type.getSimpleName() + " " + ((Enum<?>) constant).name() + " " + code + "\n");
            }
        }
        Class<?> quotaType = Class.forName(QUOTA_TYPE, true, loader);
        for (Object constant : quotaType.getEnumConstants()) {
            Enum<?> e = (Enum<?>) constant;
            lines.add(quotaType.getSimpleName() + " " + e.name() + " " + e.ordinal() + "\n");
        }
        Class<?> apiKeys = Class.forName(API_KEYS, true, loader);
        for (Object constant : apiKeys.getEnumConstants()) {
            short id = apiKeys.getField("id").getShort(constant);
            lines.add(apiKeys.getSimpleName() + " " + ((Enum<?>) constant).name() + " " + id + "\n");
        }
        return lines;
    }

    /** A class loader over {@code version}'s own kafka-clients jar, apart from this module's. */
    private static URLClassLoader kafkaClientsOf(String version) throws IOException {
        Pattern clientsJar = Pattern.compile("kafka-clients-" + Pattern.quote(version) + "\\.jar");
        for (String entry : KafkaDist.of(version).classpath().split(Pattern.quote(File.pathSeparator))) {
            if (clientsJar.matcher(Path.of(entry).getFileName().toString()).matches()) {
                return new URLClassLoader(new URL[] {Path.of(entry).toUri().toURL()}, ClassLoader.getPlatformClassLoader());
            }
        }
        throw new IllegalStateException("no kafka-clients-" + version + ".jar on " + KafkaDist.of(version).classpathFile());
    }
}
