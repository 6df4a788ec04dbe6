package org.devlive.grantforge.kafka.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The soak: the 1 + 3 cluster in server mode against the test server, behind a {@link FaultProxy}, driven by
 * {@link SoakClients} while the policies change every few seconds and faults come one after the other: the network's
 * (latency, resets, answers cut short, 503s, stalls), the server stopped (and a broker restarted from its disk cache
 * meanwhile), a snapshot too large to be accepted, a snapshot with a bad signature. Afterwards {@link SoakOracle}
 * judges every client outcome, and the nodes' resources sampled through the run are compared between the middle and
 * the end. {@link SoakReport} writes what a person reads.
 */
final class Soak {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The agents' read timeout: a stall of the proxy lasts longer. */
    static final long READ_TIMEOUT_MS = 3_000;
    /** The agents' snapshot bound; the too-large snapshot is twice it. */
    static final long SNAPSHOT_MAX_BYTES = 4L << 20;
    /** A policy edit and a change of membership in turn, each this long after the other. */
    static final Duration CHURN_EVERY = Duration.ofSeconds(4);
    /**
     * The agents' revalidation interval: shorter than a policy version lasts, so that a membership changed at the same
     * version arrives by revalidation, not by the next version.
     */
    static final long REVALIDATE_MS = 2_000;
    /**
     * Access events per request to the server: small, so that the spool of an outage is resent in several batches of
     * several files, and a spool that loses or deletes one of them shows in the audit's reconciliation.
     */
    static final int AUDIT_BATCH_SIZE = 16;
    /** The role that may write {@link SoakClients#ROLE}. */
    static final String WRITERS = "soak-writers";

    /** A step of the fault schedule: what is wrong, for how long. */
    enum Step {
        NONE("calm"), LATENCY("latency"), RESET("resets"), CUT("answers cut"), STATUS_503("503s"), STALL("stalls"),
        SERVER_STOPPED_BROKER_RESTARTED("server down, broker-2 restarted"), SNAPSHOT_TOO_LARGE("snapshot too large"),
        BAD_SIGNATURE("bad signature");

        /** How the plot names it. */
        final String label;

        Step(String label) {
            this.label = label;
        }
    }

    /** The schedule, repeated until the run's end: faults with calm steps between. */
    static final List<Step> SCHEDULE = List.of(Step.NONE, Step.LATENCY, Step.RESET, Step.NONE, Step.CUT, Step.STATUS_503,
        Step.NONE, Step.STALL, Step.NONE, Step.SERVER_STOPPED_BROKER_RESTARTED, Step.NONE, Step.SNAPSHOT_TOO_LARGE, Step.NONE,
        Step.BAD_SIGNATURE);
    /**
     * The smoke's schedule (a run shorter than {@link #FULL_SCHEDULE_FROM}): every step once, the faults back to back, a
     * calm start twice a step long (the first policy edit reaches every broker before the faults: each kind of answer
     * is met however few downloads the faults let through), a calm step before the restart's and after it (the quota's
     * spans begin after a calm one).
     */
    static final List<Step> SMOKE_SCHEDULE = List.of(Step.NONE, Step.NONE, Step.LATENCY, Step.RESET, Step.CUT, Step.STATUS_503,
        Step.STALL, Step.NONE, Step.SERVER_STOPPED_BROKER_RESTARTED, Step.NONE, Step.SNAPSHOT_TOO_LARGE, Step.BAD_SIGNATURE);
    /** The shortest run with the full schedule, each step at least {@link #MIN_STEP} long. */
    static final Duration FULL_SCHEDULE_FROM = Duration.ofMinutes(3);
    static final Duration MIN_STEP = Duration.ofSeconds(5);

    /** The agent's quota callback, on every node of the cluster. */
    static final String QUOTA_CALLBACK = "org.devlive.grantforge.kafka.agent.GrantForgeClientQuotaCallback";

    /**
     * One of quinn's producers: its acknowledged bytes over whole seconds {@code [fromSecond, toSecond)} (epoch seconds)
     * between two broker restarts, on the cluster and on the anchor.
     */
    record QuotaSpan(SoakClients.Limited client, long fromSecond, long toSecond, long clusterBytes, long anchorBytes) {
        long seconds() {
            return toSecond - fromSecond;
        }
    }

    /** A moment of the run's timeline. */
    record Event(long atMs, String what) {
    }

    /**
     * One node's audit at the end: the accesses its agent handed to the audit (over every life of the node: a restart's
     * log line says what the life before counted), the accesses the server received in its events, the agent's drops,
     * and what it resent that the server kept once.
     */
    record AuditAccount(String node, long accesses, long received, long dropped, long spooledBytes, Map<String, UserAccount> users) {
        boolean reconciled() {
            return received + dropped == accesses && spooledBytes == 0 && users.values().stream().allMatch(UserAccount::reconciled);
        }
    }

