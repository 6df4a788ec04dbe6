package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code docs/getting-started.md}'s node, as a new user makes it from the page's files in
 * {@code docs/examples/getting-started/}: its {@code server.properties} unchanged but for the node's ports, data
 * directory and where the policy file is, its policy file and its client files. The node starts on the oldest and
 * the newest release, registers (the node's own SASL principal is a super user: nothing runs as
 * {@code User:ANONYMOUS}, and no lock-out WARN is logged) and logs the line the page shows, alice produces to orders
 * and consumes it, and bob, who may write only returns, is refused orders with Kafka's own error. The node runs with
 * the page's step 6: the Prometheus JMX exporter's Java agent of the version the page downloads, with the shipped
 * rules; scraped, it shows the metrics the page names with the values it gives them.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GettingStartedTest {
    private static final Path EXAMPLES = ItPaths.fixtures().resolve("../../docs/examples/getting-started").normalize();
    private static final long WAIT_S = 30;
    private static final Path PAGE = EXAMPLES.resolve("../../getting-started.md").normalize();

    @Test
    void theDocumentedNodeOfKafka372ServesAliceAndRefusesBob() throws Exception {
        theDocumentedNodeServesAliceAndRefusesBob("3.7.2", false);
    }

    /** The release the page installs, where its step 5 runs as written, Kafka's command-line tools and all. */
    @Test
    void theDocumentedNodeOfKafka431ServesAliceAndRefusesBobThroughThePagesCommands() throws Exception {
        Matcher installed = Pattern.compile("`kafka_2\\.13-([0-9.]+)\\.tgz`").matcher(Files.readString(PAGE, StandardCharsets.UTF_8));
        assertTrue(installed.find(), "docs/getting-started.md names the Kafka it installs");
        assertEquals("4.3.1", installed.group(1), "the Kafka docs/getting-started.md installs");
        theDocumentedNodeServesAliceAndRefusesBob("4.3.1", true);
    }

    private void theDocumentedNodeServesAliceAndRefusesBob(String release, boolean thePagesCommands) throws Exception {
        Map<String, String> server = read(EXAMPLES.resolve("server.properties"));
        // the page copies policies.json to where grantforge.policy.file points; here it is read in place
        server.put("grantforge.policy.file", EXAMPLES.resolve("policies.json").toString());
        String page = Files.readString(PAGE, StandardCharsets.UTF_8);
        int exporterPort = Ports.free();
        try (KafkaNode node = KafkaNode.builder().name("getting-started-" + release).kafkaVersion(release)
                .jvmArg("-javaagent:" + exporterOfThePage(page) + "=127.0.0.1:" + exporterPort + ":"
                        + ItPaths.inRepo("deploy/prometheus/grantforge-jmx-exporter.yaml").toAbsolutePath())
                .documentedProperties(server).start()) {
            String[] applied = quoted(page, "applied policy version").split("…");
            assertTrue(Pattern.compile(Pattern.quote(applied[0]) + "[^\n]*" + Pattern.quote(applied[1])).matcher(node.logText()).find(),
                    "the node logs what docs/getting-started.md shows: " + String.join("…", applied) + "\n" + node.diagnostics());
            if (thePagesCommands) {
                theCommandsOfStep5ServeAliceAndRefuseBob(node, page);
            } else {
                try (Admin admin = Admin.create(client(node, "admin"))) {
                    admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
                }
                try (KafkaProducer<String, String> alice = producer(node, "alice")) {
                    alice.send(new ProducerRecord<>("orders", "first order")).get(WAIT_S, TimeUnit.SECONDS);
                }
                assertEquals(List.of("first order"), consume(node, "alice", "orders-readers"));
            }
            try (Admin admin = Admin.create(client(node, "admin"))) {
                admin.createTopics(List.of(new NewTopic("returns", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> bob = producer(node, "bob")) {
                bob.send(new ProducerRecord<>("returns", "a return")).get(WAIT_S, TimeUnit.SECONDS);
                ExecutionException refused = assertThrows(ExecutionException.class,
                        () -> bob.send(new ProducerRecord<>("orders", "bob's order")).get(WAIT_S, TimeUnit.SECONDS));
                assertInstanceOf(TopicAuthorizationException.class, refused.getCause(), "bob's produce: " + refused.getCause());
            }
            theScrapeShowsTheMetricsThePageNames(page, exporterPort);
            assertFalse(node.logText().contains("CLUSTER_ACTION on listener"), "the node's own principal is refused:\n" + node.diagnostics());
            assertFalse(node.logText().contains("User:ANONYMOUS"), "a connection without a principal:\n" + node.diagnostics());
        }
    }

    /**
     * Step 5 as the page writes it, each command in bash from the Kafka installation's folder: {@code bin/…sh} is the
     * release's tool class on its jars, {@code config/} the folder of the page's client files, and the node's address
     * that of this node. The topic is made, alice's order written and read back, and bob's refused with the error the
     * page quotes.
     */
    private static void theCommandsOfStep5ServeAliceAndRefuseBob(KafkaNode node, String page) throws Exception {
        String step = page.substring(page.indexOf("## 5."), page.indexOf("## 6."));
        String block = step.substring(step.indexOf("```sh\n") + "```sh\n".length());
        List<String> commands = List.of(block.substring(0, block.indexOf("```")).replace("\\\n", " ").strip().split("\n"));
        assertEquals(4, commands.size(), "step 5's commands: " + commands);
        Map<String, String> tools = Map.of("bin/kafka-topics.sh", "org.apache.kafka.tools.TopicCommand",
                "bin/kafka-console-producer.sh", "org.apache.kafka.tools.ConsoleProducer",
                "bin/kafka-console-consumer.sh", "org.apache.kafka.tools.consumer.ConsoleConsumer");
        List<String> outputs = new ArrayList<>();
        for (String command : commands) {
            String local = command.replace("localhost:9092", node.bootstrapServers()).replace(" config/", " " + EXAMPLES + "/");
            for (Map.Entry<String, String> tool : tools.entrySet()) {
                local = local.replace(tool.getKey(), "java -cp \"$KAFKA_CLASSPATH\" " + tool.getValue());
            }
            outputs.add(bash(local, node));
        }
        assertTrue(outputs.get(0).contains("Created topic orders."), "the topic is made:\n" + outputs.get(0));
        assertFalse(outputs.get(1).contains("Exception"), "alice's order is written:\n" + outputs.get(1));
        assertEquals("first order", outputs.get(2).lines().findFirst().orElse(""), "alice's order read back:\n" + outputs.get(2));
        String refusal = quoted(page, "Not authorized to access topics");
        assertTrue(outputs.get(3).contains(refusal), "bob's produce fails with `" + refusal + "`:\n" + outputs.get(3));
    }

    /** Runs a command line in bash with the node's Kafka jars in {@code $KAFKA_CLASSPATH}; its output, stdout first. */
    private static String bash(String commandLine, KafkaNode node) throws Exception {
        Path out = Files.createTempFile(node.dir(), "step5-", ".out");
        Path err = Files.createTempFile(node.dir(), "step5-", ".err");
        ProcessBuilder builder = new ProcessBuilder("bash", "-c", commandLine).directory(node.dir().toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().put("KAFKA_CLASSPATH", node.dist().classpath());
        Process process = builder.start();
        boolean ended = process.waitFor(90, TimeUnit.SECONDS);
        if (!ended) {
            process.destroyForcibly().waitFor();
        }
        String output = Files.readString(out) + Files.readString(err);
        assertTrue(ended, "the command ends within 90 s: " + commandLine + "\n" + output);
        return output;
    }

    /**
     * Step 6: the metrics the page names (the policy version in force, bob's refusals, alice's allowed requests), in
     * Prometheus's format, one series per role of this combined node.
     */
    private static void theScrapeShowsTheMetricsThePageNames(String page, int exporterPort) throws Exception {
        String step = page.substring(page.indexOf("## 6."), page.indexOf("## 7."));
        Matcher named = Pattern.compile("`(grantforge_[a-z_]+)`").matcher(step);
        List<String> metrics = new ArrayList<>();
        while (named.find()) {
            metrics.add(named.group(1));
        }
        assertEquals(List.of("grantforge_snapshot_version", "grantforge_decisions_denied_total",
                "grantforge_decisions_allowed_total"), metrics, "the metrics docs/getting-started.md names in step 6");
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + exporterPort + "/metrics")).build();
        HttpClient http = HttpClient.newHttpClient();
        AtomicReference<String> scraped = new AtomicReference<>("");
        AtomicReference<List<String>> problems = new AtomicReference<>(List.of("not scraped"));
        try {
            Await.until("the scrape shows the page's metrics", Duration.ofSeconds(WAIT_S), () -> {
                scraped.set(http.send(request, HttpResponse.BodyHandlers.ofString()).body());
                problems.set(problems(scraped.get(), metrics));
                return problems.get().isEmpty();
            });
        } catch (AssertionError timedOut) {
            assertEquals(List.of(), problems.get(), "in the scrape:\n" + scraped.get());
        }
    }

    /** What the scrape lacks of the metrics the page names: a series per role, with the values the page gives. */
    private static List<String> problems(String scraped, List<String> metrics) {
        List<String> problems = new ArrayList<>();
        for (String metric : metrics) {
            Matcher samples = Pattern.compile("(?m)^" + metric + "\\{[^}]*role=\"(broker|controller)\"[^}]*\\} (\\S+)$").matcher(scraped);
            int series = 0;
            while (samples.find()) {
                double value = Double.parseDouble(samples.group(2));
                if (metric.equals("grantforge_snapshot_version") ? value != 1.0 : value < 1) {
                    problems.add(metric + " of the " + samples.group(1) + " is " + value);
                }
                series++;
            }
            if (series != 2) {
                problems.add(metric + " has " + series + " series, not one per role");
            }
        }
        return problems;
    }

    /** The exporter's Java agent this module resolved, whose version is the one the page's step 6 downloads. */
    private static Path exporterOfThePage(String page) {
        Path jar = Paths.get(System.getProperty("grantforge.jmx.exporter.jar", "target/java-agents/missing.jar"));
        assertTrue(Files.isRegularFile(jar), "the exporter's Java agent, which Maven copies: " + jar);
        Matcher downloaded = Pattern.compile("io\\.prometheus\\.jmx:jmx_prometheus_javaagent:([0-9.]+)").matcher(page);
        assertTrue(downloaded.find(), "docs/getting-started.md downloads the exporter");
        assertEquals("jmx_prometheus_javaagent-" + downloaded.group(1) + ".jar", jar.getFileName().toString(),
                "docs/getting-started.md downloads the exporter the tests run");
        return jar.toAbsolutePath();
    }

    /** The backquoted text of the page that contains {@code words}. */
    private static String quoted(String page, String words) {
        Matcher quoted = Pattern.compile("`([^`]*" + Pattern.quote(words) + "[^`]*)`").matcher(page);
        assertTrue(quoted.find(), "docs/getting-started.md quotes `…" + words + "…`");
        return quoted.group(1);
    }

    /** A documented client file, with the node's address. */
    private static Properties client(KafkaNode node, String user) throws IOException {
        Properties props = new Properties();
        props.putAll(read(EXAMPLES.resolve(user + ".properties")));
        props.put("bootstrap.servers", node.bootstrapServers());
        return props;
    }

    private static KafkaProducer<String, String> producer(KafkaNode node, String user) throws IOException {
        Properties props = client(node, user);
        props.put("max.block.ms", "20000");
        props.put("delivery.timeout.ms", "20000");
        props.put("request.timeout.ms", "10000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static List<String> consume(KafkaNode node, String user, String group) throws IOException {
        Properties props = client(node, user);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of("orders"));
            long deadline = System.nanoTime() + Duration.ofSeconds(WAIT_S).toNanos();
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    private static Map<String, String> read(Path file) throws IOException {
        Properties properties = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(in);
        }
        Map<String, String> map = new LinkedHashMap<>();
        properties.stringPropertyNames().stream().sorted().forEach(key -> map.put(key, properties.getProperty(key)));
        return map;
    }
}
