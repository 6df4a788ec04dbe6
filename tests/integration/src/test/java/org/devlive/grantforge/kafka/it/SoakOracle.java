package org.devlive.grantforge.kafka.it;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The soak's oracle: what each policy version allowed, when each node had each version in force, and whether a
 * client's outcome is one of the answers those versions could give.
 *
 * <p>A version may serve more than one body: GrantForge changes role holders, group members and the service's state
 * without a new version, and the agent replaces the body of the version in force when it revalidates. So the oracle
 * knows the bodies, each by its ETag with the rules it granted, and a node's timeline names the bodies that may have
 * been in force: exactly one after the agent's line saying it replaced the body of a version (it names the ETag), and
 * after a line saying it applied a version, each body of that version published by then.
 *
 * <p>The slack is what the agent documents and nothing more. A body is in force on a node from no earlier than the
 * moment it was published (the soak's write of the policies, or its change of a membership) until no later than the
 * node's next log line saying it applied a version (logged once the swap is done; a new snapshot, or a new body of the
 * same version, starts with an empty decision cache, so no older answer outlives it). A validity period starts and
 * ends on the wall clock, exactly (the cache never keeps a decision past one). An outcome that took from {@code start}
 * to {@code end} was decided by some node within that time, by some body in force there then: an access is right when
 * one of those bodies allowed it at some instant of the time, a refusal when one of them refused it at some instant.
 */
final class SoakOracle {
    /** The version of a node with no snapshot in force: it refuses everything (its super users aside). */
    static final long NO_SNAPSHOT = -1;
    private static final Version NONE = new Version(NO_SNAPSHOT, "no snapshot", Long.MIN_VALUE, List.of());

    /** A right: {@code principal} may do {@code operation} on {@code resource} between {@code from} and {@code until}. */
    record Rule(String principal, String operation, String resource, long fromMs, long untilMs) {
        static Rule always(String principal, String operation, String resource) {
            return new Rule(principal, operation, resource, Long.MIN_VALUE, Long.MAX_VALUE);
        }

        boolean covers(String principal, String operation, String resource) {
            return this.principal.equals(principal) && this.operation.equals(operation) && this.resource.equals(resource);
        }
    }

    /** A body of a policy version as the soak published it, by its ETag. */
    record Version(long number, String etag, long publishedMs, List<Rule> rules) {
        /** The only body of its version. */
        Version(long number, long publishedMs, List<Rule> rules) {
            this(number, "version " + number, publishedMs, rules);
        }

        @Override
        public String toString() {
            return number + " (" + etag + ")";
        }
    }

    /** A client's attempt and how it ended; {@code allowed} false is a refusal with Kafka's authorization error. */
    record Outcome(String principal, String operation, String resource, long startMs, long endMs, boolean allowed) {
    }

    /** Why an outcome is wrong, with the bodies that could have decided it. */
    record Violation(Outcome outcome, List<Version> candidates) {
        /** The versions of the candidates, in order, each once. */
        List<Long> versions() {
            return candidates.stream().map(Version::number).distinct().sorted().toList();
        }

        @Override
        public String toString() {
            return (outcome.allowed() ? "allowed" : "refused") + " " + outcome.principal() + " " + outcome.operation() + " "
                + outcome.resource() + " between " + Instant.ofEpochMilli(outcome.startMs()) + " and "
                + Instant.ofEpochMilli(outcome.endMs()) + ", which no version in force then " + (outcome.allowed() ? "allowed"
                : "refused") + " (versions " + candidates + ")";
        }
    }

    /**
     * A node's bodies in force, in order: each from its {@code sinceMs} (a lower bound) to the next entry's log time.
     * Several bodies when the log does not say which one of a version the node applied.
     */
    private record InForce(List<Version> bodies, long sinceMs, long loggedMs) {
    }

    private static final Pattern APPLIED = Pattern.compile("^\\[([^\\]]+)\\].*applied policy version (\\d+) of service ");
    /** The line that follows {@link #APPLIED} when the body of the version in force was replaced. */
    private static final Pattern REPLACED =
        Pattern.compile("changed the snapshot of policy version (\\d+) without a new version: .*\\(ETag \\S+ \u2192 (\\S+)\\); applied");
    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss,SSS");

    private final Map<String, Version> bodies = new ConcurrentHashMap<>();
    private final Map<String, List<InForce>> nodes = new ConcurrentHashMap<>();
    /** The bodies the nodes' logs say were replaced at the same version, known to the soak. */
    private final java.util.concurrent.atomic.AtomicLong replacements = new java.util.concurrent.atomic.AtomicLong();

    void published(Version version) {
        bodies.put(version.etag(), version);
    }

    boolean knows(String etag) {
        return bodies.containsKey(etag);
    }

    /** How many times the nodes replaced the body of the version in force by another the soak published. */
    long replacements() {
        return replacements.get();
    }

    /** Every body published, by version and then by time. */
    Collection<Version> versions() {
        List<Version> all = new ArrayList<>(bodies.values());
        all.sort(Comparator.comparingLong(Version::number).thenComparingLong(Version::publishedMs));
        return all;
    }

