package org.devlive.grantforge.kafka.agent;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.Authorizer;

/**
 * The Kafka ACL behind each of Kafka's answers the audit reports (a disagreement's, or hybrid mode's where no policy
 * decides; {@link KafkaAclBasis}), kept until Kafka's ACLs change: working it out lists the ACLs of the resource,
 * which must not happen on every access. At most {@link #KEPT} answers are kept, past that the table starts afresh,
 * and an answer whose question and words are longer than {@link #LONGEST_KEPT} characters is worked out each time:
 * a client naming huge resources cannot grow the table past about {@code KEPT * LONGEST_KEPT} characters.
 */
final class KafkaAclBases {
    static final int KEPT = 4096;
    static final int LONGEST_KEPT = 1024;

    private final Map<String, String> kept = new ConcurrentHashMap<String, String>();

    /** Why Kafka answered {@code allowed}, in words. */
    String of(Authorizer kafka, AuthorizableRequestContext context, Action action, boolean allowed) {
        String key = context.principal() + "\u0000" + context.clientAddress() + "\u0000"
            + action.resourcePattern() + "\u0000" + action.operation() + "\u0000" + allowed;
        String basis = kept.get(key);
        if (basis == null) {
            basis = KafkaAclBasis.of(kafka, context, action, allowed);
            if (key.length() + basis.length() <= LONGEST_KEPT) {
                if (kept.size() >= KEPT) {
                    kept.clear();
                }
                kept.put(key, basis);
            }
        }
        return basis;
    }

    /** Answers kept now. */
    int size() {
        return kept.size();
    }

    /** Kafka's ACLs changed: every kept answer may be stale. */
    void clear() {
        kept.clear();
    }
}
