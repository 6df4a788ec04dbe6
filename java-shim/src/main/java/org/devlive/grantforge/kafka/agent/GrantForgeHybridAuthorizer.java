package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
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
 * Hybrid mode, for moving a cluster from Kafka's ACLs to GrantForge team by team: a GrantForge allow or deny is final,
 * and a question no GrantForge policy decides is answered by Kafka's own {@code StandardAuthorizer} (its ACLs in the
 * metadata log, {@code kafka-acls} working as before). {@code grantforge.hybrid.resource.prefixes} limits the
 * policies to the resources whose names begin with one of its prefixes; the others' questions go to the ACLs alone.
 * Each question the ACLs answer is audited as enforced {@code NATIVE} with the ACL behind the answer, and counted in
 * the metric {@code hybrid-acl-decisions}: when it stops growing, the ACLs can go and the cluster can name
 * {@link GrantForgeKafkaAuthorizer}.
 *
 * <p>Fail closed: with no snapshot, an error or a panic in the agent, every question but the super users' is
 * refused (a GrantForge deny may be the answer the agent could not give); while Kafka's ACLs are not loaded, the
 * questions left to them are refused. On Kafka 4.1 and later, name {@code MonitorableGrantForgeHybridAuthorizer} to
 * see the agent's metrics among Kafka's plugin metrics too.
 */
public class GrantForgeHybridAuthorizer extends StandardAuthorizer {
    private static final Logger LOG = LoggerFactory.getLogger(GrantForgeHybridAuthorizer.class);
    /** Kafka's default {@code authorizeByResourceType} asks {@code authorize} about a made-up resource: Kafka answers. */
    private static final ThreadLocal<Boolean> ASKING_BY_RESOURCE_TYPE = new ThreadLocal<Boolean>();

    private volatile long handle;
    private long startTimeoutMs;
    private AgentMetrics metrics;
    private final KafkaAclBases bases = new KafkaAclBases();
    private final FailureLog failures = new FailureLog(LOG, "GrantForge hybrid mode");

    /** The native agent's handle, 0 before {@code configure}. */
    public final long nativeHandle() {
        return handle;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        bases.configure(configs);
        OpenedAgent opened = OpenedAgent.open(configs);
        startTimeoutMs = opened.startTimeoutMs;
        handle = opened.handle;
        LOG.info("GrantForge hybrid mode: GrantForge policies decide where one does, Kafka's ACLs answer the rest");
    }

    /**
     * Kafka's listeners open as {@code StandardAuthorizer} opens them (once the ACLs are loaded), and the broker's also
     * wait for the agent's first snapshot, at most {@code grantforge.start.timeout.ms}, as
     * {@link GrantForgeKafkaAuthorizer} does.
     */
    @Override
    public Map<Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        Map<Endpoint, ? extends CompletionStage<Void>> kafka = super.start(serverInfo);
        Collection<String> early = serverInfo.earlyStartListeners();
        boolean broker = false;
        for (Endpoint endpoint : serverInfo.endpoints()) {
            broker |= !early.contains(endpoint.listenerName().orElse(""));
        }
        metrics = AgentMetrics.register(handle, broker ? "broker" : "controller");
        if (!broker) {
            return kafka;
        }
        final CompletableFuture<Void> firstSnapshot = new CompletableFuture<Void>();
        GrantForgeKafkaAuthorizer.awaitFirstSnapshot(handle, startTimeoutMs, firstSnapshot);
        Map<Endpoint, CompletionStage<Void>> both = new HashMap<Endpoint, CompletionStage<Void>>();
        for (Map.Entry<Endpoint, ? extends CompletionStage<Void>> entry : kafka.entrySet()) {
            boolean opensAtOnce = early.contains(entry.getKey().listenerName().orElse(""));
            both.put(entry.getKey(), opensAtOnce ? entry.getValue()
                : CompletableFuture.allOf(entry.getValue().toCompletableFuture(), firstSnapshot));
        }
        return both;
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext requestContext, List<Action> actions) {
        if (Boolean.TRUE.equals(ASKING_BY_RESOURCE_TYPE.get())) {
            return super.authorize(requestContext, actions);
        }
        RequestEncoder encoder = null;
        try {
            encoder = RequestEncoder.forThisThread();
            int requestLength = encoder.encodeHybrid(requestContext, actions);
            long answer = nativeHybrid(encoder, requestLength);
            if (answer <= 0) {
                failures.log("the agent failed to answer a request; it was refused");
                return Collections.nCopies(actions.size(), AuthorizationResult.DENIED);
            }
            AuthorizationResult[] results = new AuthorizationResult[actions.size()];
            for (int i = 0; i < results.length; i++) {
                int verdict = encoder.hybridVerdict(requestLength, i);
                results[i] = verdict == RequestEncoder.VERDICT_ALLOWED ? AuthorizationResult.ALLOWED
                    : verdict == RequestEncoder.VERDICT_LEFT_TO_KAFKA ? null : AuthorizationResult.DENIED;
            }
            if (answer > 1) {
                askKafka(encoder, requestLength, requestContext, actions, results);
            }
            return java.util.Arrays.asList(results);
        } catch (Throwable agentFailed) {
            failures.log("the agent failed to answer a request (" + agentFailed + "); it was refused");
            return Collections.nCopies(actions.size(), AuthorizationResult.DENIED);
        } finally {
            if (encoder != null) {
                encoder.afterCall();
            }
        }
    }

    /** The first JNI call of a request (a method of its own so that a test can make the agent fail). */
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
            failures.log("the agent failed to audit Kafka's answers (" + e + ")");
        }
    }

    /**
     * The idempotent producer's question ("may the principal do this on some resource of the type?"): allowed when
     * GrantForge's policies allow it on some resource, or else Kafka's ACLs do. Kafka's default asks
     * {@code authorize} about a made-up resource, which goes to Kafka's ACLs alone.
     */
    @Override
    public AuthorizationResult authorizeByResourceType(AuthorizableRequestContext requestContext, AclOperation op,
                                                       ResourceType resourceType) {
        GrantForgeKafkaAuthorizer.checkByResourceTypeArguments(op, resourceType);
        if (GrantForgeKafkaAuthorizer.authorizeByResourceTypeWith(handle, requestContext, op, resourceType)
            == AuthorizationResult.ALLOWED) {
            return AuthorizationResult.ALLOWED;
        }
        ASKING_BY_RESOURCE_TYPE.set(Boolean.TRUE);
        try {
            return super.authorizeByResourceType(requestContext, op, resourceType);
        } finally {
            ASKING_BY_RESOURCE_TYPE.remove();
        }
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
        OpenedAgent.release(handle, metrics);
        super.close();
    }

    /** At most one WARN a minute: a failing agent must not flood the broker's log. */
    static final class FailureLog {
        private final Logger log;
        private final String mode;
        private long last;

        FailureLog(Logger log, String mode) {
            this.log = log;
            this.mode = mode;
        }

        void log(String what) {
            long now = System.nanoTime();
            synchronized (this) {
                if (last != 0 && now - last < 60_000_000_000L) {
                    return;
                }
                last = now;
            }
            NativeLogDrain.drainNow();
            log.warn("{}: {}", mode, what);
        }
    }
}
