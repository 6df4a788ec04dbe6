package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.NativeLogDrain;
import org.devlive.grantforge.kafka.agent.jni.RequestEncoder;

/**
 * Kafka's own {@code StandardAuthorizer} (its ACLs in the metadata log, {@code kafka-acls} working as before) with the
 * GrantForge agent beside it, one class for the three ways of moving a cluster from ACLs to policies, told apart by
 * {@link Mode}: who decides, and what the other side is for.
 *
 * <ul>
 * <li>{@link Mode#SHADOW} ({@link GrantForgeShadowAuthorizer}): Kafka's ACLs decide; the agent answers every question
 * beside them, and where the answers differ it counts and keeps the disagreement (metrics {@code shadow-*}, the audit,
 * {@code explain --disagreements}). Whatever the agent does, Kafka's answers stand.</li>
 * <li>{@link Mode#COMPARE} ({@link GrantForgeCompareAuthorizer}): the agent decides, Kafka's ACLs are asked beside it
 * and compared the same way; Kafka's authorizer log tells the enforced answers.</li>
 * <li>{@link Mode#HYBRID} ({@link GrantForgeHybridAuthorizer}): a GrantForge allow or deny is final, and what no
 * policy decides Kafka's ACLs answer, audited as enforced {@code NATIVE} with the ACL behind the answer.</li>
 * </ul>
 *
 * <p>The agent is reached in one JNI call per request that never waits for the network (and, in hybrid mode, a second
 * one only when its ACLs answered something). Wherever GrantForge decides, a failure of the agent (no snapshot, an
 * error, any {@code Throwable} on the way) refuses, fail closed; a broker's client listeners open once Kafka's ACLs are
 * loaded and, there, the agent's first snapshot is in force, at most {@code grantforge.start.timeout.ms}.
 */
public abstract class ComparingAuthorizer extends StandardAuthorizer {
    private static final Logger LOG = LoggerFactory.getLogger(ComparingAuthorizer.class);
    /** Kafka's default {@code authorizeByResourceType} asks {@code authorize} about a made-up resource: Kafka answers. */
    private static final ThreadLocal<Boolean> ASKING_BY_RESOURCE_TYPE = new ThreadLocal<Boolean>();
    /**
     * Threads inside {@code authorizeByResourceType} now (rare: idempotent producers' first request): while none is,
     * {@code authorize} need not look up the thread-local above, a map lookup per request on every request thread.
     */
    private static final AtomicInteger ASKING_BY_RESOURCE_TYPE_NOW = new AtomicInteger();

    /** Who decides, and what the other side is for. */
    public enum Mode {
        SHADOW("shadow", "Kafka's ACLs decide, GrantForge is compared"),
        COMPARE("compare", "GrantForge policies decide, Kafka's ACLs are compared"),
        HYBRID("hybrid", "GrantForge policies decide where one does, Kafka's ACLs answer the rest");

        private final String words;
        private final String whoDecides;

        Mode(String words, String whoDecides) {
            this.words = words;
            this.whoDecides = whoDecides;
        }

        /** Whether a GrantForge answer is enforced: then a failing agent refuses, and listeners await its snapshot. */
        boolean grantForgeDecides() {
            return this != SHADOW;
        }

        /** The decider code of {@link NativeAgent#compare}. */
        int decider() {
            return this == SHADOW ? NativeAgent.KAFKA_DECIDES : NativeAgent.GRANTFORGE_DECIDES;
        }
    }

    private final Mode mode;
    private OpenedAgent agent;
    private volatile long handle;
    private final KafkaAclBases bases = new KafkaAclBases();
    private final AtomicLong failures = new AtomicLong();
    private long lastFailureLog;

    ComparingAuthorizer(Mode mode) {
        this.mode = mode;
    }

    /** The native agent's handle, 0 before {@code configure}. */
    public final long nativeHandle() {
        return handle;
    }

    final Mode mode() {
        return mode;
    }