    /** One user's audit on one node: the agent's account ({@code AuditByUser}) and what the server received. */
    record UserAccount(long accesses, long dropped, long received) {
        boolean reconciled() {
            return received + dropped == accesses;
        }

        UserAccount plus(UserAccount other) {
            return new UserAccount(accesses + other.accesses, dropped + other.dropped, received + other.received);
        }
    }

    /** A sample of one node's resources. */
    record Sample(long atMs, String node, long rssBytes, long threads, long fds, long spoolBytes, long cacheEntries,
                  long snapshotVersion) {
    }

    final String kafkaVersion;
    final Duration length;
    final Duration stepLength;
    final List<Step> schedule;
    final Path out;
    final SoakOracle oracle = new SoakOracle();
    final List<SoakOracle.Outcome> outcomes = new CopyOnWriteArrayList<>();
    final List<Event> timeline = new CopyOnWriteArrayList<>();
    final List<Sample> samples = new CopyOnWriteArrayList<>();
    /** The machine's load (the kernel's 1-minute average) at each sampling. */
    final List<Double> machineLoad = new CopyOnWriteArrayList<>();
    final Map<String, List<Long>> launches = new ConcurrentHashMap<>();
    final Map<String, Long> stepsRun = new LinkedHashMap<>();
    Map<FaultProxy.Fault, Long> proxyFaults = Map.of();
    Map<String, Long> unavailable = Map.of();
    final List<QuotaSpan> quotaSpans = new CopyOnWriteArrayList<>();
    /** quinn's acknowledged bytes by client id, then by second of the run (epoch seconds): on the cluster, on the anchor. */
    final Map<String, TreeMap<Long, long[]>> limitedBySecond = new TreeMap<>();
    final List<AuditAccount> audit = new CopyOnWriteArrayList<>();
    /** Each broker's audit in the audit topic and each node's sinks' accounts, at the end ({@link SoakAuditTopic}). */
    final List<SoakAuditTopic.Account> auditTopic = new CopyOnWriteArrayList<>();
    /**
     * The accesses the server received from the brokers, allowed and refused, by principal, operation and resource as the
     * oracle names them ({@code bob WRITE soak-churned}; a resource other than a topic with its type:
     * {@code transactional_id:dave-soak}).
     */
    final Map<String, long[]> auditedByAccess = new TreeMap<>();
    /** The hybrid broker's decisions at the end ({@link SoakHybrid}). */
    SoakHybrid.Decided hybrid;
    /** Events the agents sent twice (an answer cut short after the server took them) that the server kept once. */
    long resentKeptOnce;
    long startedMs;
    long endedMs;

    private Path policiesFile;
    private TestServer server;
    private FaultProxy proxy;
    private KafkaCluster cluster;
    private KafkaNode anchor;
    private SoakClients clients;
    private final Map<String, Jmx> jmx = new ConcurrentHashMap<>();
    private boolean bobWrites = true;
    /** Whether frank holds the role {@value #WRITERS}, which the soak grants and ends at the same policy version. */
    private boolean frankHoldsRole = true;
    private long churns;
    private final List<long[]> timedPeriods = new ArrayList<>();
    private long lastVersion;

    Soak(String kafkaVersion, Duration length, Path out) {
        this.kafkaVersion = kafkaVersion;
        this.length = length;
        this.schedule = length.compareTo(FULL_SCHEDULE_FROM) < 0 ? SMOKE_SCHEDULE : SCHEDULE;
        this.stepLength = Duration.ofMillis(Math.max(MIN_STEP.toMillis(), length.toMillis() / (schedule.size() + 1)));
        this.out = out;
    }

    /** Runs the soak; the checks are read from the fields afterwards ({@link SoakReport}). */
    void run() throws Exception {
        Files.createDirectories(out);
        // a run of its own: the server's state, events and the agents' caches of a run before would be taken as this one's
        Path work = out.resolve("work");
        ItPaths.deleteRecursively(work);
        Files.createDirectories(work);
        policiesFile = work.resolve("policies.json");
        startedMs = System.currentTimeMillis();
        writePolicies();
        server = TestServer.start(policiesFile, work.resolve("server"), 1);
        registerServedVersion(startedMs);
        proxy = FaultProxy.start(READ_TIMEOUT_MS + 2_000);
        proxy.target(server.url());
        try {
            startCluster(work);
            createTopics();
            try (SoakClients started = new SoakClients(cluster, anchor, outcomes::add)) {
                clients = started;
                clients.start();
                drive();
                clients.close();
                unavailable = new LinkedHashMap<>();
                clients.unavailable().forEach((who, n) -> unavailable.put(who, n.get()));
                quotaRates();
            }
            proxyFaults = proxy.injected();
            proxy.fault(FaultProxy.Fault.NONE);
            endedMs = System.currentTimeMillis();
            reconcileAudit();
            // the brokers decide the clients' requests (the controller only what brokers forward, none of theirs)
            for (KafkaNode node : cluster.brokers()) {
                oracle.nodeLog(name(node), node.logLines(), launches.get(name(node)));
            }
        } finally {
            if (anchor != null) {
                anchor.close();
            }
            if (cluster != null) {
                cluster.close();
            }
            proxy.close();
            server.close();
        }
    }

