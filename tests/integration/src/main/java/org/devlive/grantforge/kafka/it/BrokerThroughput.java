package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * What an authorizer costs a broker: Kafka's own {@code kafka-producer-perf-test} and {@code kafka-consumer-perf-test}
 * (the release's {@code ProducerPerformance} and {@code ConsumerPerformance}, each in a JVM of its own) against three
 * nodes of one release that run at the same time: (a) no authorizer, (b) {@code StandardAuthorizer} and (c) the
 * agent, (b) and (c) holding the same authorization data: Kafka's {@code AuthorizerBenchmark} set ({@link KafkaAclSet},
 * one principal per resource, 20 % deny) at each size, and the rights of the producing and consuming user, alice, who
 * is no super user, so every request of hers is decided.
 *
 * <p>Each round runs every workload against each node in turn, the nodes' order rotating from round to round, so a
 * slow moment of the shared machine falls on all three alike; the first round is a warm-up and is not counted.
 * Reported per workload and node: the medians of records/s, MB/s and the 99th-percentile latency that the tool
 * prints, and of the broker's CPU time (user + system of the node's process, from {@code /proc/<pid>/stat}) per
 * thousand Produce requests (the node's {@code RequestsPerSec} count of them), with the spread (min-max) and the
 * ratios to (a). Every run is also written as one line of {@code runs.tsv}.
 *
 * <p>Usage: {@code BrokerThroughput [--kafka 4.3.1] [--sizes 0,50000,200000] [--rounds 6] [--records 200000]
 * [--workloads all|w1,w2] [--out DIR] [--profile off|itimer|cpu] [--agent-native LIB.so]}, or {@code BrokerThroughput --report LOG[,LOG...]} for the report of runs
 * already printed (several invocations, say a long one at size 0 and a shorter one at the larger sizes).
 * With {@code --profile itimer}, each node's CPU is profiled over the counted rounds ({@link NodeProfiler}; the
 * profiles and {@code profiles.tsv} go to the output directory); {@code --agent-native} gives the agent node another
 * build of the native library (one with symbols, so that the profile names the agent's own functions). {@code benchmarks/run.sh broker} runs it as
 * {@code docs/benchmarks.md} reports it.
 */
public final class BrokerThroughput {
    private static final String USER = "alice";
    static final String TOPIC = "perf";
    private static final String GROUP_PREFIX = "perf-";
    private static final int ACLS_PER_RESOURCE = 1;
    private static final double DENY_PERCENTAGE = 20;
    /** Small batches, so that requests, not bytes, dominate. */
    private static final String BATCH_BYTES = "1024";
    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(5);
    private static final Pattern PRODUCER_SUMMARY = Pattern.compile(
            "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), ([\\d.]+) ms avg latency, ([\\d.]+) ms max latency, "
                    + "(\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th");

    /** One kind of load: record size, acks and how many producers at once (each a tool JVM of its own). */
    record Workload(String name, int recordBytes, String acks, int producers) {
        String describe() {
            return (recordBytes >= 1024 ? recordBytes / 1024 + " KiB" : recordBytes + " B") + ", acks=" + acks + ", "
                    + producers + (producers == 1 ? " producer" : " producers");
        }
    }

    static final List<Workload> WORKLOADS = List.of(
            new Workload("w1", 100, "1", 1),
            new Workload("w2", 100, "all", 1),
            new Workload("w3", 1024, "1", 1),
            new Workload("w4", 100, "1", 3));

    /** One node under test. */
    record Subject(String name, KafkaNode node, Jmx jmx) {
    }

    /** What one run measured. */
    record Run(int size, String workload, String subject, int round, double recordsPerSec, double mbPerSec, double p99Ms,
               double cpuMs, double produceRequests) {
        double cpuMsPerThousandRequests() {
            return produceRequests > 0 ? cpuMs / produceRequests * 1000 : Double.NaN;
        }
    }

    private BrokerThroughput() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        if (options.containsKey("report")) {
            System.out.println(reportFromLogs(options.get("report"), options.getOrDefault("kafka", KafkaDist.DEFAULT_VERSION)));
            return;
        }
        String kafkaVersion = options.getOrDefault("kafka", KafkaDist.DEFAULT_VERSION);
        List<Integer> sizes = Arrays.stream(options.getOrDefault("sizes", "0,50000,200000").split(","))
                .map(String::trim).map(Integer::parseInt).collect(Collectors.toList());
        int rounds = Integer.parseInt(options.getOrDefault("rounds", "6"));
        int records = Integer.parseInt(options.getOrDefault("records", "200000"));
        String chosen = options.getOrDefault("workloads", "all");
        List<Workload> workloads = chosen.equals("all") ? WORKLOADS
                : WORKLOADS.stream().filter(w -> Arrays.asList(chosen.split(",")).contains(w.name())).collect(Collectors.toList());
        String profile = options.getOrDefault("profile", "off");
        if (!List.of("off", "itimer", "cpu").contains(profile)) {
            throw new IllegalArgumentException("--profile must be off, itimer or cpu, not " + profile);
        }
        // The agent node's native library: another build of it (one with symbols, for a profile of its own code).
        String agentNativeLibrary = options.get("agent-native");
        // The nodes: none, standard and agent by default; shadow adds GrantForgeShadowAuthorizer (the ACLs decide, the
        // agent is asked beside them), hybrid GrantForgeHybridAuthorizer (the policies decide what they speak of, the
        // ACLs the rest; the perf traffic is the policies').
        List<String> chosenSubjects = Arrays.asList(options.getOrDefault("subjects", "none,standard,agent").split(","));
        if (!SUBJECTS.containsAll(chosenSubjects) || !chosenSubjects.contains("none")) {
            throw new IllegalArgumentException("--subjects takes none (always) and any of " + SUBJECTS + ", not " + chosenSubjects);
        }
        Path out = Paths.get(options.getOrDefault("out", "benchmarks/results/broker"));
        Files.createDirectories(out);
        Path tsv = out.resolve("runs.tsv");
        Files.writeString(tsv, "size\tworkload\tnode\tround\trecords_per_s\tmb_per_s\tp99_ms\tcpu_ms\tproduce_requests\n",
                StandardCharsets.UTF_8);
        List<Run> all = new ArrayList<>();
        for (int size : sizes) {
            List<Subject> subjects = startNodes(chosenSubjects, kafkaVersion, size, out, agentNativeLibrary);
            List<double[]> profileStart = new ArrayList<>();
            try {
                for (int round = 0; round < rounds; round++) {
                    if (!profile.equals("off") && round == 1) {
                        profileStart = startProfiles(subjects, profile);
                    }
                    for (Workload workload : workloads) {
                        for (int i = 0; i < subjects.size(); i++) {
                            Subject subject = subjects.get((i + round) % subjects.size());
                            Run run = produce(subject, size, workload, round, workload.recordBytes() >= 1024 ? records / 2 : records);
                            all.add(run);
                            Files.writeString(tsv, String.format(Locale.ROOT, "%d\t%s\t%s\t%d\t%.1f\t%.3f\t%.0f\t%.0f\t%.0f%n", run.size(),
                                    run.workload(), run.subject(), run.round(), run.recordsPerSec(), run.mbPerSec(), run.p99Ms(), run.cpuMs(),
                                    run.produceRequests()), StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
                            System.out.printf(Locale.ROOT, "size %d %s round %d %-8s %9.0f records/s %6.2f MB/s p99 %4.0f ms, %.1f ms CPU"
                                    + " per 1000 requests%n", size, workload.name(), round, subject.name(), run.recordsPerSec(), run.mbPerSec(),
                                    run.p99Ms(), run.cpuMsPerThousandRequests());
                        }
                    }
                    for (int i = 0; i < subjects.size(); i++) {
                        Subject subject = subjects.get((i + round) % subjects.size());
                        double[] consumed = consume(subject, round, records);
                        Run run = new Run(size, "consume", subject.name(), round, consumed[0], consumed[1], Double.NaN, Double.NaN, 0);
                        all.add(run);
                        System.out.printf(Locale.ROOT, "size %d consume round %d %-8s %9.0f records/s %6.2f MB/s%n", size, round,
                                subject.name(), consumed[0], consumed[1]);
                    }
                }
                if (!profile.equals("off") && rounds > 1) {
                    stopProfiles(subjects, profileStart, size, out);
                }
            } finally {
                subjects.forEach(s -> s.node().close());
            }
        }
        String report = report(all, workloads, sizes, kafkaVersion);
        Files.writeString(out.resolve("report.md"), report, StandardCharsets.UTF_8);
        System.out.println(report);
    }

    static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got " + args[i]);
            }
            options.put(args[i].substring(2), args[i + 1]);
        }
        return options;
    }

    // ------------------------------------------------------------------------------------------
    // the nodes

    /** Every node there can be, in the report's order. */
    static final List<String> SUBJECTS = List.of("none", "standard", "agent", "shadow", "hybrid");

    private static List<Subject> startNodes(List<String> chosen, String kafkaVersion, int size, Path out, String agentNativeLibrary)
            throws Exception {
        Path policies = out.resolve("policies-" + size + ".json");
        GrantForgeSnapshot.write(policies, size, ACLS_PER_RESOURCE, DENY_PERCENTAGE, alicesPolicies());
        java.util.function.UnaryOperator<KafkaNode.Builder> agentSettings = b -> {
            b.policyFile(policies).property("grantforge.snapshot.max.bytes", String.valueOf(1L << 30));
            return agentNativeLibrary == null ? b : b.property("grantforge.native.library.path", agentNativeLibrary);
        };
        List<Subject> subjects = new ArrayList<>();
        for (String name : chosen) {
            subjects.add(switch (name) {
                case "none" -> start(name, kafkaVersion, size, b -> b.noAuthorizer());
                case "standard" -> start(name, kafkaVersion, size, b -> b.authorizer("org.apache.kafka.metadata.authorizer.StandardAuthorizer"));
                case "agent" -> start(name, kafkaVersion, size, b -> agentSettings.apply(b.authorizer(KafkaNode.AUTHORIZER_CLASS)));
                case "shadow" -> start(name, kafkaVersion, size, b -> agentSettings.apply(b.authorizer(KafkaNode.SHADOW_AUTHORIZER_CLASS)));
                case "hybrid" -> start(name, kafkaVersion, size, b -> agentSettings.apply(b.authorizer(KafkaNode.HYBRID_AUTHORIZER_CLASS)));
                default -> throw new IllegalArgumentException("no node " + name);
            });
        }
        for (Subject subject : subjects) {
            try (Admin admin = subject.node().admin(KafkaNode.SUPER_USER)) {
                admin.createTopics(Collections.singletonList(new NewTopic(TOPIC, 1, (short) 1))).all().get(2, TimeUnit.MINUTES);
                // the ACLs StandardAuthorizer decides by; the shadow compares them and hybrid mode keeps them beside
                if (List.of("standard", "shadow", "hybrid").contains(subject.name())) {
                    loadAcls(admin, size);
                }
            }
        }
        return subjects;
    }

    private static Subject start(String name, String kafkaVersion, int size, java.util.function.UnaryOperator<KafkaNode.Builder> authorizer)
            throws IOException {
        Jmx jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("throughput-" + name + "-" + size).kafkaVersion(kafkaVersion)
                .maxHeap("2g");
        jmx.jvmArgs().forEach(builder::jvmArg);
        return new Subject(name, authorizer.apply(builder).start(), jmx);
    }

    /**
     * alice's rights: write and read the topic, read her consumer groups (the agent's policies; policy ids are numbers,
     * these beyond the set's).
     */
    private static String[] alicesPolicies() {
        return new String[] {
            policy(2_000_000_001, "alice's perf topic", "topic", TOPIC, USER, "\"write\",\"read\",\"describe\""),
            policy(2_000_000_002, "alice's perf groups", "group", GROUP_PREFIX + "*", USER, "\"read\",\"describe\""),
        };
    }

    /** A policy allowing {@code user} {@code accessTypes} (JSON strings, comma-separated) on one resource. */
    static String policy(long id, String name, String level, String value, String user, String accessTypes) {
        return "{\"id\":\"" + id + "\",\"name\":\"" + name + "\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{\"resources\":{\""
                + level + "\":{\"values\":[\"" + value + "\"],\"excludes\":false,\"recursive\":false}},\"allow\":[{\"users\":[\"" + user
                + "\"],\"groups\":[],\"roles\":[],\"accessTypes\":[" + accessTypes + "],\"conditions\":[],\"maskType\":null,"
                + "\"maskValue\":null,\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}";
    }

    /** The same rights as ACLs, with Kafka's benchmark set, through the Admin API in batches of at most 10,000. */
    private static void loadAcls(Admin admin, int size) throws Exception {
        List<AclBinding> bindings = new ArrayList<>(KafkaAclSet.bindings(size, ACLS_PER_RESOURCE, DENY_PERCENTAGE));
        ResourcePattern topic = new ResourcePattern(ResourceType.TOPIC, TOPIC, PatternType.LITERAL);
        for (AclOperation op : List.of(AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)) {
            bindings.add(new AclBinding(topic, new AccessControlEntry("User:" + USER, "*", op, AclPermissionType.ALLOW)));
        }
        ResourcePattern groups = new ResourcePattern(ResourceType.GROUP, GROUP_PREFIX, PatternType.PREFIXED);
        for (AclOperation op : List.of(AclOperation.READ, AclOperation.DESCRIBE)) {
            bindings.add(new AclBinding(groups, new AccessControlEntry("User:" + USER, "*", op, AclPermissionType.ALLOW)));
        }
        for (int from = 0; from < bindings.size(); from += 10_000) {
            admin.createAcls(bindings.subList(from, Math.min(bindings.size(), from + 10_000))).all().get(5, TimeUnit.MINUTES);
        }
        System.out.printf("standard: %d ACLs created%n", bindings.size());
    }

    // ------------------------------------------------------------------------------------------
    // the tools

    static Run produce(Subject subject, int size, Workload workload, int round, int records) throws Exception {
        KafkaNode node = subject.node();
        Path config = node.clientConfigFile(USER);
        List<String> args = List.of("--topic", TOPIC, "--num-records", String.valueOf(records), "--record-size",
                String.valueOf(workload.recordBytes()), "--throughput", "-1", "--producer.config", config.toString(), "--producer-props",
                "bootstrap.servers=" + node.bootstrapServers(), "acks=" + workload.acks(), "batch.size=" + BATCH_BYTES, "linger.ms=0");
        double requestsBefore = produceRequests(subject.jmx());
        long cpuBefore = cpuMillis(node.pid());
        List<Thread> threads = new ArrayList<>();
        ToolRun[] runs = new ToolRun[workload.producers()];
        for (int p = 0; p < workload.producers(); p++) {
            int slot = p;
            Thread t = new Thread(() -> runs[slot] = node.runJava("org.apache.kafka.tools.ProducerPerformance", toolJvm(), args, TOOL_TIMEOUT));
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        long cpuAfter = cpuMillis(node.pid());
        double requestsAfter = produceRequests(subject.jmx());
        double recordsPerSec = 0;
        double mbPerSec = 0;
        double p99 = 0;
        for (ToolRun run : runs) {
            if (run == null || run.exitCode() != 0) {
                throw new IllegalStateException("ProducerPerformance against " + subject.name() + " failed: " + run);
            }
            java.util.regex.MatchResult m = lastMatch(PRODUCER_SUMMARY, run.stdout());
            recordsPerSec += Double.parseDouble(m.group(2));
            mbPerSec += Double.parseDouble(m.group(3));
            p99 = Math.max(p99, Double.parseDouble(m.group(8)));
        }
        return new Run(size, workload.name(), subject.name(), round, recordsPerSec, mbPerSec, p99, cpuAfter - cpuBefore,
                requestsAfter - requestsBefore);
    }

    /** Reads {@code records} records from the start of the topic in a new group; returns records/s and MB/s. */
    private static double[] consume(Subject subject, int round, int records) {
        KafkaNode node = subject.node();
        List<String> args = List.of("--bootstrap-server", node.bootstrapServers(), "--topic", TOPIC, "--messages",
                String.valueOf(records), "--group", GROUP_PREFIX + subject.name() + "-" + round, "--consumer.config",
                node.clientConfigFile(USER).toString(), "--timeout", "60000");
        ToolRun run = node.runJava("org.apache.kafka.tools.ConsumerPerformance", toolJvm(), args, TOOL_TIMEOUT);
        if (run.exitCode() != 0) {
            throw new IllegalStateException("ConsumerPerformance against " + subject.name() + " failed: " + run);
        }
        // The header start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ... and one line.
        List<String> lines = run.stdout().lines().filter(l -> l.split(",").length >= 6).collect(Collectors.toList());
        String[] values = lines.get(lines.size() - 1).split(",");
        return new double[] {Double.parseDouble(values[5].trim()), Double.parseDouble(values[3].trim())};
    }

    /** The tools run with the JIT they ship with (the harness's other tool runs stop at C1 to start fast). */
    private static List<String> toolJvm() {
        return List.of("-Xmx512m");
    }

    private static java.util.regex.MatchResult lastMatch(Pattern pattern, String text) {
        java.util.regex.MatchResult last = null;
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            last = m.toMatchResult();
        }
        if (last == null) {
            throw new IllegalStateException("no summary line in the tool's output:\n" + text);
        }
        return last;
    }

    /** The node's Produce requests so far: the sum of its RequestsPerSec counts over the request versions. */
    static double produceRequests(Jmx jmx) throws Exception {
        double sum = 0;
        for (Map<String, Object> attributes : jmx.read("kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,*",
                "Count").values()) {
            sum += ((Number) attributes.get("Count")).doubleValue();
        }
        return sum;
    }

    /** User + system CPU time of a process, from {@code /proc/<pid>/stat} (clock ticks of 10 ms). */
    static long cpuMillis(long pid) {
        try {
            String stat = Files.readString(Paths.get("/proc", String.valueOf(pid), "stat"), StandardCharsets.US_ASCII);
            // Fields after the command name (which may hold spaces, so split after its closing parenthesis):
            // state is field 3, utime field 14, stime field 15.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
            return ticks * 10;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the CPU time of process " + pid, e);
        }
    }

    // ------------------------------------------------------------------------------------------
    // the profiles

    /** Starts a CPU profile of each node; returns each node's CPU time and Produce requests at that moment. */
    private static List<double[]> startProfiles(List<Subject> subjects, String event) throws Exception {
        List<double[]> start = new ArrayList<>();
        for (Subject subject : subjects) {
            NodeProfiler.start(subject.node().pid(), event);
            start.add(new double[] {cpuMillis(subject.node().pid()), produceRequests(subject.jmx())});
        }
        return start;
    }

    /**
     * Writes each node's profile of the counted rounds to {@code profile-<size>-<node>.collapsed} and one line of
     * {@code profiles.tsv}: the node's CPU time and Produce requests over the profile, which turn its samples into CPU
     * time per request ({@code benchmarks/broker_profile.py}).
     */
    private static void stopProfiles(List<Subject> subjects, List<double[]> start, int size, Path out) throws Exception {
        Path tsv = out.resolve("profiles.tsv");
        if (!Files.exists(tsv)) {
            Files.writeString(tsv, "size\tnode\tcpu_ms\tproduce_requests\tinterval_ns\tprofile\n", StandardCharsets.UTF_8);
        }
        for (int i = 0; i < subjects.size(); i++) {
            Subject subject = subjects.get(i);
            Path collapsed = out.resolve("profile-" + size + "-" + subject.name() + ".collapsed");
            double cpu = cpuMillis(subject.node().pid()) - start.get(i)[0];
            double requests = produceRequests(subject.jmx()) - start.get(i)[1];
            NodeProfiler.stop(subject.node().pid(), collapsed);
            Files.writeString(tsv, String.format(Locale.ROOT, "%d\t%s\t%.0f\t%.0f\t%d\t%s%n", size, subject.name(), cpu, requests,
                    NodeProfiler.INTERVAL_NANOS, collapsed.getFileName()), StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        }
    }

    // ------------------------------------------------------------------------------------------
    // the report

    private static final Pattern PRODUCE_LINE = Pattern.compile(
            "size (\\d+) (w\\d) round (\\d+) (\\S+)\\s+([\\d.]+) records/s\\s+([\\d.]+) MB/s p99\\s+([\\d.]+) ms, ([\\d.]+) ms CPU");
    private static final Pattern CONSUME_LINE = Pattern.compile(
            "size (\\d+) consume round (\\d+) (\\S+)\\s+([\\d.]+) records/s\\s+([\\d.]+) MB/s");

    /** The report of the runs that these logs (this program's output) print, in the order of their sizes. */
    static String reportFromLogs(String logs, String kafkaVersion) throws IOException {
        List<Run> all = new ArrayList<>();
        for (String log : logs.split(",")) {
            for (String line : Files.readAllLines(Paths.get(log), StandardCharsets.UTF_8)) {
                Matcher p = PRODUCE_LINE.matcher(line);
                Matcher c = CONSUME_LINE.matcher(line);
                if (p.find()) {
                    // The log has the CPU time per 1000 requests only: kept as the CPU time of 1000 requests.
                    all.add(new Run(Integer.parseInt(p.group(1)), p.group(2), p.group(4), Integer.parseInt(p.group(3)),
                            Double.parseDouble(p.group(5)), Double.parseDouble(p.group(6)), Double.parseDouble(p.group(7)),
                            Double.parseDouble(p.group(8)), 1000));
                } else if (c.find()) {
                    all.add(new Run(Integer.parseInt(c.group(1)), "consume", c.group(3), Integer.parseInt(c.group(2)),
                            Double.parseDouble(c.group(4)), Double.parseDouble(c.group(5)), Double.NaN, Double.NaN, 0));
                }
            }
        }
        List<Integer> sizes = all.stream().map(Run::size).distinct().sorted().collect(Collectors.toList());
        List<Workload> workloads = WORKLOADS.stream().filter(w -> all.stream().anyMatch(r -> r.workload().equals(w.name())))
                .collect(Collectors.toList());
        return report(all, workloads, sizes, kafkaVersion);
    }

    static String report(List<Run> all, List<Workload> workloads, List<Integer> sizes, String kafkaVersion) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Kafka %s, rounds after the warm-up: %d; medians, [min-max], and the ratio of the medians to"
                + " no authorizer%n%n", kafkaVersion, all.stream().mapToInt(Run::round).max().orElse(0)));
        md.append("| data | workload | node | records/s | MB/s | p99 ms | broker CPU ms / 1000 Produce requests |\n");
        md.append("|---|---|---|---|---|---|---|\n");
        for (int size : sizes) {
            List<String> kinds = new ArrayList<>();
            workloads.forEach(w -> kinds.add(w.name()));
            kinds.add("consume");
            for (String kind : kinds) {
                if (all.stream().noneMatch(r -> r.size() == size && r.workload().equals(kind))) {
                    continue;
                }
                String label = kind.equals("consume") ? "consume, 1 consumer"
                        : workloads.stream().filter(w -> w.name().equals(kind)).findFirst().orElseThrow().describe();
                Stats noneRecords = stats(all, size, kind, "none", Run::recordsPerSec);
                Stats noneCpu = stats(all, size, kind, "none", Run::cpuMsPerThousandRequests);
                for (String subject : subjectsIn(all)) {
                    Stats records = stats(all, size, kind, subject, Run::recordsPerSec);
                    Stats mb = stats(all, size, kind, subject, Run::mbPerSec);
                    Stats p99 = stats(all, size, kind, subject, Run::p99Ms);
                    Stats cpu = stats(all, size, kind, subject, Run::cpuMsPerThousandRequests);
                    md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", size == 0 ? "0" : size / 1000 + "k", label,
                            subject, records.format("%.0f", noneRecords), mb.format("%.2f", null), p99.format("%.0f", null),
                            cpu.format("%.1f", noneCpu)));
                }
            }
        }
        md.append("\nPaired per round: each counted round's records/s against no authorizer's in the same round, median [min-max]\n\n");
        List<String> others = subjectsIn(all).stream().filter(subject -> !subject.equals("none")).collect(Collectors.toList());
        md.append("| data | workload |");
        others.forEach(subject -> md.append(' ').append(subject).append(" / none |"));
        md.append("\n|---|---|").append("---|".repeat(others.size())).append('\n');
        for (int size : sizes) {
            for (Workload workload : workloads) {
                if (all.stream().anyMatch(r -> r.size() == size && r.workload().equals(workload.name()))) {
                    md.append(String.format(Locale.ROOT, "| %s | %s |", size == 0 ? "0" : size / 1000 + "k", workload.describe()));
                    for (String subject : others) {
                        md.append(' ').append(paired(all, size, workload.name(), subject).format("%.3f", null)).append(" |");
                    }
                    md.append('\n');
                }
            }
        }
        return md.toString();
    }

    /** The nodes the runs measured, in the order of {@link #SUBJECTS}. */
    private static List<String> subjectsIn(List<Run> all) {
        return SUBJECTS.stream().filter(subject -> all.stream().anyMatch(r -> r.subject().equals(subject))).collect(Collectors.toList());
    }

    /** The ratio of a node's records/s to no authorizer's, round by round. */
    private static Stats paired(List<Run> all, int size, String kind, String subject) {
        Map<Integer, Double> none = new LinkedHashMap<>();
        counted(all, size, kind, "none").forEach(r -> none.put(r.round(), r.recordsPerSec()));
        double[] ratios = counted(all, size, kind, subject).filter(r -> none.containsKey(r.round()))
                .mapToDouble(r -> r.recordsPerSec() / none.get(r.round())).sorted().toArray();
        return new Stats(ratios);
    }

    private static Stats stats(List<Run> all, int size, String kind, String subject, java.util.function.ToDoubleFunction<Run> value) {
        double[] values = counted(all, size, kind, subject).mapToDouble(value).filter(v -> !Double.isNaN(v)).sorted().toArray();
        return new Stats(values);
    }

    /** The runs of one node, size and workload in the counted rounds (the warm-up round 0 left out). */
    private static java.util.stream.Stream<Run> counted(List<Run> all, int size, String kind, String subject) {
        return all.stream().filter(r -> r.size() == size && r.workload().equals(kind) && r.subject().equals(subject) && r.round() > 0);
    }

    /** Median and range of one measure over the counted rounds. */
    record Stats(double[] sorted) {
        double median() {
            int n = sorted.length;
            if (n == 0) {
                return Double.NaN;
            }
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        String format(String number, Stats anchor) {
            if (sorted.length == 0) {
                return "-";
            }
            String text = String.format(Locale.ROOT, number + " [" + number + "-" + number + "]", median(), sorted[0], sorted[sorted.length - 1]);
            if (anchor != null && anchor.sorted.length > 0) {
                text += String.format(Locale.ROOT, " (%.1f %%)", 100 * median() / anchor.median());
            }
            return text;
        }
    }
}
