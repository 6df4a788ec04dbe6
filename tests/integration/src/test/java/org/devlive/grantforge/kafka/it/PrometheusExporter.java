package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The Prometheus JMX exporter's Java agent, as Kafka operators run it (from Maven Central, {@code -javaagent:} on the
 * node's JVM), with the shipped rules of {@code deploy/prometheus/grantforge-jmx-exporter.yaml}, on a real Kafka node
 * with the agent and its quota callback: its HTTP endpoint, scraped, shows every metric {@code docs/production.md}
 * lists, with the values a refused and an allowed client, a quota and a refused policy file give. One subclass per
 * release ({@code PrometheusExporterKafka<version>Test}): the newest and the oldest.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class PrometheusExporter {
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /** A row of the metrics table of docs/production.md: metric, type, MBean attribute. */
    private static final Pattern DOCUMENTED_ROW = Pattern.compile("^\\| `(grantforge_[a-z_]+)` \\| (counter|gauge) \\| `(\\w+)`");
    /** A sample of Prometheus's text format: name, labels, value. */
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)$");

    private final String kafkaVersion;
    private KafkaNode node;
    private Jmx jmx;
    private int exporterPort;
    private Path policyFile;

    PrometheusExporter(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startNodeWithTheExporter() throws Exception {
        Path exporterJar = Paths.get(System.getProperty("grantforge.jmx.exporter.jar", "target/java-agents/missing.jar"));
        assertTrue(Files.isRegularFile(exporterJar), "the exporter's Java agent, which Maven copies: " + exporterJar);
        Path rules = ItPaths.inRepo("deploy/prometheus/grantforge-jmx-exporter.yaml");
        policyFile = Files.createTempDirectory("exporter-policies").resolve("policies.json");
        Files.copy(ItPaths.snapshot("e2e.json"), policyFile, StandardCopyOption.REPLACE_EXISTING);
        exporterPort = Ports.free();
        jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("prometheus-exporter-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .jvmArg("-javaagent:" + exporterJar.toAbsolutePath() + "=127.0.0.1:" + exporterPort + ":" + rules.toAbsolutePath())
                .policyFile(policyFile)
                .property("client.quota.callback.class", "org.devlive.grantforge.kafka.agent.GrantForgeClientQuotaCallback");
        jmx.jvmArgs().forEach(builder::jvmArg);
        node = builder.start();
        AliceAndBob.createOrders(node);
    }

    @AfterAll
    void stopNode() throws IOException {
        if (node != null) {
            node.close();
        }
        if (policyFile != null) {
            Files.deleteIfExists(policyFile);
            Files.deleteIfExists(policyFile.getParent());
        }
    }

    @Test
    @Order(1)
    void theScrapeShowsEveryDocumentedMetricWithTheValuesOfARefusedAndAnAllowedClientAndAQuota() throws Exception {
        AliceAndBob.aliceWritesOrders(node);
        AliceAndBob.bobIsRefusedOrders(node);
        ClientQuotaEntity alice = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice"));
        try (Admin admin = node.admin("admin")) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(alice,
                    List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0))))).all().get(30, TimeUnit.SECONDS);
        }
        Await.until("the quota reached the callback's table", PATIENCE, () -> value(scrape(), "grantforge_quota_entities", "") >= 1);

        Map<String, Map<String, Double>> scraped = scrape();
        List<String[]> documented = documentedMetrics();
        assertTrue(documented.size() >= 20, "docs/production.md lists the metrics: " + documented.size() + " rows");
        List<String> missing = new ArrayList<>();
        for (String[] row : documented) {
            if (!scraped.containsKey(row[0])) {
                missing.add(row[0]);
            }
        }
        assertEquals(List.of(), missing, "documented metrics the exporter does not show; it shows " + scraped.keySet());

        // one series per role of this combined node, reading one agent
        for (String role : List.of("broker", "controller")) {
            String labels = "grantforge_instance=\"" + instanceName(scraped) + "\",role=\"" + role + "\"";
            assertEquals(1.0, value(scraped, "grantforge_snapshot_version", labels), "the policy version of e2e.json, " + role);
            assertTrue(value(scraped, "grantforge_snapshot_age_seconds", labels) >= 0, "a snapshot is in force, " + role);
            assertTrue(value(scraped, "grantforge_decisions_denied_total", labels) >= 1, "bob's refusal counted, " + role);
            assertTrue(value(scraped, "grantforge_decisions_allowed_total", labels) >= 1, "alice's write counted, " + role);
            assertEquals(0.0, value(scraped, "grantforge_refresh_error", labels), "no refresh error, " + role);
            assertEquals(0.0, value(scraped, "grantforge_audit_dropped_total", labels), "nothing dropped, " + role);
            assertEquals(0.0, value(scraped, "grantforge_audit_spooled_bytes", labels), "offline mode spools nothing, " + role);
        }
        assertEquals(1.0, value(scraped, "grantforge_quota_entities", ""), "alice's producer_byte_rate");
        assertTrue(value(scraped, "grantforge_quota_changes_total", "") >= 1, "the quota change counted");
    }

    @Test
    @Order(2)
    void everyNumericAttributeOfTheAgentsMBeansIsADocumentedMetric() throws Exception {
        TreeSet<String> documentedAttributes = new TreeSet<>();
        documentedMetrics().forEach(row -> documentedAttributes.add(row[2]));
        TreeSet<String> numeric = new TreeSet<>();
        TreeSet<String> text = new TreeSet<>();
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmx.port() + "/jmxrmi");
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection connection = connector.getMBeanServerConnection();
            for (String pattern : List.of("org.devlive.grantforge.kafka:type=Agent,*", "org.devlive.grantforge.kafka:type=Quotas")) {
                assertFalse(connection.queryNames(new ObjectName(pattern), null).isEmpty(), "an MBean " + pattern);
                for (ObjectName name : connection.queryNames(new ObjectName(pattern), null)) {
                    for (MBeanAttributeInfo attribute : connection.getMBeanInfo(name).getAttributes()) {
                        (attribute.getType().equals("long") ? numeric : text).add(attribute.getName());
                    }
                }
            }
        }
        TreeSet<String> notDocumented = new TreeSet<>(numeric);
        notDocumented.removeAll(documentedAttributes);
        assertEquals(new TreeSet<>(), notDocumented, "numeric attributes with no row in docs/production.md's metrics table");
        // the one text attribute exported is LastRefreshError, as a flag; the tables of text are read over JMX
        assertEquals(new TreeSet<>(List.of("AuditByUser", "AuditBySink", "LastRefreshError", "ShadowDisagreements")), text, "text attributes");
        assertTrue(documentedAttributes.contains("LastRefreshError"), "grantforge_refresh_error documented from LastRefreshError");
    }

    @Test
    @Order(3)
    void aRefusedPolicyFileRaisesTheRefreshErrorAndKeepsTheVersionInForce() throws Exception {
        Files.writeString(policyFile, "{\"format\": 1, \"policies\": [", StandardCharsets.UTF_8);
        Await.until("grantforge_refresh_error 1 after the policy file became unreadable", PATIENCE,
                () -> value(scrape(), "grantforge_refresh_error", "role=\"broker\"") == 1.0);
        Map<String, Map<String, Double>> scraped = scrape();
        assertEquals(1.0, value(scraped, "grantforge_refresh_error", "role=\"controller\""), "the same agent, seen as controller");
        assertEquals(1.0, value(scraped, "grantforge_snapshot_version", "role=\"broker\""), "the last good version stays in force");
    }

    // ---------------------------------------------------------------------------------------------

    /** The rows of docs/production.md's metrics table: metric name, type, MBean attribute. */
    static List<String[]> documentedMetrics() throws IOException {
        List<String[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(ItPaths.inRepo("docs/production.md"), StandardCharsets.UTF_8)) {
            Matcher m = DOCUMENTED_ROW.matcher(line);
            if (m.find()) {
                rows.add(new String[] {m.group(1), m.group(2), m.group(3)});
            }
        }
        return rows;
    }

    /** The exporter's page, scraped over HTTP: metric → (labels → value). */
    private Map<String, Map<String, Double>> scrape() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + exporterPort + "/metrics")).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), "the exporter's /metrics");
        Map<String, Map<String, Double>> samples = new LinkedHashMap<>();
        for (String line : response.body().split("\n")) {
            Matcher m = SAMPLE.matcher(line);
            if (!line.startsWith("#") && m.matches()) {
                samples.computeIfAbsent(m.group(1), k -> new LinkedHashMap<>())
                        .put(m.group(2) == null ? "" : m.group(2), Double.parseDouble(m.group(3)));
            }
        }
        return samples;
    }

    /** The value of the one series of {@code metric} whose labels contain {@code labels}. */
    private static double value(Map<String, Map<String, Double>> scraped, String metric, String labels) {
        Map<String, Double> series = scraped.getOrDefault(metric, Map.of());
        List<Double> matching = new ArrayList<>();
        series.forEach((l, v) -> {
            if (l.contains(labels)) {
                matching.add(v);
            }
        });
        if (matching.size() != 1) {
            throw new AssertionError("expected one series of " + metric + " with " + labels + ", got " + series);
        }
        return matching.get(0);
    }

    /** The agent's instance name as the series carry it (the host name, grantforge.instance's default). */
    private static String instanceName(Map<String, Map<String, Double>> scraped) {
        String labels = scraped.get("grantforge_snapshot_version").keySet().iterator().next();
        Matcher m = Pattern.compile("grantforge_instance=\"([^\"]*)\"").matcher(labels);
        assertTrue(m.find(), "a grantforge_instance label: " + labels);
        return m.group(1);
    }
}