    /**
     * A node's timeline from its log: the versions it applied, each at its line's time, with a refusal of everything
     * from each of {@code startedMs} (the node's launches) until the next version applied.
     */
    void nodeLog(String node, List<String> logLines, List<Long> startedMs) {
        TreeMap<Long, List<Version>> events = new TreeMap<>();
        for (long started : startedMs) {
            events.put(started, List.of(NONE));
        }
        Long lastApplied = null;
        for (String line : logLines) {
            Matcher m = APPLIED.matcher(line);
            if (m.find()) {
                long at = LocalDateTime.parse(m.group(1), LOG_TIME).atZone(ZoneId.systemDefault()).toInstant().toEpochMilli();
                // the line's time is truncated to the millisecond: the swap was before its end
                lastApplied = at + 1;
                events.put(lastApplied, bodiesOf(Long.parseLong(m.group(2)), lastApplied));
                continue;
            }
            Matcher replaced = REPLACED.matcher(line);
            if (replaced.find() && lastApplied != null && bodies.containsKey(replaced.group(2))) {
                events.put(lastApplied, List.of(bodies.get(replaced.group(2))));
                replacements.incrementAndGet();
            }
        }
        List<InForce> timeline = new ArrayList<>();
        long previousLogged = Long.MIN_VALUE;
        for (Map.Entry<Long, List<Version>> event : events.entrySet()) {
            long at = event.getKey();
            List<Version> inForce = event.getValue();
            long published = inForce.stream().mapToLong(Version::publishedMs).min().orElse(Long.MIN_VALUE);
            // one thread applies a node's versions one after the other: a swap follows the previous one's log line
            long since = inForce.contains(NONE) ? at : Math.max(previousLogged, published);
            timeline.add(new InForce(inForce, since, at));
            previousLogged = at;
        }
        nodes.put(node, timeline);
    }

    /**
     * The bodies of {@code number} published by {@code atMs}, any of which a node that applied the version then may
     * have; a version the soak never published stands for itself, with no rules.
     */
    private List<Version> bodiesOf(long number, long atMs) {
        List<Version> all = versions().stream().filter(v -> v.number() == number).toList();
        List<Version> byThen = all.stream().filter(v -> v.publishedMs() <= atMs).toList();
        if (!byThen.isEmpty()) {
            return byThen;
        }
        return all.isEmpty() ? List.of(new Version(number, "never published", Long.MIN_VALUE, List.of())) : all;
    }

    /** Each node's timeline, one entry per line: versions, from (a lower bound), logged at. */
    String describeTimelines() {
        StringBuilder text = new StringBuilder();
        nodes.forEach((node, timeline) -> timeline.forEach(e -> text.append(node).append('\t').append(e.bodies()).append('\t')
            .append(e.sinceMs()).append('\t').append(e.loggedMs()).append('\n')));
        return text.toString();
    }

    /** The bodies some node may have had in force at some instant between {@code startMs} and {@code endMs}. */
    List<Version> candidates(long startMs, long endMs) {
        List<Version> found = new ArrayList<>();
        for (List<InForce> timeline : nodes.values()) {
            for (int i = 0; i < timeline.size(); i++) {
                InForce entry = timeline.get(i);
                long until = i + 1 < timeline.size() ? timeline.get(i + 1).loggedMs() : Long.MAX_VALUE;
                if (entry.sinceMs() <= endMs && until >= startMs) {
                    entry.bodies().stream().filter(b -> !found.contains(b)).forEach(found::add);
                }
            }
        }
        found.sort(Comparator.comparingLong(Version::number).thenComparingLong(Version::publishedMs));
        return found;
    }

    /** Null when the outcome is an answer some body in force could give, else why not. */
    Violation check(Outcome outcome) {
        List<Version> candidates = candidates(outcome.startMs(), outcome.endMs());
        for (Version body : candidates) {
            if (outcome.allowed() ? allowsAtSomeInstant(body, outcome) : refusesAtSomeInstant(body, outcome)) {
                return null;
            }
        }
        return new Violation(outcome, candidates);
    }

    private static boolean allowsAtSomeInstant(Version body, Outcome o) {
        return rules(body, o).stream().anyMatch(r -> r.fromMs() <= o.endMs() && r.untilMs() > o.startMs());
    }

    /** True unless the rules' periods together cover the whole of the outcome's time. */
    private static boolean refusesAtSomeInstant(Version body, Outcome o) {
        List<Rule> rules = new ArrayList<>(rules(body, o));
        rules.sort(Comparator.comparingLong(Rule::fromMs));
        long covered = o.startMs();
        for (Rule rule : rules) {
            if (rule.fromMs() > covered) {
                return true;
            }
            covered = Math.max(covered, rule.untilMs());
            if (covered > o.endMs()) {
                return false;
            }
        }
        return true;
    }

    private static List<Rule> rules(Version body, Outcome o) {
        return body.rules().stream().filter(r -> r.covers(o.principal(), o.operation(), o.resource())).toList();
    }
}