    private void startCluster(Path work) throws IOException {
        Path auditProducer = AuditTopicSink.writeProducerConfig(work);
        // The anchor of quinn's rate: a node of the same release with Kafka's own quota callback, no authorizer.
        CompletableFuture<KafkaNode> anchorStarted = CompletableFuture.supplyAsync(
            () -> KafkaNode.builder().kafkaVersion(kafkaVersion).name("soak-anchor").noAuthorizer().maxHeap("256m").start());
        long launched = System.currentTimeMillis();
        cluster = KafkaCluster.builder().kafkaVersion(kafkaVersion).name("soak").eachNode((name, node) -> {
            Jmx port = Jmx.onFreePort();
            jmx.put(name, port);
            port.jvmArgs().forEach(node::jvmArg);
            server.agentOf(node, work.resolve("cache-" + name), name)
                .property("grantforge.server.url", proxy.url())
                .property("grantforge.refresh.interval.ms", "5000")
                .property("grantforge.read.timeout.ms", String.valueOf(READ_TIMEOUT_MS))
                .property("grantforge.download.jitter.ms", "500")
                .property("grantforge.revalidate.interval.ms", String.valueOf(REVALIDATE_MS))
                .property("grantforge.audit.batch.size", String.valueOf(AUDIT_BATCH_SIZE))
                .property("grantforge.snapshot.max.bytes", String.valueOf(SNAPSHOT_MAX_BYTES))
                .property("client.quota.callback.class", QUOTA_CALLBACK);
            if (name.equals(KafkaCluster.brokerName(SoakHybrid.BROKER))) {
                SoakHybrid.configure(node, kafkaVersion);
            }
            if (!name.equals(KafkaCluster.controllerName())) {
                // the controller has no client listener of its own to write the topic through: the server's sink alone
                SoakAuditTopic.configure(node, auditProducer);
            }
        }).start();
        anchor = anchorStarted.join();
        for (KafkaNode node : cluster.nodes()) {
            launches.computeIfAbsent(name(node), n -> new CopyOnWriteArrayList<>()).add(launched);
        }
        event("cluster up");
    }

    private String name(KafkaNode node) {
        return node == cluster.controller() ? KafkaCluster.controllerName()
            : KafkaCluster.brokerName(cluster.brokers().indexOf(node) + 1);
    }

    private void createTopics() throws Exception {
        try (Admin admin = cluster.admin(KafkaNode.SUPER_USER); Admin anchorAdmin = anchor.admin(KafkaNode.SUPER_USER)) {
            List<NewTopic> topics = new ArrayList<>();
            for (String topic : List.of(SoakClients.STEADY, SoakClients.CHURNED, SoakClients.TIMED, SoakClients.ROLE)) {
                topics.add(new NewTopic(topic, SoakHybrid.replicas(topic)));
            }
            topics.add(quotaTopic((short) 3));
            admin.createTopics(topics).all().get(2, TimeUnit.MINUTES);
            anchorAdmin.createTopics(List.of(quotaTopic((short) 1))).all().get(2, TimeUnit.MINUTES);
            // quinn's quotas, as kafka-configs sets them: on the cluster, the user's and the sub-quota reserved out of it;
            // on the anchor, the same two limits in Kafka's own terms (SoakClients.LIMITED)
            ClientQuotaAlteration reserved = produceQuota(Map.of(ClientQuotaEntity.USER, "quinn", ClientQuotaEntity.CLIENT_ID,
                "quinn-reserved"), SoakClients.RESERVED_BYTES_PER_S);
            admin.alterClientQuotas(List.of(produceQuota(Map.of(ClientQuotaEntity.USER, "quinn"), SoakClients.QUINN_BYTES_PER_S),
                reserved)).all().get(1, TimeUnit.MINUTES);
            anchorAdmin.alterClientQuotas(List.of(produceQuota(Map.of(ClientQuotaEntity.USER, "quinn"),
                SoakClients.QUINN_BYTES_PER_S - SoakClients.RESERVED_BYTES_PER_S), reserved)).all().get(1, TimeUnit.MINUTES);
        }
    }

