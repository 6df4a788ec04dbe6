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
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
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

    /**
     * The access types each level accepts ({@code docs/kafka-service-type.md}, "Access types per level", to which the
     * service plugin's definition and the agent's {@code ResourceType::access_types} are held) are Kafka's own: every
     * operation a supported release's {@code AclEntry.supportedOperations} lists for the level's resource type, and
     * {@code all}. A missing one would block a grant Kafka asks for. The one entry beyond them is {@code delete} on the
     * cluster, which no release lists.
     */
    @Test
    void eachLevelAcceptsTheOperationsEveryReleaseSupportsForItsResourceType() throws Exception {
        Map<String, Set<String>> accepted = accessTypesPerLevel();
        assertEquals(6, accepted.size(), "docs/kafka-service-type.md's table of access types per level: " + accepted);
        Map<String, Set<String>> kafkas = new TreeMap<>();
        for (String version : KafkaDist.RELEASES) {
            try (URLClassLoader release = kafkaOf(version)) {
                for (Map.Entry<String, Set<String>> level : accepted.entrySet()) {
                    Set<String> supported = supportedOperations(release, level.getKey());
                    assertTrue(!supported.isEmpty() && level.getValue().containsAll(supported), "Kafka " + version
                            + " supports " + supported + " on " + level.getKey() + "; docs/kafka-service-type.md accepts "
                            + level.getValue());
                    kafkas.computeIfAbsent(level.getKey(), k -> new TreeSet<>()).addAll(supported);
                }
            }
        }
        Map<String, Set<String>> beyondKafkas = new TreeMap<>();
        accepted.forEach((level, types) -> types.stream().filter(t -> !t.equals("all") && !kafkas.get(level).contains(t))
                .forEach(t -> beyondKafkas.computeIfAbsent(level, k -> new TreeSet<>()).add(t)));
        assertEquals(Map.of("cluster", Set.of("delete")), beyondKafkas, "access types no supported release lists");
    }

    /** The table "Access types per level" of docs/kafka-service-type.md: level, its access types. */
    private static Map<String, Set<String>> accessTypesPerLevel() throws IOException {
        String page = Files.readString(ItPaths.inRepo("docs/kafka-service-type.md"), StandardCharsets.UTF_8);
        String section = page.substring(page.indexOf("## Access types per level"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        Map<String, Set<String>> levels = new TreeMap<>();
        Matcher row = Pattern.compile("(?m)^\\| `(\\w+)` \\| (`\\w+`(?:, `\\w+`)*) \\|$").matcher(section);
        while (row.find()) {
            levels.put(row.group(1), new TreeSet<>(List.of(row.group(2).replace("`", "").split(", "))));
        }
        return levels;
    }

    /** {@code AclEntry.supportedOperations} of a level's resource type, in lower case (Java since 3.8; Scala before). */
    private static Set<String> supportedOperations(ClassLoader release, String level) throws Exception {
        Class<?> resourceType = Class.forName("org.apache.kafka.common.resource.ResourceType", true, release);
        Class<?> aclEntry;
        try {
            aclEntry = Class.forName("org.apache.kafka.security.authorizer.AclEntry", true, release);
        } catch (ClassNotFoundException scala) {
            aclEntry = Class.forName("kafka.security.authorizer.AclEntry", true, release);
        }
        Object type = resourceType.getMethod("valueOf", String.class).invoke(null, level.toUpperCase(Locale.ROOT));
        Object operations = aclEntry.getMethod("supportedOperations", resourceType).invoke(null, type);
        Set<String> names = new TreeSet<>();
        if (operations instanceof java.util.Collection<?> collection) {
            collection.forEach(o -> names.add(((Enum<?>) o).name().toLowerCase(Locale.ROOT)));
        } else {
            // a Scala set: read through Scala 2.13's public interfaces
            Class<?> scalaIterator = Class.forName("scala.collection.Iterator", true, release);
            Object iterator = Class.forName("scala.collection.IterableOnce", true, release).getMethod("iterator")
                    .invoke(operations);
            java.lang.reflect.Method hasNext = scalaIterator.getMethod("hasNext");
            java.lang.reflect.Method next = scalaIterator.getMethod("next");
            while ((Boolean) hasNext.invoke(iterator)) {
                names.add(((Enum<?>) next.invoke(iterator)).name().toLowerCase(Locale.ROOT));
            }
        }
        return names;
    }

    /** A class loader over {@code version}'s whole server classpath, apart from this module's. */
    private static URLClassLoader kafkaOf(String version) throws IOException {
        List<URL> jars = new ArrayList<>();
        for (String entry : KafkaDist.of(version).classpath().split(Pattern.quote(File.pathSeparator))) {
            jars.add(Path.of(entry).toUri().toURL());
        }
        return new URLClassLoader(jars.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
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
