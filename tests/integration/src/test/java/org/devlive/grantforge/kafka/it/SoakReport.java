package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The soak's checks and what a person reads: {@code report.md} (the table of checks with their counts, the faults, the
 * resources, the timeline) and {@code timeline.svg} (client outcomes, policy versions in force on each node, and the
 * fault steps, against the run's time).
 */
final class SoakReport {
    /** Growth over the last half of the run that a node may show (from the middle sample to the last). */
    static final long MAX_RSS_GROWTH_BYTES = 96L << 20;
    static final long MAX_THREAD_GROWTH = 10;
    static final long MAX_FD_GROWTH = 50;
    /**
     * The agent's spool and decision cache at any time of the run: the clients ask a few dozen distinct questions, and
     * a fault step spools a few KiB; a cache or a spool that kept what it should let go passes these within the hour.
     */
    static final long MAX_SPOOL_BYTES = 1L << 20;
    static final long MAX_CACHE_ENTRIES = 1_000;
    /**
     * Attempts of one principal that may end neither allowed nor refused: a broker restarts once per schedule, and a
     * client whose partition leader it was may time out a few times meanwhile.
     */
    static final long MAX_UNJUDGED = 20;
    static final double MAX_UNJUDGED_SHARE = 0.01;

    /** One check: what was counted and whether it holds. */
    record Check(String name, String counted, boolean holds, String detail) {
    }

    private final Soak soak;
    final List<SoakOracle.Violation> violations = new ArrayList<>();
    final List<Check> checks = new ArrayList<>();

    SoakReport(Soak soak) {
        this.soak = soak;
        judge();
    }

    List<Check> failed() {
        return checks.stream().filter(c -> !c.holds()).collect(Collectors.toList());
    }

    private void judge() {
        Map<String, long[]> byPrincipal = new TreeMap<>();
        for (SoakOracle.Outcome outcome : soak.outcomes) {
            long[] counts = byPrincipal.computeIfAbsent(outcome.principal() + " " + outcome.operation() + " " + outcome.resource(),
                k -> new long[2]);
            counts[outcome.allowed() ? 0 : 1]++;
            SoakOracle.Violation violation = soak.oracle.check(outcome);
            if (violation != null) {
                violations.add(violation);
            }
        }
        checks.add(new Check("every client outcome is an answer of a policy version in force around its time",
            soak.outcomes.size() + " outcomes", violations.isEmpty(), violations.isEmpty() ? ""
            : violations.size() + " wrong; first: " + violations.get(0)));
        // the oracle judges only what it was shown: each kind of answer must have been met
        expect(byPrincipal, "alice WRITE soak-steady", true, false);
        expect(byPrincipal, "bob WRITE soak-churned", true, true);
        expect(byPrincipal, "bob WRITE soak-timed", true, true);
        expect(byPrincipal, "carol READ soak-steady", true, false);
        expect(byPrincipal, "dave WRITE soak-steady", true, false);
        expect(byPrincipal, "dave WRITE " + SoakClients.TRANSACTIONAL_ID, true, false);
        expect(byPrincipal, "erin DESCRIBE soak-steady", true, false);
        expect(byPrincipal, "frank WRITE " + SoakClients.ROLE, true, true);
        expect(byPrincipal, "mallory WRITE soak-steady", false, true);
        TreeSet<Long> published = soak.oracle.versions().stream().map(SoakOracle.Version::number)
            .collect(Collectors.toCollection(TreeSet::new));
        TreeSet<Long> applied = soak.oracle.candidates(Long.MIN_VALUE, Long.MAX_VALUE).stream().map(SoakOracle.Version::number)
            .collect(Collectors.toCollection(TreeSet::new));
        applied.remove(SoakOracle.NO_SNAPSHOT);
        TreeSet<Long> unknown = new TreeSet<>(applied);
        unknown.removeAll(published);
        checks.add(new Check("every version a node applied is one the soak published", applied.size() + " applied of "
            + published.size() + " published", unknown.isEmpty(), unknown.isEmpty() ? "" : "unknown versions " + unknown));
        long memberships = soak.oracle.versions().stream().map(SoakOracle.Version::number).count()
            - soak.oracle.versions().stream().map(SoakOracle.Version::number).distinct().count();
        checks.add(new Check("memberships changed at the same policy version reached the brokers by revalidation",
            soak.oracle.replacements() + " bodies replaced in force, of " + memberships + " changes", soak.oracle.replacements() > 0,
            ""));
        for (Soak.AuditAccount account : soak.audit) {
            List<String> users = new ArrayList<>();
            account.users().forEach((user, a) -> users.add(String.format(Locale.ROOT, "%s %d + %d of %d%s", user, a.received(),
                a.dropped(), a.accesses(), a.reconciled() ? "" : " (off)")));
            checks.add(new Check(account.node() + ": the server's event counts plus the drops equal the accesses the agent "
                + "audited, in all and for every user, the spool empty", account.received() + " received + " + account.dropped()
                + " dropped of " + account.accesses() + " accesses (" + account.users().size() + " users), spool "
                + account.spooledBytes() + " B", account.reconciled(), String.join("; ", users)));
        }
        auditTopic();
        hybrid();
        auditOfEveryAttempt(byPrincipal);
        unjudged(byPrincipal);
        quotas();
        for (FaultProxy.Fault fault : FaultProxy.Fault.values()) {
            if (fault != FaultProxy.Fault.NONE) {
                long n = soak.proxyFaults.getOrDefault(fault, 0L);
                checks.add(new Check("the proxy injected " + fault, n + " connections", n > 0, ""));
            }
        }
        for (Soak.Step step : Soak.Step.values()) {
            long n = soak.stepsRun.getOrDefault(step.name(), 0L);
            checks.add(new Check("the schedule ran " + step, n + " times", n > 0, ""));
        }
        growth();
    }

    /**
     * A throttled client's bytes over a span: Kafka measures a quota over {@code quota.window.num} ×
     * {@code quota.window.size.seconds} (11 × 1 s by default) and throttles so that rate meets the limit, so a client
     * that pushes harder than its limit sends a burst of up to a window's worth and then waits. Over {@code n} seconds
     * it sends at most the limit × (n + 11 s). It sends a little less than the limit over long spans (each wait ends
     * a round trip late): Kafka's own callback let 98 % of it through over half an hour.
     */
    static final int QUOTA_WINDOW_SECONDS = 11;
    /** How much less than Kafka's own callback (or than the limit × (n − 11 s), if less) a client may get. */
    static final double QUOTA_SHORTFALL = 0.95;

    /**
     * Each of quinn's producers, between restarts: at most its limit × (seconds + one quota window), and at least 95 %
     * of what Kafka's own callback let the same producer through on the anchor (or of the limit × (seconds − one
     * window), if that is less), with the anchor held to the same upper bound (which proves it on this machine).
     */
    private void quotas() {
        List<String> spans = new ArrayList<>();
        boolean holds = !soak.quotaSpans.isEmpty();
        for (Soak.QuotaSpan span : soak.quotaSpans) {
            long limit = span.client().limit();
            long most = limit * (span.seconds() + QUOTA_WINDOW_SECONDS);
            double least = QUOTA_SHORTFALL * Math.min(span.anchorBytes(), limit * (span.seconds() - QUOTA_WINDOW_SECONDS));
            boolean cluster = span.clusterBytes() >= least && span.clusterBytes() <= most;
            boolean anchor = span.anchorBytes() <= most;
            holds &= cluster && anchor;
            spans.add(String.format(Locale.ROOT, "%s (limit %d B/s), %d s from %.0f s: %.0f B/s%s, Kafka's own %.0f B/s%s",
                span.client().clientId(), limit, span.seconds(), (span.fromSecond() * 1000 - soak.startedMs) / 1000.0,
                (double) span.clusterBytes() / span.seconds(), cluster ? "" : " (off)", (double) span.anchorBytes() / span.seconds(),
                anchor ? "" : " (off)"));
        }
        checks.add(new Check("quinn's two producers between restarts, each at most its limit + one quota window ("
            + QUOTA_WINDOW_SECONDS + " s) over the span and at least 95 % of Kafka's own, with the agent's callback (a sub-quota of " + SoakClients.RESERVED_BYTES_PER_S
            + " B/s reserved out of quinn's " + SoakClients.QUINN_BYTES_PER_S + ") and with Kafka's own (the same two limits)",
            soak.quotaSpans.size() / SoakClients.LIMITED.size() + " spans × " + SoakClients.LIMITED.size() + " producers", holds,
            String.join("; ", spans)));
    }

    /**
     * The audit against the clients rather than against the agents' own counters: every broker audited accesses and
     * the server received them, none was dropped (the spool never comes near its limit in a soak), and for each
     * principal the server received at least as many accesses as the clients made attempts that were answered (each
     * took at least one decision of a broker). An access never handed to the audit fails this.
     */
    private void auditOfEveryAttempt(Map<String, long[]> byPrincipal) {
        List<Soak.AuditAccount> brokers = soak.audit.stream().filter(a -> a.node().startsWith("broker-")).toList();
        boolean everyBroker = brokers.size() == 3 && brokers.stream().allMatch(a -> a.received() > 0 && a.accesses() > 0);
        checks.add(new Check("the audit reached the server from every broker", brokers.stream().map(a -> a.node() + " "
            + a.received()).collect(Collectors.joining(", ")), everyBroker, "events resent after a cut answer, kept once by the"
            + " server: " + soak.resentKeptOnce));
        long dropped = soak.audit.stream().mapToLong(Soak.AuditAccount::dropped).sum();
        checks.add(new Check("no audit event was dropped", dropped + " dropped", dropped == 0, ""));
        Map<String, long[]> attemptsAndReceived = new TreeMap<>();
        byPrincipal.forEach((key, counts) -> attemptsAndReceived.computeIfAbsent(key.substring(0, key.indexOf(' ')),
            k -> new long[2])[0] += counts[0] + counts[1]);
        soak.audit.forEach(account -> account.users().forEach((user, a) -> {
            long[] pair = attemptsAndReceived.get(user);
            if (pair != null) {
                pair[1] += a.received();
            }
        }));
        List<String> missing = new ArrayList<>();
        attemptsAndReceived.forEach((user, pair) -> {
            if (pair[1] < pair[0]) {
                missing.add(user + " " + pair[1] + " received of " + pair[0] + " attempts");
            }
        });
        checks.add(new Check("for each principal, the server received an access for every attempt its client made",
            attemptsAndReceived.size() + " principals", missing.isEmpty(), String.join("; ", missing)));
        // A producer's attempt is one Produce request at least, decided on the operation and topic it names; mallory,
        // who may not even describe the topic, is refused on her Metadata requests instead (DESCRIBE).
        List<String> unaudited = new ArrayList<>();
        byPrincipal.forEach((key, counts) -> {
            if (key.contains(" WRITE ") && !key.contains(":") && !key.startsWith("mallory ")) {
                long[] audited = soak.auditedByAccess.getOrDefault(key, new long[2]);
                for (int answer = 0; answer < 2; answer++) {
                    if (audited[answer] < counts[answer]) {
                        unaudited.add(key + (answer == 0 ? " allowed " : " refused ") + audited[answer] + " audited of "
                            + counts[answer] + " attempts");
                    }
                }
            }
        });
        checks.add(new Check("every producer's attempt on a topic reached the server as an access of its answer",
            soak.auditedByAccess.size() + " kinds of access", unaudited.isEmpty(), String.join("; ", unaudited)));
    }

    /**
     * The audit topic ({@link SoakAuditTopic}) reconciled as the server's counts are: per broker and user, the accesses
     * of its records (folded counts, each event once) plus the topic sink's drops equal what the agent audited; each
     * sink's own account balances, none dropped; the sink's producer never audited.
     */
    private void auditTopic() {
        java.util.Set<String> usersInTopic = new TreeSet<>();
        for (SoakAuditTopic.Account topic : soak.auditTopic) {
            Soak.AuditAccount audited = soak.audit.stream().filter(a -> a.node().equals(topic.node())).findFirst().orElseThrow();
            boolean broker = topic.node().startsWith("broker-");
            usersInTopic.addAll(topic.inTopic().keySet());
            if (broker) {
                List<String> off = SoakAuditTopic.topicOff(audited, topic);
                long inTopic = topic.inTopic().values().stream().mapToLong(Long::longValue).sum();
                checks.add(new Check(topic.node() + ": the audit topic's records plus the topic sink's drops equal the accesses the "
                    + "agent audited, for every user", inTopic + " accesses in the topic of " + audited.accesses() + " audited ("
                    + topic.inTopic().size() + " users)", off.isEmpty() && inTopic > 0, String.join("; ", off)));
            }
            List<String> sinks = SoakAuditTopic.sinksOff(topic, broker);
            boolean bothSinks = topic.bySink().containsKey("grantforge") && topic.bySink().containsKey("topic");
            checks.add(new Check(topic.node() + ": each sink's account (AuditBySink, over the node's lives) balances for every "
                + "user, none dropped" + (broker ? ", the topic sink's delivered equal to the topic's records" : ""),
                topic.bySink().keySet() + " sinks", sinks.isEmpty() && (!broker || bothSinks), String.join("; ", sinks)));
        }
        boolean fromEveryBroker = soak.auditTopic.stream().filter(t -> t.node().startsWith("broker-"))
            .filter(t -> !t.inTopic().isEmpty()).count() == 3;
        checks.add(new Check("the audit topic holds no record of its own producer (" + SoakAuditTopic.PRINCIPAL + "), and records "
            + "of every broker", usersInTopic + " users in the topic", fromEveryBroker
            && !usersInTopic.contains(SoakAuditTopic.PRINCIPAL), ""));
    }

    /**
     * The hybrid broker ({@link SoakHybrid}): every question of the soak's traffic it decided was a policy's, none left
     * to Kafka's ACLs, as an operator must see before the switch to {@code GrantForgeKafkaAuthorizer}; and it decided
     * some of each answer (a broker that saw no traffic would show no ACL decision either).
     */
    private void hybrid() {
        SoakHybrid.Decided decided = soak.hybrid;
        checks.add(new Check("broker-" + SoakHybrid.BROKER + " in hybrid mode: no question of the soak's traffic decided by Kafka's "
            + "ACLs (HybridAclDecisions), policies deciding the rest", decided.byAcls() + " by the ACLs, " + decided.allowed()
            + " allowed and " + decided.denied() + " refused by policies", decided.byAcls() == 0 && decided.allowed() > 0
            && decided.denied() > 0, String.join("; ", decided.firstByAcls())));
    }

    /**
     * Attempts that ended neither allowed nor refused (a timeout, a broker away) are not judged, so they are bounded: a
     * build that hangs or breaks requests instead of answering them would hide its answers there.
     */
    private void unjudged(Map<String, long[]> byPrincipal) {
        List<String> over = new ArrayList<>();
        soak.unavailable.forEach((principal, n) -> {
            long judged = byPrincipal.entrySet().stream().filter(e -> e.getKey().startsWith(principal + " "))
                .mapToLong(e -> e.getValue()[0] + e.getValue()[1]).sum();
            if (n > MAX_UNJUDGED + judged * MAX_UNJUDGED_SHARE) {
                over.add(principal + " " + n + " of " + (n + judged));
            }
        });
        checks.add(new Check("attempts neither allowed nor refused stay within " + MAX_UNJUDGED + " + " + (int) (MAX_UNJUDGED_SHARE
            * 100) + " % of each principal's answered ones", soak.unavailable.toString(), over.isEmpty(), String.join("; ", over)));
    }

    private void expect(Map<String, long[]> byPrincipal, String key, boolean allowedMet, boolean refusedMet) {
        long[] counts = byPrincipal.getOrDefault(key, new long[2]);
        boolean holds = (counts[0] > 0) == allowedMet && (counts[1] > 0) == refusedMet;
        checks.add(new Check(key + ": " + (allowedMet ? "allowed" : "") + (allowedMet && refusedMet ? " and " : "")
            + (refusedMet ? "refused" : "") + " seen, nothing else", counts[0] + " allowed, " + counts[1] + " refused", holds, ""));
    }

    /** Each node's resources: the last sample against the one in the middle of the run. */
    private void growth() {
        Map<String, List<Soak.Sample>> byNode = soak.samples.stream().filter(s -> s.rssBytes() > 0)
            .collect(Collectors.groupingBy(Soak.Sample::node, TreeMap::new, Collectors.toList()));
        long middle = soak.startedMs + (soak.endedMs - soak.startedMs) / 2;
        for (Map.Entry<String, List<Soak.Sample>> node : byNode.entrySet()) {
            List<Soak.Sample> list = node.getValue();
            Soak.Sample mid = list.stream().min(Comparator.comparingLong(s -> Math.abs(s.atMs() - middle))).orElseThrow();
            Soak.Sample last = list.get(list.size() - 1);
            long rss = last.rssBytes() - mid.rssBytes();
            long threads = last.threads() - mid.threads();
            long fds = last.fds() - mid.fds();
            checks.add(new Check(node.getKey() + ": resident memory, threads and descriptors over the last half",
                String.format(Locale.ROOT, "%+.1f MiB, %+d threads, %+d fds", rss / 1048576.0, threads, fds),
                rss <= MAX_RSS_GROWTH_BYTES && threads <= MAX_THREAD_GROWTH && fds <= MAX_FD_GROWTH,
                String.format(Locale.ROOT, "bounds +%d MiB, +%d, +%d", MAX_RSS_GROWTH_BYTES >> 20, MAX_THREAD_GROWTH, MAX_FD_GROWTH)));
            // samples with the agent's figures (-1 when its JMX could not be read)
            List<Soak.Sample> agent = list.stream().filter(s -> s.spoolBytes() >= 0 && s.cacheEntries() >= 0).collect(Collectors.toList());
            Soak.Sample agentMid = agent.stream().min(Comparator.comparingLong(s -> Math.abs(s.atMs() - middle))).orElse(mid);
            Soak.Sample agentLast = agent.isEmpty() ? last : agent.get(agent.size() - 1);
            long spoolPeak = agent.stream().mapToLong(Soak.Sample::spoolBytes).max().orElse(0);
            long cachePeak = agent.stream().mapToLong(Soak.Sample::cacheEntries).max().orElse(0);
            checks.add(new Check(node.getKey() + ": the audit spool and the decision cache over the last half, and their peaks",
                String.format(Locale.ROOT, "spool %+d B (peak %d B), cache %+d entries (peak %d)",
                    agentLast.spoolBytes() - agentMid.spoolBytes(), spoolPeak, agentLast.cacheEntries() - agentMid.cacheEntries(),
                    cachePeak),
                spoolPeak <= MAX_SPOOL_BYTES && cachePeak <= MAX_CACHE_ENTRIES,
                String.format(Locale.ROOT, "bounds %d KiB, %d entries", MAX_SPOOL_BYTES >> 10, MAX_CACHE_ENTRIES)));
        }
    }

    /** Writes report.md and timeline.svg into the soak's output directory. */
    void write() throws IOException {
        Files.writeString(soak.out.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
        // the raw history, for a look at what a failed check saw
        StringBuilder outcomes = new StringBuilder("start_ms\tend_ms\tprincipal\toperation\tresource\tallowed\n");
        for (SoakOracle.Outcome o : soak.outcomes) {
            outcomes.append(o.startMs()).append('\t').append(o.endMs()).append('\t').append(o.principal()).append('\t')
                .append(o.operation()).append('\t').append(o.resource()).append('\t').append(o.allowed()).append('\n');
        }
        Files.writeString(soak.out.resolve("outcomes.tsv"), outcomes, StandardCharsets.UTF_8);
        StringBuilder versions = new StringBuilder();
        for (SoakOracle.Version v : soak.oracle.versions()) {
            versions.append(v.number()).append('\t').append(v.etag()).append('\t').append(v.publishedMs()).append('\t')
                .append(v.rules()).append('\n');
        }
        Files.writeString(soak.out.resolve("versions.tsv"), versions, StandardCharsets.UTF_8);
        StringBuilder quota = new StringBuilder("client_id\tsecond\tcluster_bytes\tanchor_bytes\n");
        soak.limitedBySecond.forEach((client, bySecond) -> bySecond.forEach((second, bytes) -> quota.append(client).append('\t')
            .append((second * 1000 - soak.startedMs) / 1000).append('\t').append(bytes[0]).append('\t').append(bytes[1]).append('\n')));
        Files.writeString(soak.out.resolve("quota.tsv"), quota, StandardCharsets.UTF_8);
        StringBuilder samples = new StringBuilder("at_ms\tnode\trss_bytes\tthreads\tfds\tspool_bytes\tcache_entries\tversion\n");
        for (Soak.Sample x : soak.samples) {
            samples.append(x.atMs()).append('\t').append(x.node()).append('\t').append(x.rssBytes()).append('\t')
                .append(x.threads()).append('\t').append(x.fds()).append('\t').append(x.spoolBytes()).append('\t')
                .append(x.cacheEntries()).append('\t').append(x.snapshotVersion()).append('\n');
        }
        Files.writeString(soak.out.resolve("samples.tsv"), samples, StandardCharsets.UTF_8);
        Files.writeString(soak.out.resolve("timelines.txt"), soak.oracle.describeTimelines(), StandardCharsets.UTF_8);
        Files.writeString(soak.out.resolve("timeline.svg"), svg(), StandardCharsets.UTF_8);
    }

    /** The machine's load over the run: median and range of the 1-minute averages sampled. */
    private String machineLoad() {
        List<Double> loads = soak.machineLoad.stream().sorted().collect(Collectors.toList());
        if (loads.isEmpty()) {
            return "The machine's load was not sampled.";
        }
        return String.format(Locale.ROOT, "The machine's load (1-minute average, %d samples): median %.2f, %.2f to %.2f.",
            loads.size(), loads.get(loads.size() / 2), loads.get(0), loads.get(loads.size() - 1));
    }

    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Soak: Kafka ").append(soak.kafkaVersion).append(", 1 controller + 3 brokers, ")
            .append(soak.length.toMinutes() > 0 ? soak.length.toMinutes() + " min" : soak.length.toSeconds() + " s").append("\n\n");
        md.append("From ").append(Instant.ofEpochMilli(soak.startedMs)).append(" to ").append(Instant.ofEpochMilli(soak.endedMs))
            .append(", fault steps of ").append(soak.stepLength.toSeconds()).append(" s, a policy change every ")
            .append(Soak.CHURN_EVERY.toSeconds()).append(" s. ").append(machineLoad()).append(" ![timeline](timeline.svg)\n\n");
        md.append("## Checks\n\n| check | counted | holds |\n|---|---|---|\n");
        for (Check check : checks) {
            md.append("| ").append(check.name()).append(" | ").append(check.counted())
                .append(check.detail().isEmpty() ? "" : " (" + check.detail() + ")").append(" | ")
                .append(check.holds() ? "yes" : "**NO**").append(" |\n");
        }
        if (!violations.isEmpty()) {
            md.append("\n## Outcomes the oracle rejects (the first 30 of ").append(violations.size()).append(")\n\n");
            violations.stream().limit(30).forEach(v -> md.append("- ").append(v).append('\n'));
        }
        md.append("\nAttempts that ended neither allowed nor refused (timeouts while a broker restarted, …), per principal: ")
            .append(soak.unavailable).append("\n\n## Faults injected\n\n| kind | count |\n|---|---|\n");
        soak.proxyFaults.forEach((fault, n) -> md.append("| proxy ").append(fault).append(" | ").append(n).append(" connections |\n"));
        soak.stepsRun.forEach((step, n) -> md.append("| step ").append(step).append(" | ").append(n).append(" |\n"));
        md.append("\n## Timeline\n\n| s | event |\n|---|---|\n");
        for (Soak.Event event : soak.timeline) {
            md.append(String.format(Locale.ROOT, "| %.1f | %s |%n", (event.atMs() - soak.startedMs) / 1000.0, event.what()));
        }
        return md.toString();
    }

    // ------------------------------------------------------------------------------------------
    // the plot

    private static final int WIDTH = 1200;
    private static final int LEFT = 190;
    private static final int ROW = 26;
    /** The height of one panel of the agents' samples. */
    private static final int PANEL = 70;
    private static final String[] NODE_COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"};

    /** The samples plotted under the outcomes, a panel each, a line per node. */
    private static final Map<String, java.util.function.ToDoubleFunction<Soak.Sample>> PANELS = new LinkedHashMap<>();

    static {
        PANELS.put("policy version in force", Soak.Sample::snapshotVersion);
        PANELS.put("resident memory (MiB)", x -> x.rssBytes() / 1048576.0);
        PANELS.put("decision cache entries", Soak.Sample::cacheEntries);
        PANELS.put("audit spool (KiB)", x -> x.spoolBytes() / 1024.0);
        PANELS.put("threads", Soak.Sample::threads);
    }

    /** One panel per sampled metric: a line per node, the panel's range written at its left. */
    private void panels(StringBuilder svg, java.util.function.LongFunction<Double> x, int top) {
        List<String> nodes = soak.samples.stream().map(Soak.Sample::node).distinct().sorted().collect(Collectors.toList());
        int panel = 0;
        for (Map.Entry<String, java.util.function.ToDoubleFunction<Soak.Sample>> metric : PANELS.entrySet()) {
            int y0 = top + panel++ * PANEL;
            // -1: a sample without that figure (a node starting, its JMX not up yet), not plotted
            double max = soak.samples.stream().mapToDouble(metric.getValue()).filter(v -> v >= 0).max().orElse(1);
            double min = 0;
            double range = Math.max(1e-9, max - min);
            svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">%s</text><text x=\"4\" y=\"%d\" font-size=\"9\">"
                + "%.0f to %.0f</text><line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#ccc\"/>%n", y0 + 20, metric.getKey(),
                y0 + 34, min, max, LEFT, WIDTH - 10, y0 + PANEL - 10, y0 + PANEL - 10));
            for (int n = 0; n < nodes.size(); n++) {
                String node = nodes.get(n);
                // a point per pixel at most: an hour's samples stay a small file
                StringBuilder points = new StringBuilder();
                long lastPixel = Long.MIN_VALUE;
                for (Soak.Sample sample : soak.samples) {
                    long pixel = Math.round(x.apply(sample.atMs()));
                    double value = metric.getValue().applyAsDouble(sample);
                    if (sample.node().equals(node) && pixel != lastPixel && value >= 0) {
                        points.append(String.format(Locale.ROOT, "%d,%.0f ", pixel, y0 + PANEL - 10 - (PANEL - 20) * (value - min) / range));
                        lastPixel = pixel;
                    }
                }
                svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1\" points=\"%s\"/>%n",
                    NODE_COLORS[n % NODE_COLORS.length], points.toString().trim()));
                if (panel == 1) {
                    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"9\" fill=\"%s\">%s</text>%n",
                        LEFT + n * 110, top - 4, NODE_COLORS[n % NODE_COLORS.length], node));
                }
            }
        }
    }

    String svg() {
        Map<String, Integer> rowOf = new LinkedHashMap<>();
        for (String key : soak.outcomes.stream().map(o -> o.principal() + " " + o.operation() + " " + o.resource()).sorted()
            .distinct().collect(Collectors.toList())) {
            rowOf.put(key, rowOf.size() + 3);
        }
        int panelsTop = (rowOf.size() + 4) * ROW;
        int height = panelsTop + PANELS.size() * PANEL + 2 * ROW;
        long span = Math.max(1, soak.endedMs - soak.startedMs);
        java.util.function.LongFunction<Double> x = t -> LEFT + (WIDTH - LEFT - 10) * (double) (t - soak.startedMs) / span;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            + "font-family=\"sans-serif\" font-size=\"11\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", WIDTH, height));
        // fault steps: shaded bands with their names
        long begun = -1;
        String name = null;
        int band = 0;
        for (Soak.Event event : soak.timeline) {
            if (event.what().startsWith("begin ")) {
                begun = event.atMs();
                name = event.what().substring(6);
            } else if (event.what().startsWith("end ") && begun >= 0 && !"NONE".equals(name)) {
                svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#f4d6a0\" "
                    + "opacity=\"0.5\"/><text x=\"%.1f\" y=\"%d\" font-size=\"9\">%s</text>%n", x.apply(begun), ROW,
                    x.apply(event.atMs()) - x.apply(begun), height - 2 * ROW, x.apply(begun) + 2, band++ % 2 == 0 ? ROW - 4 : ROW - 14,
                    Soak.Step.valueOf(name).label));
                begun = -1;
            }
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">policy versions published</text>%n", ROW + 17));
        for (SoakOracle.Version version : soak.oracle.versions()) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#555\"/>%n",
                x.apply(version.publishedMs()), x.apply(version.publishedMs()), ROW + 6, ROW + 22));
        }
        for (Map.Entry<String, Integer> row : rowOf.entrySet()) {
            int y = row.getValue() * ROW;
            svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">%s</text>%n", y + 4, row.getKey()));
        }
        // one mark per row, pixel and answer, however long the run: which answers each pixel's time saw
        java.util.Set<String> marks = new java.util.LinkedHashSet<>();
        for (SoakOracle.Outcome o : soak.outcomes) {
            marks.add(rowOf.get(o.principal() + " " + o.operation() + " " + o.resource()) + " " + Math.round(x.apply(o.startMs()))
                + " " + o.allowed());
        }
        for (String mark : marks) {
            String[] parts = mark.split(" ");
            int y = Integer.parseInt(parts[0]) * ROW;
            boolean allowed = Boolean.parseBoolean(parts[2]);
            svg.append(String.format(Locale.ROOT, "<rect x=\"%s\" y=\"%d\" width=\"1.5\" height=\"8\" fill=\"%s\"/>%n",
                parts[1], allowed ? y - 8 : y, allowed ? "#2a9d3a" : "#c0392b"));
        }
        for (SoakOracle.Violation v : violations) {
            int y = rowOf.get(v.outcome().principal() + " " + v.outcome().operation() + " " + v.outcome().resource()) * ROW;
            svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%d\" r=\"5\" fill=\"none\" stroke=\"black\"/>%n",
                x.apply(v.outcome().startMs()), y));
        }
        panels(svg, x, panelsTop);
        int axis = height - 2 * ROW + 14;
        for (long s = 0; s * 1000 <= span; s += Math.max(10, span / 1000 / 12 / 10 * 10)) {
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%d s</text>%n", x.apply(soak.startedMs + s * 1000),
                axis, s));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">green above a row: allowed; red below: refused; "
            + "circled: an outcome the oracle rejects; shaded: a fault step; under the rows: the nodes' samples, a line per node</text>%n", axis + 18));
        svg.append("</svg>\n");
        return svg.toString();
    }
}