    /**
     * quinn's topic, in segments of 256 MiB: the harness's nodes roll every 1 MiB (small test disks), and quinn writes
     * 64 KiB/s, so each broker would open a segment file every 16 s for the hour, which the descriptor bound is there
     * to catch in the agent.
     */
    private static NewTopic quotaTopic(short replicas) {
        return new NewTopic(SoakClients.QUOTA, 1, replicas).configs(Map.of("segment.bytes", String.valueOf(256 << 20)));
    }

    private static ClientQuotaAlteration produceQuota(Map<String, String> entity, long bytesPerS) {
        return new ClientQuotaAlteration(new ClientQuotaEntity(entity),
            List.of(new ClientQuotaAlteration.Op("producer_byte_rate", (double) bytesPerS)));
    }

    /**
     * quinn's bytes in the spans between the restart steps (a partition leader away, and a new leader's fresh quota
     * window), from the end of the first step (the quota's first window lets a burst through).
     */
    private void quotaRates() {
        for (SoakClients.Limited limited : SoakClients.LIMITED) {
            TreeMap<Long, long[]> bySecond = limitedBySecond.computeIfAbsent(limited.clientId(), k -> new TreeMap<>());
            clients.limitedOnCluster.get(limited.clientId())
                .forEach((second, bytes) -> bySecond.computeIfAbsent(second, k -> new long[2])[0] = bytes.get());
            clients.limitedOnAnchor.get(limited.clientId())
                .forEach((second, bytes) -> bySecond.computeIfAbsent(second, k -> new long[2])[1] = bytes.get());
        }
        long from = -1;
        for (Event event : timeline) {
            if (event.what().equals("begin " + Step.SERVER_STOPPED_BROKER_RESTARTED) && from >= 0) {
                quotaSpan(from, event.atMs() / 1000);
                from = -1;
            } else if (event.what().startsWith("end ") && from < 0) {
                from = event.atMs() / 1000 + 1;
            }
        }
        if (from >= 0) {
            quotaSpan(from, timeline.get(timeline.size() - 1).atMs() / 1000);
        }
    }

    private void quotaSpan(long fromSecond, long toSecond) {
        if (toSecond <= fromSecond) {
            return;
        }
        for (SoakClients.Limited limited : SoakClients.LIMITED) {
            long[] bytes = new long[2];
            limitedBySecond.get(limited.clientId()).subMap(fromSecond, toSecond).values().forEach(b -> {
                bytes[0] += b[0];
                bytes[1] += b[1];
            });
            quotaSpans.add(new QuotaSpan(limited, fromSecond, toSecond, bytes[0], bytes[1]));
        }
    }

    /**
     * The schedule, the churn and the sampling, until the run's length is over and every step ran once (a broker's
     * restart may last longer than its step: the steps after it still run).
     */
    private void drive() throws Exception {
        long end = System.currentTimeMillis() + length.toMillis();
        // the first version's grants (bob's write among them) hold for a churn's interval before the first edit
        long nextChurn = System.currentTimeMillis() + CHURN_EVERY.toMillis();
        long nextSample = 0;
        int step = 0;
        while (System.currentTimeMillis() < end || step < schedule.size()) {
            Step now = schedule.get(step++ % schedule.size());
            stepsRun.merge(now.name(), 1L, Long::sum);
            long stepEnd = step <= schedule.size() ? System.currentTimeMillis() + stepLength.toMillis()
                : Math.min(end, System.currentTimeMillis() + stepLength.toMillis());
            begin(now);
            while (System.currentTimeMillis() < stepEnd) {
                long t = System.currentTimeMillis();
                if (t >= nextChurn) {
                    churn();
                    nextChurn = t + CHURN_EVERY.toMillis();
                }
                if (t >= nextSample) {
                    sample();
                    nextSample = t + 2_000;
                }
                Thread.sleep(100);
            }
            finish(now);
        }
    }

    private void begin(Step step) throws Exception {
        event("begin " + step);
        switch (step) {
            case NONE -> proxy.fault(FaultProxy.Fault.NONE);
            case LATENCY -> proxy.fault(FaultProxy.Fault.LATENCY);
            case RESET -> proxy.fault(FaultProxy.Fault.RESET);
            case CUT -> proxy.fault(FaultProxy.Fault.CUT);
            case STATUS_503 -> proxy.fault(FaultProxy.Fault.STATUS_503);
            case STALL -> proxy.fault(FaultProxy.Fault.STALL);
            case SNAPSHOT_TOO_LARGE -> server.fault("{\"mode\":\"huge\",\"endpoints\":[\"policies\"],\"hugeBytes\":"
                + 2 * SNAPSHOT_MAX_BYTES + "}");
            case BAD_SIGNATURE -> server.fault("{\"mode\":\"wrong-signature\"}");
            case SERVER_STOPPED_BROKER_RESTARTED -> stopServerAndRestartABroker();
        }
    }

