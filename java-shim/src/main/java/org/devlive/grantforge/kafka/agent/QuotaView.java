package org.devlive.grantforge.kafka.agent;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the Rust quota table answered, remembered for the request path until the table changes.
 *
 * <p>Kafka asks {@code quotaMetricTags} on every request and {@code quotaLimit} on every consumer
 * fetch, on request, network and controller threads. The first question of a (user, client id) for
 * a quota type crosses into Rust, where the one resolution of the agent lives; every later one is
 * two map look-ups here, allocating nothing. A change of a quota replaces the view ({@link #without}):
 * a new one that keeps only the answers the change cannot have touched (other quota types, and for an
 * entity of one named user the other users' answers), so that Kafka's re-reading of every live group's
 * limit after each change does not cross into Rust for groups it did not touch. A view is never
 * written after it was replaced (a thread that still holds it writes into the old one). Bounded in bytes:
 * at most {@link #MAX_GROUPS} answers per quota type, at most {@link #MAX_PER_USER} of them for one user
 * (client ids are chosen by clients: one principal with many cannot take the room of all others), none
 * for names longer than {@link #MAX_NAME_CHARS} in all, so an answer keeps at most about 1.3 KB (the
 * client id, the tags map, two map entries, the limit) and a quota type at most about 13 MB. Past
 * that, questions cross into Rust every time, which counts them ({@code quota-answers-not-kept}) and
 * logs the first of each fill.
 */
final class QuotaView {
    static final int MAX_GROUPS = 10_000;
    static final int MAX_PER_USER = MAX_GROUPS / 10;
    static final int MAX_NAME_CHARS = 512;

    /** Tags as Kafka's own callback builds them: {@code user} first, then {@code client-id}. */
    static Map<String, String> tags(String userTag, String clientTag) {
        Map<String, String> tags = new LinkedHashMap<>(4);
        tags.put("user", userTag);
        tags.put("client-id", clientTag);
        return Collections.unmodifiableMap(tags);
    }

    /** One quota type's answers. */
    private static final class PerType {
        /** user → client id → tags. */
        final ConcurrentHashMap<String, ConcurrentHashMap<String, Map<String, String>>> groups = new ConcurrentHashMap<>();
        /** tags → limit (NaN: none). */
        final ConcurrentHashMap<Map<String, String>, Double> limits = new ConcurrentHashMap<>();
        final AtomicInteger size = new AtomicInteger();

        /** A copy of the answers of every user but {@code user} (whose answers a change of its entity may alter). */
        PerType without(String user) {
            PerType copy = new PerType();
            for (Map.Entry<String, ConcurrentHashMap<String, Map<String, String>>> ofUser : groups.entrySet()) {
                if (ofUser.getKey().equals(user)) {
                    continue;
                }
                copy.groups.put(ofUser.getKey(), new ConcurrentHashMap<>(ofUser.getValue()));
                for (Map<String, String> tags : ofUser.getValue().values()) {
                    Double limit = limits.get(tags);
                    if (limit != null) {
                        copy.limits.put(tags, limit);
                    }
                }
                copy.size.addAndGet(ofUser.getValue().size());
            }
            return copy;
        }
    }

    private final PerType[] types;

    QuotaView() {
        this(new PerType[] {new PerType(), new PerType(), new PerType(), new PerType()});
    }

    private QuotaView(PerType[] types) {
        this.types = types;
    }

    /**
     * The view after a change of {@code quotaType}'s entity: the other types' answers as they are, and of this type the
     * answers of users other than {@code user} (the entity's named user), or none when the entity names no user (a
     * default or a client id, which any user's answer may depend on).
     */
    QuotaView without(int quotaType, String user) {
        PerType[] next = types.clone();
        next[quotaType] = user == null ? new PerType() : types[quotaType].without(user);
        return new QuotaView(next);
    }

    /** The tags of a connection's group. Never null. */
    Map<String, String> tagsOf(int quotaType, String user, String clientId) {
        PerType type = types[quotaType];
        ConcurrentHashMap<String, Map<String, String>> ofUser = type.groups.get(user);
        Map<String, String> known = ofUser == null ? null : ofUser.get(clientId);
        if (known != null) {
            return known;
        }
        int notKept = user.length() + clientId.length() > MAX_NAME_CHARS ? NativeQuotas.LONG_NAMES
            : type.size.get() >= MAX_GROUPS ? NativeQuotas.TYPE_FULL
            : ofUser != null && ofUser.size() >= MAX_PER_USER ? NativeQuotas.USER_SHARE_FULL
            : NativeQuotas.KEPT;
        byte[] encoded = NativeQuotas.resolve(quotaType, NativeQuotas.utf8(user), NativeQuotas.utf8(clientId), notKept);
        if (encoded == null) {
            return tags("", "");
        }
        NativeQuotas.Resolved resolved = NativeQuotas.decodeResolved(encoded);
        Map<String, String> answer = tags(resolved.userTag, resolved.clientTag);
        Double limit = resolved.limit;
        // Counted only while there is room: a counter bumped on every miss past the bound would wrap. (Two threads
        // may both pass the user's check: its share is a bound give or take the request threads.)
        if (notKept == NativeQuotas.KEPT && type.size.incrementAndGet() <= MAX_GROUPS) {
            type.groups.computeIfAbsent(user, u -> new ConcurrentHashMap<>()).put(clientId, answer);
            type.limits.put(answer, limit);
        }
        return answer;
    }

    /** The limit of the group with these tags, or null for none. */
    Double limitOf(int quotaType, Map<String, String> tags) {
        Double known = types[quotaType].limits.get(tags);
        if (known != null) {
            // The remembered Double itself: no boxing on the fetch path.
            return known.isNaN() ? null : known;
        }
        String user = tags.get("user");
        String client = tags.get("client-id");
        double limit = NativeQuotas.limitOfGroup(quotaType, NativeQuotas.utf8(user), NativeQuotas.utf8(client));
        return Double.isNaN(limit) ? null : limit;
    }
}
