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
 * two map look-ups here, allocating nothing. A change of any quota replaces the view with an empty
 * one (the answers of one view all come from one state of the table). The view is bounded in bytes:
 * at most {@link #MAX_GROUPS} answers per quota type, none for names longer than
 * {@link #MAX_NAME_CHARS} in all (client ids are chosen by clients), so an answer keeps at most about
 * 1.3 KB (the client id, the tags map, two map entries, the limit) and a quota type at most about
 * 13 MB; past that, questions cross into Rust every time.
 */
final class QuotaView {
    static final int MAX_GROUPS = 10_000;
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
    }

    private final PerType[] types = {new PerType(), new PerType(), new PerType(), new PerType()};

    /** The tags of a connection's group. Never null. */
    Map<String, String> tagsOf(int quotaType, String user, String clientId) {
        PerType type = types[quotaType];
        ConcurrentHashMap<String, Map<String, String>> ofUser = type.groups.get(user);
        Map<String, String> known = ofUser == null ? null : ofUser.get(clientId);
        if (known != null) {
            return known;
        }
        byte[] encoded = NativeQuotas.resolve(quotaType, NativeQuotas.utf8(user), NativeQuotas.utf8(clientId));
        if (encoded == null) {
            return tags("", "");
        }
        NativeQuotas.Resolved resolved = NativeQuotas.decodeResolved(encoded);
        Map<String, String> answer = tags(resolved.userTag, resolved.clientTag);
        Double limit = resolved.limit;
        // Counted only while there is room: a counter bumped on every miss past the bound would wrap.
        if (user.length() + clientId.length() <= MAX_NAME_CHARS && type.size.get() < MAX_GROUPS
                && type.size.incrementAndGet() <= MAX_GROUPS) {
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
