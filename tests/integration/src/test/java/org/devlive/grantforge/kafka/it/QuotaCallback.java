package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
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
 * The agent's quota callback in a real node (broker and controller at once), quotas set with the
 * Admin API's {@code alterClientQuotas} as {@code kafka-configs} sets them: alice ({@code docs/quotas.md}'s
 * "user2") has a produce total, and her client {@code clientA} a sub-quota reserved out of it. The
 * groups show as Kafka's own tests look for them (the broker's quota MBeans, tagged {@code user}
 * and {@code client-id}), clientA is throttled against its small reserved limit while clientC,
 * sharing the large remainder, is not; removing the sub-quota puts clientA back in the shared group.
 * A {@code controller_mutation_rate} is enforced by the node's controller (brokers forward CreateTopics
 * to it): a burst of topic creations past the rate is answered THROTTLING_QUOTA_EXCEEDED, and removing
 * the rate lifts that. clientA's measured rate stays within its limit, as Kafka's own tests check it (from above,
 * over 20 s, after the first window), beside a node with Kafka's built-in callback and the same quotas, and
 * {@code explain --quota --bootstrap-server} reads the same groups and limits
 * from the node, as does {@code explain --quota-file} on what docs/quotas.md's {@code kafka-configs} procedure
 * writes. The edges: a {@code controller_mutation_rate} below 1 and a remainder of 196 B/s are enforced as
 * set, the quota table's MBean is there on every release, a principal named like a TLS distinguished name
 * has its groups and explain's answer under Kafka's sanitized name and cannot forge a log line, and a
 * fetch limit whose window cannot hold a batch starves the consumer (what Kafka does, documented).
 * One subclass per Kafka release; the two checks that wait on Kafka's rate windows ({@link QuotaRates}) run on the
 * oldest and the newest release.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class QuotaCallback {
    static final String CALLBACK = "org.devlive.grantforge.kafka.agent.GrantForgeClientQuotaCallback";
    static final String MONITORABLE_CALLBACK = "org.devlive.grantforge.kafka.agent.MonitorableGrantForgeClientQuotaCallback";
    private static final long WAIT_S = 30;
    /** alice's produce total and clientA's reserved part, in bytes/s. */
    private static final double TOTAL = 10_000_000;
    private static final double RESERVED = 131_072;
    /**
     * A burst of 1 KiB records worth 16 s of clientA's reserved limit: past the budget of Kafka's 10 s rate window, so
     * it is throttled; against the remainder of alice's total it is far below.
     */
    private static final int BURST_KIB = (int) (RESERVED * 16 / 1024);
    /**
     * The super user's controller_mutation_rate (partitions created or deleted per second): below 1, a value Kafka
     * enforces as set (the agent used to raise it to 1).
     */
    private static final double MUTATIONS_PER_SECOND = 0.5;
    /** Partitions of the first topic of each burst: far past the rate's burst of 5.5 (0.5/s over 11 one-second samples). */
    private static final int BURST_PARTITIONS = 100;
    /** Kafka's quota window: 11 samples of 1 s (quota.window.num, quota.window.size.seconds). */
    private static final long WINDOW_S = 11;
    /** How long a rate is measured after the first window, and the tolerance of Kafka's system test. */
    private static final long MEASURED_S = 20;
    private static final double TOLERANCE = 1.05;
    /**
     * The least share of what Kafka's built-in callback lets clientA through, measured at the same time, that ours
     * must let through: a limit our callback resolves too low (say 20 %) fails the rate test from below.
     */
    private static final double AT_LEAST_OF_KAFKAS = 0.85;
    /**
     * The most of the limit, or of what Kafka's built-in callback's node reads of clientA's group at the same time,
     * that ours may read: the two brokers' mean readings agreed within 4 % in ten runs (ratios 0.997 to 1.039), so a
     * limit our callback resolves 10 % too high fails the rate test from above.
     */
    private static final double AT_MOST_OF_KAFKAS = 1.10;
    private static final String RESERVED_GROUP = "kafka.server:type=Produce,user=alice,client-id=clientA";
    private static final String SHARED_GROUP = "kafka.server:type=Produce,user=alice";

    private final String kafkaVersion;
    private final String callbackClass;
    private KafkaNode node;
    private Admin admin;
    /** The node's JMX, for the subclasses' checks too. */
    Jmx jmx;
    /** A node of the same release with Kafka's built-in callback and the same quotas: the rate test's anchor. */
    private KafkaNode builtin;
    private Jmx builtinJmx;

    QuotaCallback(String kafkaVersion) {
        this(kafkaVersion, CALLBACK);
    }

    QuotaCallback(String kafkaVersion, String callbackClass) {
        this.kafkaVersion = kafkaVersion;
        this.callbackClass = callbackClass;
    }

    @BeforeAll
    void startNodes() throws Exception {
        jmx = Jmx.onFreePort();
        builtinJmx = Jmx.onFreePort();
        // Both at once: a node takes seconds to start, mostly waiting. Only the rate checks need the anchor.
        java.util.concurrent.CompletableFuture<KafkaNode> anchor = !(this instanceof QuotaRates)
                ? java.util.concurrent.CompletableFuture.completedFuture(null)
                : java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return nodeBuilder("quotas-builtin-", builtinJmx).withoutProperty("client.quota.callback.class").start();
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
        try {
            // The agent's node also accepts PLAIN logins of names no JAAS file can hold (the names test).
            node = nodeBuilder("quotas-", jmx).property("client.quota.callback.class", callbackClass)
                    .property(AnyNamePlainHandler.PROPERTY, AnyNamePlainHandler.class.getName())
                    .extraClasspath(Paths.get(AnyNamePlainHandler.class.getProtectionDomain().getCodeSource().getLocation().toURI()))
                    .start();
        } finally {
            builtin = anchor.get(2 * WAIT_S, TimeUnit.SECONDS);
        }
        admin = node.admin("admin");
        setUpQuotas(admin);
        if (builtin != null) {
            try (Admin builtinAdmin = builtin.admin("admin")) {
                setUpQuotas(builtinAdmin);
            }
        }
    }

    private KafkaNode.Builder nodeBuilder(String name, Jmx nodeJmx) {
        KafkaNode.Builder builder = KafkaNode.builder().name(name + kafkaVersion).kafkaVersion(kafkaVersion);
        nodeJmx.jvmArgs().forEach(builder::jvmArg);
        return builder.authorizer(KafkaNode.AUTHORIZER_CLASS).policyFile(ItPaths.snapshot("e2e.json"));
    }

    /** The topic and alice's quotas: her produce total, and clientA's reserved part of it. */
    private static void setUpQuotas(Admin client) throws Exception {
        client.createTopics(Collections.singletonList(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
        alter(client, new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, "alice")), "producer_byte_rate", TOTAL);
        alter(client, aliceClient("clientA"), "producer_byte_rate", RESERVED);
    }

    @AfterAll
    void stopNodes() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
        }
        for (KafkaNode n : new KafkaNode[] {node, builtin}) {
            if (n != null) {
                n.close();
            }
        }
    }

    private static ClientQuotaEntity aliceClient(String clientId) {
        Map<String, String> parts = new java.util.HashMap<>();
        parts.put(ClientQuotaEntity.USER, "alice");
        parts.put(ClientQuotaEntity.CLIENT_ID, clientId);
        return new ClientQuotaEntity(parts);
    }

    /** Sets (or with null removes) the entity's producer_byte_rate, as kafka-configs does. */
    private void alter(ClientQuotaEntity entity, Double producerByteRate) throws Exception {
        alter(entity, "producer_byte_rate", producerByteRate);
    }

    /** Sets (or with null removes) one quota of the entity, as kafka-configs does. */
    private void alter(ClientQuotaEntity entity, String key, Double value) throws Exception {
        alter(admin, entity, key, value);
    }

    private static void alter(Admin client, ClientQuotaEntity entity, String key, Double value) throws Exception {
        ClientQuotaAlteration.Op op = new ClientQuotaAlteration.Op(key, value);
        client.alterClientQuotas(Collections.singletonList(new ClientQuotaAlteration(entity, Collections.singletonList(op))))
                .all().get(WAIT_S, TimeUnit.SECONDS);
    }

    /** Sends `count` records of 1 KiB as alice with this client id; returns the client's produce-throttle-time-max. */
    private double produce(String clientId, int count) throws Exception {
        Properties extra = new Properties();
        extra.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        extra.put(ProducerConfig.BATCH_SIZE_CONFIG, "1024");
        extra.put(ProducerConfig.ACKS_CONFIG, "1");
        char[] kib = new char[1024];
        java.util.Arrays.fill(kib, 'q');
        try (KafkaProducer<String, String> producer = node.producer("alice", extra)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>("orders", new String(kib))));
            }
            for (java.util.concurrent.Future<?> f : sent) {
                f.get(WAIT_S, TimeUnit.SECONDS);
            }
            return clientMetric(producer.metrics(), "produce-throttle-time-max");
        }
    }

    private boolean brokerHasGroup(String objectName) throws Exception {
        return !jmx.read(objectName).isEmpty();
    }

    /** One attribute of one broker MBean (a group's {@code byte-rate} or {@code throttle-time}). */
    private double brokerMetric(String objectName, String attribute) throws Exception {
        return brokerMetric(jmx, objectName, attribute);
    }

    private static double brokerMetric(Jmx jmx, String objectName, String attribute) throws Exception {
        Map<String, Map<String, Object>> read = jmx.read(objectName, attribute);
        assertEquals(1, read.size(), objectName + ": " + read.keySet());
        return ((Number) read.values().iterator().next().get(attribute)).doubleValue();
    }

    @Test
    @Order(1)
    void aReservedSubQuotaIsItsOwnGroupAndThrottledWhileTheSharedRemainderIsNot() throws Exception {
        double throttledA = produce("clientA", BURST_KIB);
        // Read at once: throttle-time averages over the quota window (11 s), and clientC's burst takes well under that.
        double brokerThrottledA = brokerMetric(RESERVED_GROUP, "throttle-time");
        double throttledC = produce("clientC", BURST_KIB);
        assertTrue(brokerHasGroup(RESERVED_GROUP), "clientA's reserved group (user and client-id tags)");
        assertTrue(brokerHasGroup(SHARED_GROUP), "the shared group of alice's other clients (user tag only)");
        assertFalse(brokerHasGroup("kafka.server:type=Produce,user=alice,client-id=clientC"), "clientC has no group of its own");
        assertTrue(throttledA > 0, BURST_KIB + " KiB in a moment against a reserved 128 KiB/s (Kafka's rate window is 10 s) throttles clientA: "
                + throttledA);
        assertEquals(0.0, throttledC, BURST_KIB + " KiB against the remainder of 10 MB/s: " + throttledC);
        assertTrue(brokerThrottledA > 0, "the broker's throttle-time of clientA's group: " + brokerThrottledA);
        double brokerThrottledShared = brokerMetric(SHARED_GROUP, "throttle-time");
        assertTrue(Double.isNaN(brokerThrottledShared), "the shared group was never throttled: " + brokerThrottledShared);
    }

    /**
     * As Kafka's quota tests measure it: clientA produces as fast as it may for the first window and 20 s more, on our
     * node and, at the same time, on a second node of the same release with Kafka's built-in callback and the same
     * quotas. Kafka's own enforcement is the anchor.
     *
     * <p>From above, by what each broker measures of clientA's group over the interval (the mean of its {@code
     * byte-rate} readings, the windowed rate Kafka throttles by): ours reads at most {@value #AT_MOST_OF_KAFKAS} times
     * the limit, or what Kafka's own callback reads at the same time. The two brokers' readings agree run after run,
     * while the bytes the two clients send in the same 20 s differ by up to 20 %: Kafka's enforcement is windowed, so
     * the bytes of an interval shorter than two windows depend on what the window held when it began (Kafka's own
     * callback let clientA send 0.88 to 1.065 times the limit in 20 s).
     *
     * <p>The bytes sent, counted exactly (the producer's bytes sent less each request's 4-byte size prefix: the request
     * sizes the broker's quota records), are held to what any windowed enforcement of the limit allows: the limit over
     * the interval plus one window's budget, + 5 %. A callback that resolves a wrong quota (alice's 10 MB/s for clientA)
     * or none fails both checks. That clientA wanted more is shown by its being throttled meanwhile.
     *
     * <p>From below, as a ratio to Kafka's own callback at the same time: the broker's byte-rate of clientA's group is at
     * least {@value #AT_LEAST_OF_KAFKAS} of what Kafka's own callback gives, so a limit resolved too low fails too. A
     * sender that stopped on an error, or a record that failed, fails the test rather than lowering the rate.
     */
    void measureClientARateBesideKafkasCallback() throws Exception {
        long started = System.nanoTime();
        ClientAAtFullSpeed ours;
        ClientAAtFullSpeed kafkas;
        try (ClientAAtFullSpeed a = new ClientAAtFullSpeed(node, jmx); ClientAAtFullSpeed b = new ClientAAtFullSpeed(builtin, builtinJmx)) {
            ours = a;
            kafkas = b;
            Thread.sleep(TimeUnit.SECONDS.toMillis(WINDOW_S));
            ours.beginInterval();
            kafkas.beginInterval();
            for (int second = 0; second < MEASURED_S; second++) {
                Thread.sleep(1000);
                ours.read();
                kafkas.read();
            }
            ours.endInterval();
            kafkas.endInterval();
        }
        double readingBound = Math.max(RESERVED, kafkas.meanReading()) * AT_MOST_OF_KAFKAS;
        double sentBound = ours.allowed() * TOLERANCE;
        System.out.printf("Kafka %s: clientA's Produce requests over %d s after the first window, limit %.0f B/s: ours %s;"
                + " Kafka's built-in callback %s; bounds: byte-rate readings %.0f B/s, bytes sent %.0f B/s; %d s in all%n",
                kafkaVersion, MEASURED_S, RESERVED, ours, kafkas, readingBound, sentBound,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
        for (ClientAAtFullSpeed run : new ClientAAtFullSpeed[] {ours, kafkas}) {
            assertEquals(MEASURED_S, run.readings.size());
            assertTrue(run.readings.stream().allMatch(r -> r > 0), "the readings are of clientA's group, which the broker"
                    + " records its requests in: " + run.readings);
            assertTrue(run.throttled > 0, "clientA asked for more than its limit: throttled " + run.throttled + " ms");
        }
        assertTrue(ours.meanReading() <= readingBound, "the broker's byte-rate of clientA's group stays within "
                + AT_MOST_OF_KAFKAS + " times its limit of " + RESERVED + " B/s, or what Kafka's own callback's node reads at the"
                + " same time: ours " + ours + ", Kafka's " + kafkas);
        assertTrue(ours.rate() <= sentBound, "clientA's requests stay within what a windowed limit of " + RESERVED + " B/s"
                + " allows over the interval, + 5 %: ours " + ours + ", Kafka's " + kafkas);
        // From below by what each broker measures of the group, the rate it throttles to, for the reason above.
        double ratio = ours.meanReading() / kafkas.meanReading();
        System.out.printf("Kafka %s: ours / Kafka's built-in callback, the brokers' byte-rate of clientA's group = %.3f%n",
                kafkaVersion, ratio);
        assertTrue(ratio >= AT_LEAST_OF_KAFKAS, "clientA's group gets at least " + AT_LEAST_OF_KAFKAS + " of the rate Kafka's own"
                + " callback gives it at the same time: ours " + ours + ", Kafka's " + kafkas);
    }

    /** clientA producing to one node as fast as it may, and what is measured of it over an interval. */
    private static final class ClientAAtFullSpeed implements AutoCloseable {
        private final Jmx jmx;
        private final KafkaProducer<String, String> producer;
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Thread sender;
        /** The first error of the sender or of a record: a client that stopped sending is no measure of the limit. */
        private final java.util.concurrent.atomic.AtomicReference<Exception> failure = new java.util.concurrent.atomic.AtomicReference<>();
        final List<Double> readings = new ArrayList<>();
        private double sentAtStart;
        private double sentAtEnd;
        private long startNanos;
        private long endNanos;
        private double readingAtStart;
        double throttled = Double.NaN;

        ClientAAtFullSpeed(KafkaNode node, Jmx jmx) {
            this.jmx = jmx;
            Properties extra = new Properties();
            extra.put(ProducerConfig.CLIENT_ID_CONFIG, "clientA");
            // Requests of about 2 KiB (1/64 of a second's budget), one in flight, so that a throttled request
            // overshoots the window's budget by little.
            extra.put(ProducerConfig.BATCH_SIZE_CONFIG, "2048");
            extra.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
            extra.put(ProducerConfig.ACKS_CONFIG, "1");
            // A few seconds of the limit queued at most, so that nothing waits past the delivery timeout.
            extra.put(ProducerConfig.BUFFER_MEMORY_CONFIG, "262144");
            char[] bytes = new char[200];
            java.util.Arrays.fill(bytes, 'm');
            String value = new String(bytes);
            producer = node.producer("alice", extra);
            sender = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        producer.send(new ProducerRecord<>("orders", value), (metadata, e) -> {
                            if (e != null) {
                                failure.compareAndSet(null, e);
                            }
                        });
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                        return;
                    }
                }
            }, "clientA-sender-" + node.bootstrapServers());
            sender.start();
        }

        void beginInterval() throws Exception {
            sentAtStart = requestBytesSent(producer.metrics());
            startNanos = System.nanoTime();
            readingAtStart = brokerMetric(jmx, RESERVED_GROUP, "byte-rate");
        }

        void read() throws Exception {
            readings.add(brokerMetric(jmx, RESERVED_GROUP, "byte-rate"));
        }

        void endInterval() {
            sentAtEnd = requestBytesSent(producer.metrics());
            endNanos = System.nanoTime();
        }

        double rate() {
            return (sentAtEnd - sentAtStart) / ((endNanos - startNanos) / 1e9);
        }

        /**
         * The most a windowed limit lets through over the interval, as a rate: the limit for its length plus one whole
         * window's budget, which the window may hold unused, or about to expire, when the interval begins.
         */
        double allowed() {
            double seconds = (endNanos - startNanos) / 1e9;
            return RESERVED * (seconds + WINDOW_S) / seconds;
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            sender.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            throttled = clientMetric(producer.metrics(), "produce-throttle-time-max");
            // the records still queued are sent before the check: a failure among them counts too
            producer.flush();
            producer.close(Duration.ZERO);
            if (failure.get() != null) {
                throw new AssertionError("clientA's sender failed: " + failure.get(), failure.get());
            }
        }

        double meanReading() {
            return readings.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        }

        @Override
        public String toString() {
            double mean = meanReading();
            double max = readings.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
            return String.format("%.0f B/s (allowed %.0f; byte-rate readings: %.0f at the start, then mean %.0f, max %.0f)", rate(),
                    allowed(), readingAtStart, mean, max);
        }
    }

    /**
     * The bytes of every request the producer has sent, as the broker sizes them for its quotas: the producer's bytes
     * sent to each node less the 4-byte size prefix of each request. (Metadata requests are among them, a few in a
     * run; they only count against clientA.)
     */
    private static double requestBytesSent(Map<MetricName, ? extends Metric> metrics) {
        double bytes = 0;
        for (Map.Entry<MetricName, ? extends Metric> m : metrics.entrySet()) {
            if (m.getKey().group().equals("producer-node-metrics")) {
                double value = ((Number) m.getValue().metricValue()).doubleValue();
                if (m.getKey().name().equals("outgoing-byte-total")) {
                    bytes += value;
                } else if (m.getKey().name().equals("request-total")) {
                    bytes -= 4 * value;
                }
            }
        }
        return bytes;
    }

    /** A producer's metric of the group {@code producer-metrics}. */
    private static double clientMetric(Map<MetricName, ? extends Metric> metrics, String name) {
        for (Map.Entry<MetricName, ? extends Metric> m : metrics.entrySet()) {
            if (m.getKey().name().equals(name) && m.getKey().group().equals("producer-metrics")) {
                return ((Number) m.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("the producer has no " + name);
    }

    /**
     * {@code explain --quota --bootstrap-server} as the docs run it, in a JVM of its own: the agent JAR and the
     * node's Kafka jars on the class path.
     */
    private String explainQuota(String clientId) throws IOException, InterruptedException {
        return explainQuota("alice", clientId);
    }

    private String explainQuota(String user, String clientId) throws IOException, InterruptedException {
        Path config = Files.createTempFile("explain-quota", ".properties");
        try {
            Properties props = node.clientProps(KafkaNode.SUPER_USER);
            try (OutputStream out = Files.newOutputStream(config)) {
                props.store(out, null);
            }
            List<String> command = NodeTools.shortLivedJava();
            command.addAll(List.of("-cp", ItPaths.agentJar() + java.io.File.pathSeparator + node.dist().classpath(),
                    "org.devlive.grantforge.kafka.agent.tools.Main", "explain", "--quota", "--user", user, "--client-id", clientId,
                    "--bootstrap-server", node.bootstrapServers(), "--command-config", config.toString()));
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.redirectErrorStream(true);
            Process process = builder.start();
            byte[] output = readAll(process);
            assertTrue(process.waitFor(WAIT_S, TimeUnit.SECONDS), "explain ends");
            String text = new String(output, StandardCharsets.UTF_8);
            assertEquals(0, process.exitValue(), text);
            return text;
        } finally {
            Files.deleteIfExists(config);
        }
    }

    private static byte[] readAll(Process process) throws IOException {
        try (java.io.InputStream in = process.getInputStream()) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            int n;
            while ((n = in.read(chunk)) > 0) {
                out.write(chunk, 0, n);
            }
            return out.toByteArray();
        }
    }

    @Test
    @Order(3)
    void explainReadsTheClustersQuotasAndResolvesThemAsTheCallbackDoes() throws Exception {
        String shared = explainQuota("clientC");
        assertTrue(shared.contains("user alice with client id clientC (2 quota entities)"), shared);
        assertTrue(shared.contains("producer_byte_rate: 9868928 bytes/s\n    group: user=alice\n    rule 3: <user>"),
                "clientC shares alice's total less clientA's reserved 131072: " + shared);
        assertTrue(shared.contains("consumer_byte_rate: unthrottled"), shared);
        String reserved = explainQuota("clientA");
        assertTrue(reserved.contains("producer_byte_rate: 131072 bytes/s\n    group: user=alice,client-id=clientA\n    rule 1:"), reserved);
    }

    /** {@code explain --quota --quota-file} in a JVM of its own, as docs/quotas.md runs it (the agent JAR alone). */
    private String explainQuotaFile(Path file, String clientId) throws IOException, InterruptedException {
        List<String> command = NodeTools.shortLivedJava();
        command.addAll(List.of("-jar", ItPaths.agentJar().toString(), "explain", "--quota", "--user", "alice", "--client-id",
                clientId, "--quota-file", file.toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = readAll(process);
        assertTrue(process.waitFor(WAIT_S, TimeUnit.SECONDS), "explain ends");
        String text = new String(output, StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), text);
        return text;
    }

    /**
     * docs/quotas.md's procedure for a file, run against the node with Kafka's own {@code kafka-configs}
     * ({@link KafkaDist#configCommandClass()}): users, clients, and both. Its output read through
     * {@code explain} gives what the cluster gives; the pair command's output alone misses alice's total and the
     * default user, and explain says so.
     */
    @Test
    @Order(5)
    void theDocumentedFileProcedureCapturesEveryEntityAndThePairsAloneAreFlagged() throws Exception {
        ClientQuotaEntity defaultUser = new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, null));
        alter(defaultUser, "consumer_byte_rate", 1e9);
        Path file = Files.createTempFile("quotas", ".txt");
        Path pairsOnly = Files.createTempFile("quota-pairs", ".txt");
        try {
            StringBuilder described = new StringBuilder();
            for (List<String> types : List.of(List.of("users"), List.of("clients"), List.of("users", "clients"))) {
                List<String> args = new ArrayList<>(List.of("--describe"));
                types.forEach(type -> args.addAll(List.of("--entity-type", type)));
                ToolRun run = node.runTool(KafkaNode.SUPER_USER, node.dist().configCommandClass(), args);
                assertEquals(0, run.exitCode(), run.toString());
                described.append(run.stdout());
                if (types.size() == 2) {
                    Files.writeString(pairsOnly, run.stdout());
                }
            }
            Files.writeString(file, described.toString());
            String fromFile = explainQuotaFile(file, "clientC");
            assertFalse(fromFile.contains("warning:"), fromFile);
            assertTrue(fromFile.contains("producer_byte_rate: 9868928 bytes/s\n    group: user=alice\n    rule 3: <user>"),
                    "alice's total less clientA's sub-quota, as from the cluster: " + described + fromFile);
            assertTrue(fromFile.contains("consumer_byte_rate: 1000000000 bytes/s\n    group: user=alice\n    rule 6: <default user>"),
                    "the users command lists the default user too: " + described + fromFile);
            String fromPairs = explainQuotaFile(pairsOnly, "clientC");
            assertTrue(fromPairs.contains("\nwarning: the quota entities are all <user, client> ones"), fromPairs);
            assertTrue(fromPairs.contains("producer_byte_rate: unthrottled"), "what the pairs alone make of clientC: " + fromPairs);
        } finally {
            alter(defaultUser, "consumer_byte_rate", null);
            Files.deleteIfExists(file);
            Files.deleteIfExists(pairsOnly);
        }
    }

    /** On every release, 3.7 to 4.0 included (which have no plugin metrics): the quota table's own MBean. */
    @Test
    @Order(4)
    void theQuotaTablesMetricsAreInJmx() throws Exception {
        double entities = brokerMetric("org.devlive.grantforge.kafka:type=Quotas", "QuotaEntities");
        assertEquals(2.0, entities, "alice's produce total and clientA's sub-quota");
        assertEquals(1.0, brokerMetric("org.devlive.grantforge.kafka:type=Quotas", "QuotaUsersReserving"), "alice");
    }

    @Test
    @Order(6)
    void removingTheSubQuotaGivesClientAThePoolOfItsUserAgain() throws Exception {
        alter(aliceClient("clientA"), null);
        // The burst of the first test: worth 16 s of the sub-quota, past its 10 s window, so throttled for as long as
        // the sub-quota holds however long clientA was idle; unthrottled once clientA shares alice's 10 MB/s. (A small
        // burst would pass either way once a few seconds had passed.) The removal reaches the broker a moment after
        // alterClientQuotas returns.
        Await.until("clientA's burst of " + BURST_KIB + " KiB goes unthrottled in alice's shared group", Duration.ofSeconds(WAIT_S),
                () -> produce("clientA", BURST_KIB) == 0.0);
        // Unthrottled is not enough (a limit resolved to nothing would pass): the broker records clientA's next burst
        // in alice's shared group and not in the reserved one. The group's byte-rate is windowed (11 s): the bursts
        // before (clientC's of the first test, those awaited above) must have left the window first, or their samples
        // leaving it during the next burst would hide it.
        double burstRate = BURST_KIB * 1024.0 / WINDOW_S;
        Await.until("alice's shared group's earlier bursts leave its rate window", Duration.ofSeconds(2 * WINDOW_S),
                () -> brokerMetric(SHARED_GROUP, "byte-rate") < burstRate / 10);
        double sharedBefore = brokerMetric(SHARED_GROUP, "byte-rate");
        double reservedBefore = brokerMetric(RESERVED_GROUP, "byte-rate");
        assertEquals(0.0, produce("clientA", BURST_KIB), "clientA's next burst is unthrottled too");
        double sharedAfter = brokerMetric(SHARED_GROUP, "byte-rate");
        double reservedAfter = brokerMetric(RESERVED_GROUP, "byte-rate");
        assertTrue(sharedAfter - sharedBefore >= burstRate / 2, "the burst is recorded in alice's shared group: byte-rate "
                + sharedBefore + " -> " + sharedAfter + " (the burst over a window: " + burstRate + " B/s)");
        assertTrue(reservedAfter - reservedBefore < burstRate / 10, "and not in clientA's reserved group: byte-rate "
                + reservedBefore + " -> " + reservedAfter);
    }

    /**
     * Creates the topics in one CreateTopics request without the admin client's retry on a quota
     * violation; returns the throttling answer of the first refused topic (null if all were created),
     * and fails on any other error.
     */
    private static ThrottlingQuotaExceededException createTopics(Admin client, List<NewTopic> topics, int[] created)
            throws Exception {
        ThrottlingQuotaExceededException throttled = null;
        Map<String, KafkaFuture<Void>> results = client.createTopics(topics, new CreateTopicsOptions().retryOnQuotaViolation(false)).values();
        for (NewTopic topic : topics) {
            try {
                results.get(topic.name()).get(WAIT_S, TimeUnit.SECONDS);
                created[0]++;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof ThrottlingQuotaExceededException)) {
                    throw e;
                }
                if (throttled == null) {
                    throttled = (ThrottlingQuotaExceededException) e.getCause();
                }
            }
        }
        return throttled;
    }

    /** An Admin of the super user with its own client id (and its own connections). */
    private Admin superUserAdmin(String clientId) {
        Properties props = node.clientProps(KafkaNode.SUPER_USER);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(props);
    }

    @Test
    @Order(7)
    void aControllerMutationRateThrottlesTopicCreationAtTheControllerUntilItIsRemoved() throws Exception {
        // e2e.json lets no one but the super user create topics (alice has read and write on orders), so the
        // rate is set for admin: quotas bind super users as anyone (authorization and quotas are apart).
        ClientQuotaEntity admins = new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, KafkaNode.SUPER_USER));
        alter(admins, "controller_mutation_rate", MUTATIONS_PER_SECOND);
        int[] created = {0};
        Admin mutator = superUserAdmin("mutator");
        try {
            // A burst: a topic of 100 partitions, then one of 1 partition, in one request, repeated (new names)
            // until the controller refuses one: the quota reaches the controller's instance a moment after
            // alterClientQuotas returns. The controller checks the rate before it records a topic's partitions, so
            // the first topic of the burst passes and leaves the bucket 94.5 mutations short (95.5 if the quota
            // arrived between the two topics of a burst), which Kafka throttles by -tokens / rate: 189-191 s.
            ThrottlingQuotaExceededException throttled = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            for (int burst = 0; throttled == null && System.nanoTime() < deadline; burst++) {
                List<NewTopic> topics = new ArrayList<>();
                topics.add(new NewTopic("mutations-" + burst + "-wide", BURST_PARTITIONS, (short) 1));
                topics.add(new NewTopic("mutations-" + burst + "-narrow", 1, (short) 1));
                throttled = createTopics(mutator, topics, created);
            }
            assertNotNull(throttled, "CreateTopics past admin's controller_mutation_rate of 0.5/s is refused with "
                    + "THROTTLING_QUOTA_EXCEEDED within " + WAIT_S + " s (" + created[0] + " topics created)");
            assertTrue(created[0] >= 1, "the burst's first topic is created: the rate is checked before recording");
            double tokensShort = BURST_PARTITIONS - MUTATIONS_PER_SECOND * WINDOW_S;
            long expectedMs = Math.round(tokensShort / MUTATIONS_PER_SECOND * 1000);
            long latestMs = Math.round((tokensShort + 1) / MUTATIONS_PER_SECOND * 1000);
            assertTrue(throttled.throttleTimeMs() >= expectedMs - 2000 && throttled.throttleTimeMs() <= latestMs,
                    "Kafka's throttle for the rate as set, 0.5 mutations/s (not raised to 1/s, which gives 89 s): "
                    + expectedMs + "-" + latestMs + " ms, got " + throttled.throttleTimeMs() + " ms");
            assertTrue(brokerHasGroup("kafka.server:type=ControllerMutation,user=" + KafkaNode.SUPER_USER),
                    "the group of admin's clients as the callback names it (user tag only)");
        } finally {
            // The client honours the answer's throttle time on its connection (KIP-219): it would send nothing
            // more for ~190 s, so it is closed without waiting for that.
            mutator.close(Duration.ZERO);
        }

        // Without the rate, creation goes through long before the bucket would have refilled. Each attempt is a
        // new client (a new connection, which the client side does not hold back): with the rate still in force the
        // controller would refuse it as well, since the rate is the group's (all of admin's clients).
        alter(admins, "controller_mutation_rate", null);
        ThrottlingQuotaExceededException still = null;
        boolean createdAgain = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        for (int attempt = 0; !createdAgain && System.nanoTime() < deadline; attempt++) {
            Admin after = superUserAdmin("mutator-after-" + attempt);
            try {
                int before = created[0];
                still = createTopics(after, Collections.singletonList(new NewTopic("unthrottled-" + attempt, 1, (short) 1)), created);
                createdAgain = created[0] > before;
            } finally {
                after.close(Duration.ZERO);
            }
            if (!createdAgain) {
                Thread.sleep(200);
            }
        }
        assertTrue(createdAgain, "removing the rate lets admin create topics again: " + still);
    }

    /**
     * The seed's remainder ("clients not listed share the remaining quota of the user"), on the broker: the super user
     * (the only other principal e2e.json lets produce) plays olga, with a produce total of 4,096 B/s of which clientA
     * reserves 3,900, so clientC shares the 196 B/s left. One request of about 20 KB into that group after a quiet
     * window is throttled by Kafka's {@code (observed - bound) / bound x window}, i.e. about {@code bytes / 196 - window}
     * seconds (90-103 s), where the old floor of 1,024 B/s gave 9-10 s.
     */
    @Test
    @Order(8)
    void aSmallRemainderStandsAndThrottlesTheUsersOtherClientsAtIt() throws Exception {
        ClientQuotaEntity olga = new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, KafkaNode.SUPER_USER));
        Map<String, String> olgaClientA = new java.util.HashMap<>();
        olgaClientA.put(ClientQuotaEntity.USER, KafkaNode.SUPER_USER);
        olgaClientA.put(ClientQuotaEntity.CLIENT_ID, "clientA");
        alter(olga, "producer_byte_rate", 4096.0);
        alter(new ClientQuotaEntity(olgaClientA), "producer_byte_rate", 3900.0);
        double remainder = 4096 - 3900;
        int valueBytes = 20_000;
        char[] value = new char[valueBytes];
        java.util.Arrays.fill(value, 'o');
        Properties extra = new Properties();
        extra.put(ProducerConfig.CLIENT_ID_CONFIG, "clientC");
        extra.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
        extra.put(ProducerConfig.ACKS_CONFIG, "1");
        // Until the quota has reached the broker (a moment after alterClientQuotas returns) the request joins no group
        // and is not throttled; each attempt is a new producer and one request.
        double throttleMs = 0;
        double requestBytes = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (throttleMs == 0 && System.nanoTime() < deadline) {
            try (KafkaProducer<String, String> producer = node.producer(KafkaNode.SUPER_USER, extra)) {
                producer.send(new ProducerRecord<>("orders", new String(value))).get(WAIT_S, TimeUnit.SECONDS);
                throttleMs = clientMetric(producer.metrics(), "produce-throttle-time-max");
                requestBytes = requestBytesSent(producer.metrics());
                producer.close(Duration.ZERO);
            }
            if (throttleMs == 0) {
                Thread.sleep(200);
            }
        }
        assertTrue(brokerHasGroup("kafka.server:type=Produce,user=" + KafkaNode.SUPER_USER),
                "clientC shares olga's group (user tag only)");
        // The window Kafka measures a new group's rate over is 10 to 11 s; the request is at most all the bytes sent.
        double fewestMs = (valueBytes / remainder - WINDOW_S) * 1000 * 0.95;
        double mostMs = (requestBytes / remainder - (WINDOW_S - 1)) * 1000 * 1.05;
        System.out.printf("Kafka %s: one request of %.0f B at a remainder of %.0f B/s throttled %.0f ms (expected %.0f-%.0f)%n",
                kafkaVersion, requestBytes, remainder, throttleMs, fewestMs, mostMs);
        assertTrue(throttleMs >= fewestMs && throttleMs <= mostMs, "Kafka's throttle for the remainder of 196 B/s as the"
                + " seed defines it (not the old floor of 1,024 B/s): " + fewestMs + "-" + mostMs + " ms, got " + throttleMs);
    }

    /**
     * A principal named as TLS distinguished names are ({@code ,}, {@code =}, {@code *}, spaces, non-ASCII): its group
     * in Kafka's quota MBeans carries the name as Kafka's Sanitizer writes it, {@code explain --quota} names the same
     * group, and a quota entity whose name holds a line break cannot start a line of its own in the node's log.
     */
    @Test
    @Order(9)
    void namesWithSpecialCharactersNameTheirGroupsAndCannotForgeLogLines() throws Exception {
        String dn = "CN=J\u00fcrgen M\u00fcller,O=acme*,OU=ops team";
        alter(new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, dn)), "request_percentage", 50.0);
        String sanitized = org.apache.kafka.common.utils.internals.Sanitizer.sanitize(dn);
        String group = "kafka.server:type=Request,user=" + sanitized;
        // Every request counts against request_percentage, so the client's first requests make its group, once the
        // quota has reached the broker (a moment after alterClientQuotas returns).
        Properties props = node.clientProps(dn, AnyNamePlainHandler.PASSWORD);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!brokerHasGroup(group) && System.nanoTime() < deadline) {
            try (Admin named = Admin.create(props)) {
                named.describeCluster().clusterId().get(WAIT_S, TimeUnit.SECONDS);
            }
            Thread.sleep(200);
        }
        assertTrue(brokerHasGroup(group), "the group of " + dn + " in Kafka's MBeans: " + group + "; Request groups: "
                + jmx.read("kafka.server:type=Request,*").keySet());
        String explained = explainQuota(dn, "it-" + dn);
        assertTrue(explained.contains("request_percentage: 50 % of a request thread\n    group: user=" + sanitized + "\n"),
                explained);

        String forged = "mallory\nINFO grantforge: forged";
        alter(new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, forged)), "producer_byte_rate", 10.0);
        String warned = null;
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (warned == null && System.nanoTime() < deadline) {
            warned = node.logLines().stream().filter(line -> line.contains("<user mallory")).findFirst().orElse(null);
            Thread.sleep(200);
        }
        assertNotNull(warned, "one WARN names the entity whose producer_byte_rate of 10 Kafka cannot enforce");
        // The name's line break is written as \\n, so the forged text stays inside the agent's line. (Kafka's own
        // lines about the quota record print the name raw: those are Kafka's, and are shown here for the record.)
        assertTrue(warned.contains("WARN") && warned.contains("<user mallory\\nINFO grantforge: forged> is 10, below"), warned);
        node.logLines().stream().filter(line -> line.contains("forged")).forEach(line -> System.out.println("log: " + line));
    }

    /**
     * A fetch limit whose window cannot hold a batch: when a fetch would violate its limit, Kafka answers it empty and
     * takes its bytes back (KafkaApis: "we are going to return an empty response"), then throttles the client for
     * about {@code batch / limit - window}. A batch larger than {@code limit x (quota.window.num - 1) x
     * quota.window.size.seconds} (20,480 B at 2,048 B/s) therefore never reaches the consumer: each fetch is throttled
     * and empty, with Kafka's own callback as with ours. Raised so that the window holds the batch (4,096 B/s: 40,960 B),
     * the same consumer gets it at once. docs/quotas.md tells operators the bound.
     */
    void starveAFetchUntilItsLimitIsRaised() throws Exception {
        alter(aliceClient("clientF"), "consumer_byte_rate", 2048.0);
        int valueBytes = 30_000;
        char[] value = new char[valueBytes];
        java.util.Arrays.fill(value, 'f');
        org.apache.kafka.common.TopicPartition orders = new org.apache.kafka.common.TopicPartition("orders", 0);
        Properties extra = new Properties();
        extra.put(org.apache.kafka.clients.consumer.ConsumerConfig.CLIENT_ID_CONFIG, "clientF");
        try (org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer = node.consumer("alice", null, extra)) {
            consumer.assign(Collections.singletonList(orders));
            consumer.seekToEnd(Collections.singletonList(orders));
            long start = consumer.position(orders);
            // Until the limit has reached the broker, clientF's fetches join no group of its own.
            long applied = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (!brokerHasGroup("kafka.server:type=Fetch,user=alice,client-id=clientF") && System.nanoTime() < applied) {
                consumer.poll(Duration.ofMillis(200));
            }
            try (KafkaProducer<String, String> producer = node.producer("alice")) {
                producer.send(new ProducerRecord<>("orders", new String(value))).get(WAIT_S, TimeUnit.SECONDS);
            }
            int starved = pollFor(consumer, STARVED_S);
            double throttled = fetchThrottleTimeMax(consumer);
            alter(aliceClient("clientF"), "consumer_byte_rate", 4096.0);
            int fed = pollFor(consumer, WAIT_S);
            System.out.printf("Kafka %s: a batch of %d B from offset %d: at 2048 B/s %d records in %d s (fetch-throttle-time-max"
                    + " %.0f ms), at 4096 B/s %d%n", kafkaVersion, valueBytes, start, starved, STARVED_S, throttled, fed);
            assertEquals(0, starved, "a batch larger than the window's budget of 20,480 B is never delivered");
            assertTrue(throttled > 3000, "each fetch of it is throttled about 4.6 s and answered empty: " + throttled);
            assertEquals(1, fed, "a window of 40,960 B holds the batch");
        }
    }

    /** How long the starved consumer is watched: three throttles of about 4.6 s. */
    private static final int STARVED_S = 15;

    /** Polls until a record arrives or {@code seconds} have passed; returns the records received. */
    private static int pollFor(org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer, long seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        int received = 0;
        while (received == 0 && System.nanoTime() < deadline) {
            received += consumer.poll(Duration.ofMillis(500)).count();
        }
        return received;
    }

    private static double fetchThrottleTimeMax(org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer) {
        for (Map.Entry<MetricName, ? extends Metric> m : consumer.metrics().entrySet()) {
            if (m.getKey().name().equals("fetch-throttle-time-max") && m.getKey().group().equals("consumer-fetch-manager-metrics")) {
                return ((Number) m.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("the consumer has no fetch-throttle-time-max");
    }
}
