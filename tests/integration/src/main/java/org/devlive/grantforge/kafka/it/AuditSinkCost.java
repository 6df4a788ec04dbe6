package org.devlive.grantforge.kafka.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * What the audit topic sink costs a broker, by {@link BrokerThroughput}'s method (the node's CPU time per thousand
 * Produce requests, rounds interleaved and the nodes' order rotated): nodes of one release in server mode against the
 * test server, side by side, one with the agent's audit to GrantForge alone ({@code grantforge.audit.sinks=grantforge})
 * and one with the topic sink beside it ({@code grantforge,topic}, its producer writing {@code _grantforge_audit} of
 * the same node), and a node with no authorizer as the anchor. Two loads: the soak's shape (small records,
 * {@code acks=all}, several producers at once: Kafka's {@code ProducerPerformance} as alice, allowed) and a refusal
 * flood (mallory, who may see the topic but not write it, sending as fast as her producers can: every Produce request
 * refused and audited).
 *
 * <p>Usage: {@code AuditSinkCost [--kafka 4.3.1] [--rounds 7] [--records 60000] [--out DIR]}; {@code benchmarks/run.sh
 * broker-audit-topic-sink} runs it as {@code docs/benchmarks.md} reports it.
 */
public final class AuditSinkCost {
    private static final String FLOODER = "mallory";
    /** The soak's shape: 100 B records, acks=all, three producers at once. */
    static final BrokerThroughput.Workload SOAK = new BrokerThroughput.Workload("soak", 100, "all", 3);
    static final String FLOOD = "flood";
    static final int FLOODERS = 2;