    private void finish(Step step) throws Exception {
        switch (step) {
            case SNAPSHOT_TOO_LARGE, BAD_SIGNATURE -> server.fault("{\"mode\":\"none\"}");
            case SERVER_STOPPED_BROKER_RESTARTED -> startServer();
            default -> { }
        }
        proxy.fault(FaultProxy.Fault.NONE);
        event("end " + step);
    }

    private void stopServerAndRestartABroker() {
        server.close();
        server = null;
        proxy.target(null);
        event("server stopped");
        KafkaNode broker = cluster.broker(2);
        broker.stop();
        long launched = System.currentTimeMillis();
        launches.get(KafkaCluster.brokerName(2)).add(launched);
        event("broker-2 restarting");
        broker.start();
        event("broker-2 back (from its disk cache)");
    }

    private void startServer() throws Exception {
        long at = System.currentTimeMillis();
        // the file holds the memberships changed since it was written, so the server serves on at the same version
        writePolicies();
        server = TestServer.start(policiesFile, out.resolve("work").resolve("server"), 1);
        proxy.target(server.url());
        registerServedVersion(at);
        event("server started");
    }

    // ------------------------------------------------------------------------------------------
    // the policies

    /** A policy edit and a change of membership in turn. */
    private void churn() throws Exception {
        if (server == null) {
            return;
        }
        if (churns++ % 2 == 0) {
            editPolicies();
        } else {
            changeMembership();
        }
    }

    /** Grants or revokes bob's write on the churned topic, and every fourth change adds a period to the timed one. */
    private void editPolicies() throws Exception {
        bobWrites = !bobWrites;
        long now = System.currentTimeMillis();
        if (timedPeriods.isEmpty() || timedPeriods.get(timedPeriods.size() - 1)[1] < now) {
            timedPeriods.add(new long[] {now + 3_000, now + 9_000});
        }
        long before = System.currentTimeMillis();
        writePolicies();
        com.fasterxml.jackson.databind.JsonNode served = awaitNewVersion(lastVersion);
        long version = served.get("policyVersion").asLong();
        if (version > lastVersion) {
            oracle.published(new SoakOracle.Version(version, served.get("etag").asText(), before, rules()));
            lastVersion = version;
            event("policy version " + version + (bobWrites ? ": bob writes " : ": bob may not write ") + SoakClients.CHURNED);
        }
    }

    /**
     * Grants or ends frank's role without a new policy version, as GrantForge does when a role assignment is made or
     * expires: the server serves another body of the version in force.
     */
    private void changeMembership() throws Exception {
        frankHoldsRole = !frankHoldsRole;
        long before = System.currentTimeMillis();
        server.policiesAtSameVersion(policiesJson());
        com.fasterxml.jackson.databind.JsonNode served = JSON.readTree(server.state());
        long version = served.get("policyVersion").asLong();
        if (version != lastVersion) {
            throw new IllegalStateException("the test server moved the policy version on a change of membership: " + served);
        }
        oracle.published(new SoakOracle.Version(version, served.get("etag").asText(), before, rules()));
        event("policy version " + version + " kept: frank " + (frankHoldsRole ? "holds " : "no longer holds ") + WRITERS);
    }

    /** After the server's start: the body it serves (a new version when it read a changed file). */
    private void registerServedVersion(long at) throws Exception {
        com.fasterxml.jackson.databind.JsonNode served = JSON.readTree(server.state());
        long version = served.get("policyVersion").asLong();
        String etag = served.get("etag").asText();
        if (version != lastVersion || !oracle.knows(etag)) {
            oracle.published(new SoakOracle.Version(version, etag, at, rules()));
            lastVersion = version;
            event("policy version " + version + " (served at start)");
        }
    }

