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
 * <p>The slack is what the agent documents and nothing more. A version is in force on a node from no earlier than the
 * moment it was published (the soak's write of the policies) until no later than the node's log line saying it
 * applied a later version (logged once the swap is done; a new snapshot starts with an empty decision cache, so no
 * older answer outlives it). A validity period starts and ends on the wall clock, exactly (the cache never keeps a
 * decision past one). An outcome that took from {@code start} to {@code end} was decided by some node within that
 * time, by some version in force there then: an access is right when one of those versions allowed it at some instant
 * of the time, a refusal when one of them refused it at some instant.
 */
final class SoakOracle {
    /** The version of a node with no snapshot in force: it refuses everything (its super users aside). */
    static final long NO_SNAPSHOT = -1;

    /** A right: {@code principal} may do {@code operation} on {@code resource} between {@code from} and {@code until}. */
    record Rule(String principal, String operation, String resource, long fromMs, long untilMs) {
        static Rule always(String principal, String operation, String resource) {
            return new Rule(principal, operation, resource, Long.MIN_VALUE, Long.MAX_VALUE);
        }

        boolean covers(String principal, String operation, String resource) {
            return this.principal.equals(principal) && this.operation.equals(operation) && this.resource.equals(resource);
        }
    }

    /** A policy version as the soak published it. */
    record Version(long number, long publishedMs, List<Rule> rules) {
    }

    /** A client's attempt and how it ended; {@code allowed} false is a refusal with Kafka's authorization error. */
    record Outcome(String principal, String operation, String resource, long startMs, long endMs, boolean allowed) {
    }

    /** Why an outcome is wrong, with the versions that could have decided it. */
    record Violation(Outcome outcome, List<Long> candidates) {
        @Override
        public String toString() {
            return (outcome.allowed() ? "allowed" : "refused") + " " + outcome.principal() + " " + outcome.operation() + " "
                + outcome.resource() + " between " + Instant.ofEpochMilli(outcome.startMs()) + " and "
                + Instant.ofEpochMilli(outcome.endMs()) + ", which no version in force then " + (outcome.allowed() ? "allowed"
                : "refused") + " (versions " + candidates + ")";
        }
    }

    /** A node's versions in force, in order: each from its {@code sinceMs} (a lower bound) to the next entry's log time. */
    private record InForce(long version, long sinceMs, long loggedMs) {
    }

    private static final Pattern APPLIED = Pattern.compile("^\\[([^\\]]+)\\].*applied policy version (\\d+) of service ");
    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss,SSS");

    private final Map<Long, Version> versions = new ConcurrentHashMap<>();
    private final Map<String, List<InForce>> nodes = new ConcurrentHashMap<>();

    void published(Version version) {
        versions.put(version.number(), version);
    }

    Collection<Version> versions() {
        List<Version> all = new ArrayList<>(versions.values());
        all.sort(Comparator.comparingLong(Version::number));
        return all;
    }

    /**
     * A node's timeline from its log: the versions it applied, each at its line's time, with a refusal of everything
     * from each of {@code startedMs} (the node's launches) until the next version applied.
     */
    void nodeLog(String node, List<String> logLines, List<Long> startedMs) {
        TreeMap<Long, Long> events = new TreeMap<>();
        for (long started : startedMs) {
            events.put(started, NO_SNAPSHOT);
        }
        for (String line : logLines) {
            Matcher m = APPLIED.matcher(line);
            if (m.find()) {
                long at = LocalDateTime.parse(m.group(1), LOG_TIME).atZone(ZoneId.systemDefault()).toInstant().toEpochMilli();
                // the line's time is truncated to the millisecond: the swap was before its end
                events.put(at + 1, Long.parseLong(m.group(2)));
            }
        }
        List<InForce> timeline = new ArrayList<>();
        long previousLogged = Long.MIN_VALUE;
        for (Map.Entry<Long, Long> event : events.entrySet()) {
            long at = event.getKey();
            long version = event.getValue();
            Version published = versions.get(version);
            // one thread applies a node's versions one after the other: a swap follows the previous one's log line
            long since = version == NO_SNAPSHOT ? at
                : Math.max(previousLogged, published == null ? Long.MIN_VALUE : published.publishedMs());
            timeline.add(new InForce(version, since, at));
            previousLogged = at;
        }
        nodes.put(node, timeline);
    }

    /** Each node's timeline, one entry per line: version, from (a lower bound), logged at. */
    String describeTimelines() {
        StringBuilder text = new StringBuilder();
        nodes.forEach((node, timeline) -> timeline.forEach(e -> text.append(node).append('\t').append(e.version()).append('\t')
            .append(e.sinceMs()).append('\t').append(e.loggedMs()).append('\n')));
        return text.toString();
    }

    /** The versions some node may have had in force at some instant between {@code startMs} and {@code endMs}. */
    List<Long> candidates(long startMs, long endMs) {
        List<Long> found = new ArrayList<>();
        for (List<InForce> timeline : nodes.values()) {
            for (int i = 0; i < timeline.size(); i++) {
                InForce entry = timeline.get(i);
                long until = i + 1 < timeline.size() ? timeline.get(i + 1).loggedMs() : Long.MAX_VALUE;
                if (entry.sinceMs() <= endMs && until >= startMs && !found.contains(entry.version())) {
                    found.add(entry.version());
                }
            }
        }
        found.sort(null);
        return found;
    }

    /** Null when the outcome is an answer some version in force could give, else why not. */
    Violation check(Outcome outcome) {
        List<Long> candidates = candidates(outcome.startMs(), outcome.endMs());
        for (long number : candidates) {
            if (outcome.allowed() ? allowsAtSomeInstant(number, outcome) : refusesAtSomeInstant(number, outcome)) {
                return null;
            }
        }
        return new Violation(outcome, candidates);
    }

    private boolean allowsAtSomeInstant(long number, Outcome o) {
        return rules(number, o).stream().anyMatch(r -> r.fromMs() <= o.endMs() && r.untilMs() > o.startMs());
    }

    /** True unless the rules' periods together cover the whole of the outcome's time. */
    private boolean refusesAtSomeInstant(long number, Outcome o) {
        List<Rule> rules = new ArrayList<>(rules(number, o));
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

    private List<Rule> rules(long number, Outcome o) {
        Version version = versions.get(number);
        if (version == null) {
            return List.of();
        }
        return version.rules().stream().filter(r -> r.covers(o.principal(), o.operation(), o.resource())).toList();
    }
}
