package org.devlive.grantforge.kafka.agent;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.devlive.grantforge.kafka.agent.jni.NativeQuotas;

/**
 * What the Rust quota table answered, remembered for the request path until a change touches it.
 *
 * <p>Kafka asks {@code quotaMetricTags} on every request and {@code quotaLimit} on every consumer
 * fetch, on request, network and controller threads. The first question of a (user, client id) for
 * a quota type crosses into Rust, where the one resolution of the agent lives; every later one is
 * two map look-ups here, allocating nothing.
 *
 * <p>A change forgets only the answers it can have touched: for an entity of one named user, that
 * user's answers of that quota type ({@link #forgetUser}); for a default or client-id entity, which
 * any user's answer may depend on, all answers of that type ({@link #forgetType}). After each change
 * Kafka re-reads the limit of every live group of the type, and those reads stay in Java. An answer
 * resolved while a change of its type was being applied may be of the table before the change: its
 * writer sees the type's version move and takes it back out, so no such answer outlives the change.
 *
 * <p>Bounded in bytes: at most {@link #MAX_GROUPS} answers per quota type, at most
 * {@link #MAX_PER_USER} of them for one user (client ids are chosen by clients: one principal with
 * many cannot take the room of all others), none for names longer than {@link #MAX_NAME_CHARS} in
 * all, so an answer keeps at most about 1.3 KB (the client id, the tags map, two map entries, the
 * limit) and a quota type at most about 13 MB. Past that, questions cross into Rust every time,
 * which counts them ({@code quota-answers-not-kept}) and logs the first of each fill.
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
        /** Answers kept: each put is matched by exactly one successful remove, or stays. */
        final AtomicInteger size = new AtomicInteger();
        /** Moves before a change's answers are forgotten. */
        final AtomicLong version = new AtomicLong();

        /**
         * Takes one answer out, if it is still in (whoever removes it counts it). The limit of the group of no quota
         * (empty tags, shared by every unthrottled connection: none, whatever changes) stays.
         */
        void remove(ConcurrentHashMap<String, Map<String, String>> ofUser, String clientId, Map<String, String> tags) {
            if (ofUser.remove(clientId, tags)) {
                size.decrementAndGet();
            }
            if (!tags.get("user").isEmpty()) {
                limits.remove(tags);
            }
        }
    }

    private final AtomicReferenceArray<PerType> types = new AtomicReferenceArray<>(
        new PerType[] {new PerType(), new PerType(), new PerType(), new PerType()});

    /** The tags of a connection's group. Never null. */
    Map<String, String> tagsOf(int quotaType, String user, String clientId) {
        PerType type = types.get(quotaType);
        ConcurrentHashMap<String, Map<String, String>> ofUser = type.groups.get(user);
        Map<String, String> known = ofUser == null ? null : ofUser.get(clientId);
        if (known != null) {
            return known;
        }
        long version = type.version.get();
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
        // Counted only while there is room: a counter bumped on every miss past the bound would wrap. (Two threads
        // may both pass the user's check: its share is a bound give or take the request threads.)
        if (notKept == NativeQuotas.KEPT && type.size.incrementAndGet() <= MAX_GROUPS) {
            ConcurrentHashMap<String, Map<String, String>> kept = type.groups.computeIfAbsent(user, u -> new ConcurrentHashMap<>());
            if (kept.putIfAbsent(clientId, answer) != null) {
                type.size.decrementAndGet();
                return answer;
            }
            type.limits.put(answer, resolved.limit);
            if (type.version.get() != version) {
                // A change came while this was resolved: the answer may be of the table before it.
                type.remove(kept, clientId, answer);
            }
        } else if (notKept == NativeQuotas.KEPT) {
            type.size.decrementAndGet();
        }
        return answer;
    }

    /** The limit of the group with these tags, or null for none. */
    Double limitOf(int quotaType, Map<String, String> tags) {
        Double known = types.get(quotaType).limits.get(tags);
        if (known != null) {
            // The remembered Double itself: no boxing on the fetch path.
            return known.isNaN() ? null : known;
        }
        String user = tags.get("user");
        String client = tags.get("client-id");
        double limit = NativeQuotas.limitOfGroup(quotaType, NativeQuotas.utf8(user), NativeQuotas.utf8(client));
        return Double.isNaN(limit) ? null : limit;
    }

    /** After a change of an entity of {@code user}: that user's answers of the type are asked anew. */
    void forgetUser(int quotaType, String user) {
        PerType type = types.get(quotaType);
        type.version.incrementAndGet();
        ConcurrentHashMap<String, Map<String, String>> ofUser = type.groups.remove(user);
        if (ofUser != null) {
            for (Map.Entry<String, Map<String, String>> answer : ofUser.entrySet()) {
                type.remove(ofUser, answer.getKey(), answer.getValue());
            }
        }
    }

    /** After a change of a default or client-id entity: every answer of the type is asked anew. */
    void forgetType(int quotaType) {
        types.get(quotaType).version.incrementAndGet();
        types.set(quotaType, new PerType());
    }
}