    /** The server's state once it serves a version after {@code previous}. */
    private com.fasterxml.jackson.databind.JsonNode awaitNewVersion(long previous) throws Exception {
        long deadline = System.currentTimeMillis() + 3_000;
        while (System.currentTimeMillis() < deadline) {
            com.fasterxml.jackson.databind.JsonNode state = JSON.readTree(server.state());
            if (state.get("policyVersion").asLong() > previous) {
                return state;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("the test server did not take the changed policies file within 3 s");
    }

    /** The rights the policies file grants now, as the oracle reads them. */
    List<SoakOracle.Rule> rules() {
        List<SoakOracle.Rule> rules = new ArrayList<>(List.of(
            SoakOracle.Rule.always("alice", "WRITE", SoakClients.STEADY),
            SoakOracle.Rule.always("carol", "READ", SoakClients.STEADY),
            SoakOracle.Rule.always("dave", "WRITE", SoakClients.STEADY),
            SoakOracle.Rule.always("dave", "WRITE", SoakClients.TRANSACTIONAL_ID),
            SoakOracle.Rule.always("erin", "DESCRIBE", SoakClients.STEADY)));
        if (bobWrites) {
            rules.add(SoakOracle.Rule.always("bob", "WRITE", SoakClients.CHURNED));
        }
        if (frankHoldsRole) {
            rules.add(SoakOracle.Rule.always("frank", "WRITE", SoakClients.ROLE));
        }
        for (long[] period : timedPeriods) {
            rules.add(new SoakOracle.Rule("bob", "WRITE", SoakClients.TIMED, period[0], period[1]));
        }
        return rules;
    }

    private void writePolicies() throws IOException {
        Path tmp = policiesFile.resolveSibling("policies.json.tmp");
        Files.writeString(tmp, policiesJson(), StandardCharsets.UTF_8);
        Files.move(tmp, policiesFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** The policies file as the soak's state says it now. */
    private String policiesJson() throws IOException {
        ObjectNode file = JSON.createObjectNode();
        file.put("service", "kafka-soak").put("serviceEnabled", true);
        ArrayNode policies = file.putArray("policies");
        policy(policies, "alice, dave and carol use the steady topic", "topic", SoakClients.STEADY, List.of(
            List.of("alice", "write"), List.of("dave", "write"), List.of("carol", "read"), List.of("erin", "describe")), null);
        policy(policies, "carol's group", "group", "carol-soak", List.of(List.of("carol", "read")), null);
        policy(policies, "quinn writes as fast as the quota lets it", "topic", SoakClients.QUOTA, List.of(List.of("quinn", "write")),
            null);
        policy(policies, "dave's transactions", "transactional_id", "dave-soak", List.of(List.of("dave", "write")), null);
        policy(policies, "bob sees his topics", "topic", "soak-churned", List.of(List.of("bob", "describe")), null);
        policy(policies, "bob sees the timed topic", "topic", SoakClients.TIMED, List.of(List.of("bob", "describe")), null);
        if (bobWrites) {
            policy(policies, "bob writes the churned topic", "topic", SoakClients.CHURNED, List.of(List.of("bob", "write")), null);
        }
        if (!timedPeriods.isEmpty()) {
            policy(policies, "bob writes the timed topic in its periods", "topic", SoakClients.TIMED,
                List.of(List.of("bob", "write")), timedPeriods);
        }
        policy(policies, "the audit's producer writes the audit topic", "topic", SoakAuditTopic.TOPIC, List.of(
            List.of(SoakAuditTopic.PRINCIPAL, "create"), List.of(SoakAuditTopic.PRINCIPAL, "describe"),
            List.of(SoakAuditTopic.PRINCIPAL, "write")), null);
        policy(policies, "frank sees the role's topic", "topic", SoakClients.ROLE, List.of(List.of("frank", "describe")), null);
        policy(policies, "the role's holders write its topic", "topic", SoakClients.ROLE, List.of(List.of(ROLE_GRANTEE + WRITERS,
            "write")), null);
        SoakHybrid.denyEveryoneElse(policies);
        ArrayNode holders = file.putObject("roles").putArray(WRITERS);
        if (frankHoldsRole) {
            holders.add("frank");
        }
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(file);
    }

    /** A grantee of {@link #policy} that names a role rather than a user. */
    private static final String ROLE_GRANTEE = "role:";

    private static void policy(ArrayNode policies, String name, String level, String value, List<List<String>> grants,
                               List<long[]> periods) {
        ObjectNode policy = policies.addObject();
        policy.put("id", String.valueOf(100 + policies.size())).put("name", name).put("type", "ACCESS")
            // above the denials of everyone else (SoakHybrid), so that every question of the soak is a policy's
            .put("priority", "OVERRIDE");
        ObjectNode document = policy.putObject("document");
        ObjectNode resource = document.putObject("resources").putObject(level);
        resource.putArray("values").add(value);
        resource.put("excludes", false).put("recursive", false);
        ArrayNode allow = document.putArray("allow");
        for (List<String> grant : grants) {
            ObjectNode item = allow.addObject();
            String grantee = grant.get(0);
            boolean role = grantee.startsWith(ROLE_GRANTEE);
            ArrayNode users = item.putArray("users");
            item.putArray("groups");
            ArrayNode roles = item.putArray("roles");
            (role ? roles : users).add(role ? grantee.substring(ROLE_GRANTEE.length()) : grantee);
            item.putArray("accessTypes").add(grant.get(1));
            item.putArray("conditions");
            item.putNull("maskType");
            item.putNull("maskValue");
            item.putNull("rowFilter");
        }
        for (String empty : List.of("allowExceptions", "deny", "denyExceptions")) {
            document.putArray(empty);
        }
        ArrayNode validity = document.putArray("validity");
        for (long[] period : periods == null ? Collections.<long[]>emptyList() : periods) {
            validity.addObject().put("from", Instant.ofEpochMilli(period[0]).toString())
                .put("until", Instant.ofEpochMilli(period[1]).toString());
        }
    }

    // ------------------------------------------------------------------------------------------
    // the audit

    private static final java.util.regex.Pattern CLOSED =
        java.util.regex.Pattern.compile("closed: (\\d+) accesses were handed to the audit since start, (\\d+) of them dropped$");
    /** The line per user that follows it; the name is quoted as Rust's Debug writes it. */
    private static final java.util.regex.Pattern CLOSED_USER =
        java.util.regex.Pattern.compile("closed: the audit of user \"((?:[^\"\\\\]|\\\\.)*)\": (\\d+) accesses, (\\d+) of them dropped$");

    /**
     * Once the clients stopped and the server is reachable: waits until every node's folded accesses and spool reached
     * the server (a fold window and a flush, with room), then takes each node's account.
     */
    private void reconcileAudit() throws Exception {
        long deadline = System.currentTimeMillis() + 90_000;
        List<AuditAccount> accounts;
        List<SoakAuditTopic.Account> inTopic;
        try (SoakAuditTopic topic = new SoakAuditTopic(cluster)) {
            do {
                Thread.sleep(2_000);
                accounts = auditAccounts();
                inTopic = topicAccounts(topic);
            } while (!(accounts.stream().allMatch(AuditAccount::reconciled) && SoakAuditTopic.reconciled(accounts, inTopic))
                && System.currentTimeMillis() < deadline);
        }
        audit.addAll(accounts);
        auditTopic.addAll(inTopic);
        for (com.fasterxml.jackson.databind.JsonNode event : JSON.readTree(server.events())) {
            String type = event.path("resourceType").asText();
            String resource = (type.equals("topic") ? "" : type + ":") + event.path("resource").asText();
            String key = event.path("user").asText() + " " + event.path("accessType").asText().toUpperCase(java.util.Locale.ROOT)
                + " " + resource;
            auditedByAccess.computeIfAbsent(key, k -> new long[2])[event.path("outcome").asText().equals("ALLOWED") ? 0 : 1] +=
                event.path("count").asLong(1);
        }
        resentKeptOnce = server.duplicates();
        KafkaNode hybridNode = cluster.broker(SoakHybrid.BROKER);
        Map<String, Object> decided = jmx.get(name(hybridNode)).read("org.devlive.grantforge.kafka:type=Agent,*",
            "HybridAclDecisions", "DecisionsAllowed", "DecisionsDenied").values().iterator().next();
        hybrid = new SoakHybrid.Decided(((Number) decided.get("HybridAclDecisions")).longValue(),
            ((Number) decided.get("DecisionsAllowed")).longValue(), ((Number) decided.get("DecisionsDenied")).longValue(),
            hybridNode.logLines().stream().filter(l -> l.contains(SoakHybrid.LEFT_TO_ACLS)).limit(3).toList());
        event("audit taken: " + accounts);
    }

    private List<AuditAccount> auditAccounts() throws Exception {
        Map<String, Long> received = new LinkedHashMap<>();
        Map<String, Map<String, UserAccount>> users = new LinkedHashMap<>();
        for (com.fasterxml.jackson.databind.JsonNode event : JSON.readTree(server.events())) {
            String id = event.get("eventId").asText();
            for (KafkaNode node : cluster.nodes()) {
                if (id.startsWith(name(node) + "-")) {
                    long count = event.path("count").asLong(1);
                    received.merge(name(node), count, Long::sum);
                    users.computeIfAbsent(name(node), n -> new TreeMap<>()).merge(event.path("user").asText(),
                        new UserAccount(0, 0, count), UserAccount::plus);
                }
            }
        }
        List<AuditAccount> accounts = new ArrayList<>();
        for (KafkaNode node : cluster.nodes()) {
            String name = name(node);
            Map<String, UserAccount> byUser = users.computeIfAbsent(name, n -> new TreeMap<>());
            long accesses = 0;
            long dropped = 0;
            for (String line : node.logLines()) {
                java.util.regex.Matcher closed = CLOSED.matcher(line);
                if (closed.find()) {
                    accesses += Long.parseLong(closed.group(1));
                    dropped += Long.parseLong(closed.group(2));
                }
                java.util.regex.Matcher user = CLOSED_USER.matcher(line);
                if (user.find()) {
                    String unquoted = user.group(1).replace("\\\"", "\"").replace("\\\\", "\\");
                    byUser.merge(unquoted, new UserAccount(Long.parseLong(user.group(2)), Long.parseLong(user.group(3)), 0),
                        UserAccount::plus);
                }
            }
            Map<String, Object> now = jmx.get(name).read("org.devlive.grantforge.kafka:type=Agent,*", "AuditAccesses",
                "AuditDropped", "AuditSpooledBytes", "AuditByUser").values().iterator().next();
            accesses += ((Number) now.get("AuditAccesses")).longValue();
            dropped += ((Number) now.get("AuditDropped")).longValue();
            addUsers(byUser, (String) now.get("AuditByUser"));
            accounts.add(new AuditAccount(name, accesses, received.getOrDefault(name, 0L), dropped,
                ((Number) now.get("AuditSpooledBytes")).longValue(), byUser));
        }
        return accounts;
    }

    /** What the audit topic holds of each node, and each node's sinks' accounts over its lives. */
    private List<SoakAuditTopic.Account> topicAccounts(SoakAuditTopic topic) throws Exception {
        Map<String, Map<String, Long>> inTopic = topic.read();
        List<SoakAuditTopic.Account> accounts = new ArrayList<>();
        for (KafkaNode node : cluster.nodes()) {
            String name = name(node);
            Map<String, Map<String, SoakAuditTopic.SinkRow>> bySink = new TreeMap<>();
            SoakAuditTopic.addClosedSinkRows(bySink, node.logLines());
            SoakAuditTopic.addSinkRows(bySink, (String) jmx.get(name).read("org.devlive.grantforge.kafka:type=Agent,*",
                "AuditBySink").values().iterator().next().get("AuditBySink"));
            accounts.add(new SoakAuditTopic.Account(name, inTopic.getOrDefault(name, Map.of()), bySink));
        }
        return accounts;
    }

    /** Adds an agent's account per user ({@code AuditByUser}: user, accesses, dropped; a line each) to {@code byUser}. */
    private static void addUsers(Map<String, UserAccount> byUser, String table) {
        for (String line : table.split("\n")) {
            String[] parts = line.split("\t");
            if (parts.length < 3) {
                continue;
            }
            int n = parts.length;
            // a user's name may hold a tab: the two counts are the last fields
            String user = String.join("\t", java.util.Arrays.copyOf(parts, n - 2));
            byUser.merge(user, new UserAccount(Long.parseLong(parts[n - 2]), Long.parseLong(parts[n - 1]), 0), UserAccount::plus);
        }
    }

    // ------------------------------------------------------------------------------------------
    // resources and the timeline

    private void sample() {
        try {
            machineLoad.add(Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]));
        } catch (IOException | RuntimeException e) {
            // no /proc: the report says the load is unknown
        }
        for (KafkaNode node : cluster.nodes()) {
            if (!node.isAlive()) {
                continue;
            }
            String name = name(node);
            long pid = node.pid();
            long rss = procStatus(pid, "VmRSS:") * 1024;
            long threads = procStatus(pid, "Threads:");
            long fds = countFds(pid);
            long spool = -1;
            long cache = -1;
            long version = -1;
            try {
                Map<String, Map<String, Object>> agent = jmx.get(name).read("org.devlive.grantforge.kafka:type=Agent,*",
                    "AuditSpooledBytes", "CacheSize", "SnapshotVersion");
                for (Map<String, Object> values : agent.values()) {
                    spool = ((Number) values.get("AuditSpooledBytes")).longValue();
                    cache = ((Number) values.get("CacheSize")).longValue();
                    version = ((Number) values.get("SnapshotVersion")).longValue();
                }
            } catch (Exception e) {
                // a node that is starting has no JMX yet: that sample has no agent figures
            }
            samples.add(new Sample(System.currentTimeMillis(), name, rss, threads, fds, spool, cache, version));
        }
    }

    private static long procStatus(long pid, String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
                if (line.startsWith(key)) {
                    return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException gone) {
            // the process ended between the check and the read
        }
        return -1;
    }

    private static long countFds(long pid) {
        try (var fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd"))) {
            return fds.count();
        } catch (IOException | RuntimeException gone) {
            return -1;
        }
    }

    private void event(String what) {
        timeline.add(new Event(System.currentTimeMillis(), what));
        System.out.printf("soak %6.1f s: %s%n", (System.currentTimeMillis() - startedMs) / 1000.0, what);
    }
}