    private AuditSinkCost() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = BrokerThroughput.options(args);
        String kafkaVersion = options.getOrDefault("kafka", KafkaDist.DEFAULT_VERSION);
        int rounds = Integer.parseInt(options.getOrDefault("rounds", "7"));
        int records = Integer.parseInt(options.getOrDefault("records", "60000"));
        Path out = Paths.get(options.getOrDefault("out", "benchmarks/results/broker-audit-topic-sink")).toAbsolutePath();
        Files.createDirectories(out);
        Path work = out.resolve("nodes");
        ItPaths.deleteRecursively(work);
        Files.createDirectories(work);
        Path policies = work.resolve("policies.json");
        Files.writeString(policies, policies(), StandardCharsets.UTF_8);
        Path tsv = out.resolve("runs.tsv");
        Files.writeString(tsv, "workload\tnode\tround\trecords_per_s\tcpu_ms\tproduce_requests\n", StandardCharsets.UTF_8);
        List<BrokerThroughput.Run> all = new ArrayList<>();
        try (TestServer server = TestServer.start(policies, work.resolve("server"), 1)) {
            List<BrokerThroughput.Subject> subjects = startNodes(server, kafkaVersion, work);
            try {
                for (int round = 0; round < rounds; round++) {
                    for (String load : List.of(SOAK.name(), FLOOD)) {
                        for (int i = 0; i < subjects.size(); i++) {
                            BrokerThroughput.Subject subject = subjects.get((i + round) % subjects.size());
                            if (load.equals(FLOOD) && subject.name().equals("none")) {
                                continue; // no authorizer refuses nothing: the flood would be allowed writes
                            }
                            BrokerThroughput.Run run = load.equals(FLOOD) ? flood(subject, round, records)
                                : BrokerThroughput.produce(subject, 0, SOAK, round, records);
                            all.add(run);
                            Files.writeString(tsv, String.format(Locale.ROOT, "%s\t%s\t%d\t%.1f\t%.0f\t%.0f%n", run.workload(),
                                run.subject(), run.round(), run.recordsPerSec(), run.cpuMs(), run.produceRequests()),
                                StandardCharsets.UTF_8, StandardOpenOption.APPEND);
                            System.out.printf(Locale.ROOT, "%s round %d %-10s %9.0f records/s, %.1f ms CPU per 1000 Produce requests%n",
                                load, round, subject.name(), run.recordsPerSec(), run.cpuMsPerThousandRequests());
                        }
                    }
                }
            } finally {
                subjects.forEach(s -> s.node().close());
            }
        }
        String report = report(all, kafkaVersion, rounds);
        Files.writeString(out.resolve("report.md"), report, StandardCharsets.UTF_8);
        System.out.println(report);
    }

    /** alice writes and reads the topic; mallory may describe it only; the audit's producer writes the audit topic. */
    private static String policies() {
        List<String> list = List.of(
            BrokerThroughput.policy(1, "alice's perf topic", "topic", BrokerThroughput.TOPIC, "alice", "\"write\",\"read\",\"describe\""),
            BrokerThroughput.policy(2, "mallory sees the perf topic", "topic", BrokerThroughput.TOPIC, FLOODER, "\"describe\""),
            BrokerThroughput.policy(3, "the audit's producer writes the audit topic", "topic", AuditTopicSink.TOPIC, AuditTopicSink.PRINCIPAL,
                "\"create\",\"describe\",\"write\""));
        return "{\"service\":\"kafka-bench\",\"serviceEnabled\":true,\"policies\":[" + String.join(",", list) + "]}";
    }

    private static List<BrokerThroughput.Subject> startNodes(TestServer server, String kafkaVersion, Path work) throws Exception {
        Path producerConfig = AuditTopicSink.writeProducerConfig(work);
        List<BrokerThroughput.Subject> subjects = new ArrayList<>();
        subjects.add(start("none", kafkaVersion, b -> b.noAuthorizer()));
        subjects.add(start("grantforge", kafkaVersion, b -> server.agentOf(b, work.resolve("cache-grantforge"), "grantforge")
            .property("grantforge.audit.sinks", "grantforge")));
        subjects.add(start("topic", kafkaVersion, b -> AuditTopicSink.configure(server.agentOf(b, work.resolve("cache-topic"),
            "topic"), producerConfig, 1)));
        for (BrokerThroughput.Subject subject : subjects) {
            try (Admin admin = subject.node().admin(KafkaNode.SUPER_USER)) {
                admin.createTopics(Collections.singletonList(new NewTopic(BrokerThroughput.TOPIC, 1, (short) 1))).all()
                    .get(2, TimeUnit.MINUTES);
            }
        }
        return subjects;
    }

    private static BrokerThroughput.Subject start(String name, String kafkaVersion,
                                                  java.util.function.UnaryOperator<KafkaNode.Builder> authorizer) {
        Jmx jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("audit-sink-" + name).kafkaVersion(kafkaVersion).maxHeap("1g");
        jmx.jvmArgs().forEach(builder::jvmArg);
        return new BrokerThroughput.Subject(name, authorizer.apply(builder).start(), jmx);
    }

    /**
     * mallory's flood: {@value #FLOODERS} producers send {@code records} records between them as fast as they can, each
     * batch refused ({@code TOPIC_AUTHORIZATION_FAILED}); not idempotent (an idempotent one stops at its refused
     * producer id) and never retrying, so each refused batch was one Produce request the broker decided.
     */
    private static BrokerThroughput.Run flood(BrokerThroughput.Subject subject, int round, int records) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.RETRIES_CONFIG, "0");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "1024");
        List<KafkaProducer<String, String>> producers = new ArrayList<>();
        for (int i = 0; i < FLOODERS; i++) {
            producers.add(subject.node().producer(FLOODER, p));
        }
        AtomicLong refused = new AtomicLong();
        try {
            // metadata first, outside the measured span
            for (KafkaProducer<String, String> producer : producers) {
                producer.partitionsFor(BrokerThroughput.TOPIC);
            }
            double requestsBefore = BrokerThroughput.produceRequests(subject.jmx());
            long cpuBefore = BrokerThroughput.cpuMillis(subject.node().pid());
            long started = System.nanoTime();
            CountDownLatch done = new CountDownLatch(records);
            List<Thread> threads = new ArrayList<>();
            for (KafkaProducer<String, String> producer : producers) {
                Thread t = new Thread(() -> {
                    for (int n = 0; n < records / FLOODERS; n++) {
                        producer.send(new ProducerRecord<>(BrokerThroughput.TOPIC, "k", "x".repeat(100)), (m, e) -> {
                            if (e != null) {
                                refused.incrementAndGet();
                            }
                            done.countDown();
                        });
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            if (!done.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException("mallory's flood did not finish against " + subject.name());
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long cpu = BrokerThroughput.cpuMillis(subject.node().pid()) - cpuBefore;
            double requests = BrokerThroughput.produceRequests(subject.jmx()) - requestsBefore;
            if (refused.get() != records / FLOODERS * FLOODERS) {
                throw new IllegalStateException("mallory's records against " + subject.name() + ": " + refused.get() + " refused of "
                    + records);
            }
            return new BrokerThroughput.Run(0, FLOOD, subject.name(), round, records / seconds, Double.NaN, Double.NaN, cpu, requests);
        } finally {
            producers.forEach(KafkaProducer::close);
        }
    }

    /** Medians [min-max] of the counted rounds (round 0 a warm-up), the ratio of the topic sink's to GrantForge's alone. */
    static String report(List<BrokerThroughput.Run> all, String kafkaVersion, int rounds) {
        StringBuilder md = new StringBuilder(String.format(Locale.ROOT, "Kafka %s, %d rounds after the warm-up; medians [min-max]%n%n",
            kafkaVersion, rounds - 1));
        md.append("| load | node | records/s | broker CPU ms / 1000 Produce requests | Produce requests per run |\n|---|---|---|---|---|\n");
        for (String load : List.of(SOAK.name(), FLOOD)) {
            for (String node : List.of("none", "grantforge", "topic")) {
                BrokerThroughput.Stats cpu = stats(all, load, node, BrokerThroughput.Run::cpuMsPerThousandRequests);
                if (cpu.sorted().length == 0) {
                    continue;
                }
                md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", load.equals(FLOOD) ? "refusal flood" : SOAK.describe(),
                    node, stats(all, load, node, BrokerThroughput.Run::recordsPerSec).format("%.0f", null), cpu.format("%.1f", null),
                    stats(all, load, node, BrokerThroughput.Run::produceRequests).format("%.0f", null)));
            }
        }
        md.append("\nPaired per round: the topic sink's node against GrantForge's alone in the same round, median [min-max]\n\n");
        md.append("| load | CPU per Produce request, topic / grantforge | records/s, topic / grantforge |\n|---|---|---|\n");
        for (String load : List.of(SOAK.name(), FLOOD)) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s |%n", load.equals(FLOOD) ? "refusal flood" : SOAK.describe(),
                paired(all, load, BrokerThroughput.Run::cpuMsPerThousandRequests).format("%.3f", null),
                paired(all, load, BrokerThroughput.Run::recordsPerSec).format("%.3f", null)));
        }
        return md.toString();
    }

    private static BrokerThroughput.Stats stats(List<BrokerThroughput.Run> all, String load, String node,
                                                java.util.function.ToDoubleFunction<BrokerThroughput.Run> value) {
        return new BrokerThroughput.Stats(all.stream().filter(r -> r.round() > 0 && r.workload().equals(load) && r.subject().equals(node))
            .mapToDouble(value).filter(v -> !Double.isNaN(v)).sorted().toArray());
    }

    private static BrokerThroughput.Stats paired(List<BrokerThroughput.Run> all, String load,
                                                 java.util.function.ToDoubleFunction<BrokerThroughput.Run> value) {
        List<Double> ratios = new ArrayList<>();
        for (BrokerThroughput.Run topic : all) {
            if (topic.round() > 0 && topic.workload().equals(load) && topic.subject().equals("topic")) {
                all.stream().filter(r -> r.round() == topic.round() && r.workload().equals(load) && r.subject().equals("grantforge"))
                    .findFirst().ifPresent(g -> ratios.add(value.applyAsDouble(topic) / value.applyAsDouble(g)));
            }
        }
        return new BrokerThroughput.Stats(ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray());
    }
}