    /** Requests the agent could not answer because it failed (not counted by the agent, which failed). */
    final long failures() {
        return failures.get();
    }

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        agent = OpenedAgent.open(configs);
        handle = agent.handle;
        LOG.info("GrantForge {} mode: {}", mode.words, mode.whoDecides);
    }

    @Override
    public Map<Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        return agent.start(serverInfo, super.start(serverInfo), mode.grantForgeDecides());
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext requestContext, List<Action> actions) {
        if (ASKING_BY_RESOURCE_TYPE_NOW.get() != 0 && Boolean.TRUE.equals(ASKING_BY_RESOURCE_TYPE.get())) {
            return super.authorize(requestContext, actions);
        }
        switch (mode) {
            case SHADOW:
                return compared(requestContext, actions, super.authorize(requestContext, actions));
            case COMPARE:
                return enforcedByComparison(requestContext, actions);
            default:
                return hybrid(requestContext, actions);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // shadow and compare modes

    private List<AuthorizationResult> enforcedByComparison(AuthorizableRequestContext context, List<Action> actions) {
        List<AuthorizationResult> enforced;
        try {
            // Kafka's log would report its own answer, which is not enforced here: the enforced one is logged below.
            enforced = compared(context, actions, super.authorize(context, EnforcedAnswerLog.unlogged(actions)));
        } catch (RuntimeException notReady) {
            // Kafka's ACLs are not loaded yet (AuthorizerNotReadyException): the agent alone answers.
            enforced = GrantForgeKafkaAuthorizer.authorizeWith(handle, context, actions);
        }
        EnforcedAnswerLog.log(context, actions, enforced);
        return enforced;
    }

    /**
     * Kafka's answers, or in compare mode the agent's, once the agent has compared them. Whatever the agent throws, an
     * {@code Error} too (direct memory exhausted, a stack overflow in the library's loading), is a failure of the
     * agent, not an answer: Kafka's answers stand in shadow mode, and compare mode refuses.
     */
    private List<AuthorizationResult> compared(AuthorizableRequestContext context, List<Action> actions,
                                               List<AuthorizationResult> kafka) {
        RequestEncoder encoder = null;
        try {
            encoder = RequestEncoder.forThisThread();
            int requestLength = encoder.encodeComparison(context, actions, kafka);
            long answer = nativeCompare(encoder, requestLength);
            if (answer == 0) {
                return failed(actions, kafka, "the agent failed to compare a request");
            }
            if (answer > 1) {
                describeKafkaBasesQuietly(encoder, requestLength, context, actions, kafka);
            }
            return mode.grantForgeDecides() ? grantForgesAnswers(encoder, requestLength, actions.size()) : kafka;
        } catch (Throwable agentFailed) {
            return failed(actions, kafka, "the agent failed to compare a request (" + agentFailed + ")");
        } finally {
            if (encoder != null) {
                encoder.afterCall();
            }
        }
    }

    /** The one JNI call of a comparison (a method of its own so that a test can make the agent fail). */
    long nativeCompare(RequestEncoder encoder, int requestLength) {
        return NativeAgent.compare(handle, encoder.address(), encoder.capacity(), requestLength, mode.decider());
    }

    private static List<AuthorizationResult> grantForgesAnswers(RequestEncoder encoder, int requestLength, int count) {
        List<AuthorizationResult> results = new ArrayList<AuthorizationResult>(count);
        for (int i = 0; i < count; i++) {
            boolean allowed = (encoder.comparisonFlags(requestLength, count, i) & RequestEncoder.GRANTFORGE_ALLOWS) != 0;
            results.add(allowed ? AuthorizationResult.ALLOWED : AuthorizationResult.DENIED);
        }
        return results;
    }

    /** Only words for the disagreements' audit: the answers are settled, and a failure here must not change them. */
    private void describeKafkaBasesQuietly(RequestEncoder encoder, int requestLength, AuthorizableRequestContext context,
                                           List<Action> actions, List<AuthorizationResult> kafka) {
        try {
            for (int i = 0; i < actions.size(); i++) {
                if ((encoder.comparisonFlags(requestLength, actions.size(), i) & RequestEncoder.WANTS_KAFKA_BASIS) != 0) {
                    String basis = bases.of(this, context, actions.get(i), kafka.get(i) == AuthorizationResult.ALLOWED);
                    NativeAgent.describeKafkaBasis(handle, encoder.address(), encoder.capacity(), requestLength, i,
                        mode.decider(), basis.getBytes(StandardCharsets.UTF_8));
                }
            }
        } catch (Throwable e) {
            logFailure("describing the Kafka ACL behind a disagreement failed (" + e + ")");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // hybrid mode

    private List<AuthorizationResult> hybrid(AuthorizableRequestContext context, List<Action> actions) {
        RequestEncoder encoder = null;
        try {
            encoder = RequestEncoder.forThisThread();
            int requestLength = encoder.encodeHybrid(context, actions);
            long answer = nativeHybrid(encoder, requestLength);
            if (answer <= 0) {
                return failed(actions, null, "the agent failed to answer a request");
            }
            if (answer == 1 && actions.size() == 1) {
                // The common call, one action a policy decided: no list made for it.
                return encoder.hybridVerdict(requestLength, 0) == RequestEncoder.VERDICT_ALLOWED
                    ? GrantForgeKafkaAuthorizer.ONLY_ALLOWED : GrantForgeKafkaAuthorizer.ONLY_DENIED;
            }
            AuthorizationResult[] results = new AuthorizationResult[actions.size()];
            for (int i = 0; i < results.length; i++) {
                int verdict = encoder.hybridVerdict(requestLength, i);
                results[i] = verdict == RequestEncoder.VERDICT_ALLOWED ? AuthorizationResult.ALLOWED
                    : verdict == RequestEncoder.VERDICT_LEFT_TO_KAFKA ? null : AuthorizationResult.DENIED;
            }
            if (answer > 1) {
                askKafka(encoder, requestLength, context, actions, results);
            }
            return Arrays.asList(results);
        } catch (Throwable agentFailed) {
            return failed(actions, null, "the agent failed to answer a request (" + agentFailed + ")");
        } finally {
            if (encoder != null) {
                encoder.afterCall();
            }
        }
    }

    /** Hybrid mode's first JNI call of a request (a method of its own so that a test can make the agent fail). */
    long nativeHybrid(RequestEncoder encoder, int requestLength) {
        return NativeAgent.hybrid(handle, encoder.address(), encoder.capacity(), requestLength);
    }

    /**
     * Kafka's answers to the actions the agent left to its ACLs (the {@code null}s of {@code results}), one call of
     * {@code StandardAuthorizer} for them all; then the answers and the ACL behind each go to the agent's audit. While
     * Kafka's ACLs are not loaded they are refused.
     */
    private void askKafka(RequestEncoder encoder, int requestLength, AuthorizableRequestContext context,
                          List<Action> actions, AuthorizationResult[] results) {
        List<Action> left = new ArrayList<Action>();
        for (int i = 0; i < results.length; i++) {
            if (results[i] == null) {
                left.add(actions.get(i));
            }
        }
        List<AuthorizationResult> kafka;
        try {
            kafka = super.authorize(context, left);
        } catch (RuntimeException notReady) {
            // AuthorizerNotReadyException: Kafka's ACLs are not loaded yet, and nothing may stand in for them.
            kafka = Collections.nCopies(left.size(), AuthorizationResult.DENIED);
        }
        boolean[] allowed = new boolean[results.length];
        String[] acls = new String[results.length];
        int next = 0;
        for (int i = 0; i < results.length; i++) {
            if (results[i] == null) {
                results[i] = kafka.get(next++);
                allowed[i] = results[i] == AuthorizationResult.ALLOWED;
                Action action = actions.get(i);
                if (LOG.isDebugEnabled()) {
                    LOG.debug("GrantForge hybrid mode: no policy decides {} {} on {} (request type {}): Kafka's ACLs {}",
                        context.principal(), action.operation(), action.resourcePattern(), context.requestType(),
                        allowed[i] ? "allow" : "refuse");
                }
                boolean reported = allowed[i] ? action.logIfAllowed() : action.logIfDenied();
                acls[i] = reported ? bases.of(this, context, action, allowed[i]) : "";
            }
        }
        try {
            int tailLength = encoder.putAclAnswers(requestLength, results.length, allowed, acls);
            NativeAgent.settleByAcls(handle, encoder.address(), encoder.capacity(), requestLength, tailLength);
        } catch (Throwable e) {
            // Only the audit of Kafka's answers failed: the answers stand.
            logFailure("the agent failed to audit Kafka's answers (" + e + ")");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // every mode

    /**
     * The answers when the agent failed: Kafka's where Kafka decides (shadow mode), all refused where GrantForge does
     * (fail closed).
     */
    private List<AuthorizationResult> failed(List<Action> actions, List<AuthorizationResult> kafka, String what) {
        failures.incrementAndGet();
        logFailure(what + "; " + (mode.grantForgeDecides() ? "it was refused" : "Kafka's answer stands"));
        return mode.grantForgeDecides() ? Collections.nCopies(actions.size(), AuthorizationResult.DENIED) : kafka;
    }

    /** At most one WARN a minute: a failing agent must not flood the broker's log. */
    private void logFailure(String what) {
        long now = System.nanoTime();
        synchronized (failures) {
            if (lastFailureLog != 0 && now - lastFailureLog < 60_000_000_000L) {
                return;
            }
            lastFailureLog = now;
        }
        NativeLogDrain.drainNow();
        LOG.warn("GrantForge {} mode: {}", mode.words, what);
    }

    /**
     * The idempotent producer's question ("may the principal do this on some resource of the type?"). Shadow mode:
     * Kafka's ACLs; compare mode: the agent; hybrid mode: allowed where the policies allow it on some resource, or else
     * where Kafka's ACLs do. Kafka's default asks {@code authorize} about a made-up resource, which Kafka answers alone
     * and which is never compared.
     */
    @Override
    public AuthorizationResult authorizeByResourceType(AuthorizableRequestContext requestContext, AclOperation op,
                                                       ResourceType resourceType) {
        if (mode != Mode.SHADOW) {
            GrantForgeKafkaAuthorizer.checkByResourceTypeArguments(op, resourceType);
            AuthorizationResult agents = GrantForgeKafkaAuthorizer.authorizeByResourceTypeWith(handle, requestContext, op,
                resourceType);
            if (mode == Mode.COMPARE || agents == AuthorizationResult.ALLOWED) {
                return agents;
            }
        }
        ASKING_BY_RESOURCE_TYPE_NOW.incrementAndGet();
        ASKING_BY_RESOURCE_TYPE.set(Boolean.TRUE);
        try {
            return super.authorizeByResourceType(requestContext, op, resourceType);
        } finally {
            ASKING_BY_RESOURCE_TYPE.remove();
            ASKING_BY_RESOURCE_TYPE_NOW.decrementAndGet();
        }
    }

    /**
     * Kafka keeps the ACLs as ever (the last step of the migration removes them); in compare mode a DENY among them
     * decides nothing, which its author may not expect: said at WARN, naming what to do instead.
     */
    @Override
    public List<? extends CompletionStage<AclCreateResult>> createAcls(AuthorizableRequestContext requestContext,
                                                                      List<AclBinding> aclBindings) {
        for (AclBinding binding : aclBindings) {
            if (mode == Mode.COMPARE && binding.entry().permissionType() == AclPermissionType.DENY) {
                LOG.warn("GrantForge compare mode: the DENY ACL {} added by {} is kept and compared, not enforced: "
                    + "GrantForge's policies decide; add the deny to a GrantForge policy to enforce it", binding,
                    requestContext.principal());
            }
        }
        return super.createAcls(requestContext, aclBindings);
    }

    @Override
    public void addAcl(Uuid id, StandardAcl acl) {
        super.addAcl(id, acl);
        bases.clear();
    }

    @Override
    public void removeAcl(Uuid id) {
        super.removeAcl(id);
        bases.clear();
    }

    @Override
    public void loadSnapshot(Map<Uuid, StandardAcl> acls) {
        super.loadSnapshot(acls);
        bases.clear();
    }

    @Override
    public void close() throws IOException {
        if (agent != null) {
            agent.close();
        }
        super.close();
    }
}
