package org.devlive.grantforge.kafka.agent;

import java.net.InetAddress;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.Authorizer;

/**
 * The Kafka ACL behind each of Kafka's answers the audit reports (a disagreement's, or hybrid mode's where no policy
 * decides; {@link KafkaAclBasis}), kept until Kafka's ACLs change: working it out lists the ACLs of the resource,
 * which must not happen on every access. At most {@link #KEPT} answers are kept, past that the table starts afresh,
 * and an answer whose names and words are longer than {@link #LONGEST_KEPT} characters is worked out each time: a
 * client naming huge resources cannot grow the table past about {@code KEPT * LONGEST_KEPT} characters.
 *
 * <p>The question is looked up by the request's own objects (principal, address, resource pattern, operation), which
 * Kafka's classes compare by value: no text is built per access, only a small key that the JIT may keep off the heap.
 */
final class KafkaAclBases {
    static final int KEPT = 4096;
    static final int LONGEST_KEPT = 1024;

    private final Map<Question, String> kept = new ConcurrentHashMap<Question, String>();

    /** Why Kafka answered {@code allowed}, in words. */
    String of(Authorizer kafka, AuthorizableRequestContext context, Action action, boolean allowed) {
        Question question = new Question(context.principal(), context.clientAddress(), action.resourcePattern(),
            action.operation(), allowed);
        String basis = kept.get(question);
        if (basis == null) {
            basis = KafkaAclBasis.of(kafka, context, action, allowed);
            if (question.length() + basis.length() <= LONGEST_KEPT) {
                if (kept.size() >= KEPT) {
                    kept.clear();
                }
                kept.put(question, basis);
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

    /** What a basis depends on: who asked, from where, about what, and Kafka's answer. */
    private static final class Question {
        private final KafkaPrincipal principal;
        private final InetAddress address;
        private final ResourcePattern pattern;
        private final AclOperation operation;
        private final boolean allowed;
        private final int hash;

        Question(KafkaPrincipal principal, InetAddress address, ResourcePattern pattern, AclOperation operation,
                 boolean allowed) {
            this.principal = principal;
            this.address = address;
            this.pattern = pattern;
            this.operation = operation;
            this.allowed = allowed;
            int h = Objects.hashCode(principal);
            h = 31 * h + Objects.hashCode(address);
            h = 31 * h + Objects.hashCode(pattern);
            h = 31 * h + Objects.hashCode(operation);
            this.hash = 31 * h + (allowed ? 1 : 0);
        }

        /** The characters the question keeps alive: the names a client chose. */
        int length() {
            return (principal == null ? 0 : principal.getPrincipalType().length() + principal.getName().length())
                + (pattern == null || pattern.name() == null ? 0 : pattern.name().length());
        }

        @Override
        public boolean equals(Object other) {
            if (!(other instanceof Question)) {
                return false;
            }
            Question that = (Question) other;
            return allowed == that.allowed && operation == that.operation && Objects.equals(pattern, that.pattern)
                && Objects.equals(principal, that.principal) && Objects.equals(address, that.address);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
