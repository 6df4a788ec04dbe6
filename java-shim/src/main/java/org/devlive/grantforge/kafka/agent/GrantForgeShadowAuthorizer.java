package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.ResourceType;
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
 * Shadow mode, for moving a live cluster from Kafka's ACLs to GrantForge: this is Kafka's own
 * {@code StandardAuthorizer} (its ACLs in the metadata log, {@code kafka-acls} working as before, its answers returned
 * to clients unchanged), which also asks the GrantForge agent every question Kafka asks and counts where the two
 * answers differ (the metrics {@code shadow-*}, the audit, {@code explain --disagreements}).
 *
 * <p>The agent is asked after Kafka has answered, on the request thread, in one JNI call that takes no lock on the
 * way of an agreement and never waits for the network (the agent answers from the snapshot in force, as the
 * authorizer does). Whatever the agent does (no snapshot yet, an error, a panic, a missing native library after
 * start), Kafka's answers are returned as they are: a failure is counted and logged, never answered.
 *
 * <p>{@link GrantForgeCompareAuthorizer} is the reverse, for after the switch. On Kafka 4.1 and later, name
 * {@code MonitorableGrantForgeShadowAuthorizer} to see the agent's metrics among Kafka's plugin metrics too.
 */
public class GrantForgeShadowAuthorizer extends StandardAuthorizer {
    private static final Logger LOG = LoggerFactory.getLogger(GrantForgeShadowAuthorizer.class);
    /** Kafka's default {@code authorizeByResourceType} asks {@code authorize} about a made-up resource: not compared. */
    private static final ThreadLocal<Boolean> ASKING_BY_RESOURCE_TYPE = new ThreadLocal<Boolean>();

    private final int decider;
    private volatile long handle;
    private long startTimeoutMs;
    private Set<String> superUsers = Collections.emptySet();
    private AgentMetrics metrics;
    private final AtomicLong failures = new AtomicLong();

    public GrantForgeShadowAuthorizer() {
        this(NativeAgent.KAFKA_DECIDES);
    }

    /** @param decider {@link NativeAgent#KAFKA_DECIDES} or {@link NativeAgent#GRANTFORGE_DECIDES} */
    GrantForgeShadowAuthorizer(int decider) {
        this.decider = decider;
    }

    /** The native agent's handle, 0 before {@code configure}. */
    public final long nativeHandle() {
        return handle;
    }

    final boolean grantForgeDecides() {
        return decider == NativeAgent.GRANTFORGE_DECIDES;
    }

    /** Questions the agent could not compare because it failed (not counted by the agent, which failed). */
    final long failures() {
        return failures.get();
    }

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        Object users = configs.get("super.users");
        Set<String> parsed = new HashSet<String>();
        for (String user : users == null ? new String[0] : users.toString().split(";")) {
            if (!user.trim().isEmpty()) {
                parsed.add(user.trim());
            }
        }
        superUsers = Collections.unmodifiableSet(parsed);
        OpenedAgent opened = OpenedAgent.open(configs);
        startTimeoutMs = opened.startTimeoutMs;
        handle = opened.handle;
        LOG.info("GrantForge {} mode: {} decide, the other side is compared", grantForgeDecides() ? "compare" : "shadow",
            grantForgeDecides() ? "GrantForge policies" : "Kafka's ACLs");
    }

    /**
     * Kafka's listeners open as {@code StandardAuthorizer} opens them (once the ACLs are loaded); in compare mode the
     * broker's also wait for the agent's first snapshot, at most {@code grantforge.start.timeout.ms}, as
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
        if (!broker || !grantForgeDecides()) {
            return kafka;
        }
        final CompletableFuture<Void> firstSnapshot = new CompletableFuture<Void>();
        GrantForgeKafkaAuthorizer.awaitFirstSnapshot(handle, startTimeoutMs, firstSnapshot);
        java.util.HashMap<Endpoint, CompletionStage<Void>> both = new java.util.HashMap<Endpoint, CompletionStage<Void>>();
        for (Map.Entry<Endpoint, ? extends CompletionStage<Void>> entry : kafka.entrySet()) {
            boolean opensAtOnce = early.contains(entry.getKey().listenerName().orElse(""));
            both.put(entry.getKey(), opensAtOnce ? entry.getValue()
                : CompletableFuture.allOf(entry.getValue().toCompletableFuture(), firstSnapshot));
        }
        return both;
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext requestContext, List<Action> actions) {
        if (!grantForgeDecides()) {
            List<AuthorizationResult> kafka = super.authorize(requestContext, actions);
            return Boolean.TRUE.equals(ASKING_BY_RESOURCE_TYPE.get()) ? kafka : compared(requestContext, actions, kafka);
        }
        List<AuthorizationResult> enforced;
        try {
            // Kafka's log would report its own answer, which is not enforced here: the enforced one is logged below.
            List<AuthorizationResult> kafka = super.authorize(requestContext, EnforcedAnswerLog.unlogged(actions));
            enforced = compared(requestContext, actions, kafka);
        } catch (RuntimeException notReady) {
            // Kafka's ACLs are not loaded yet (AuthorizerNotReadyException): the agent alone answers.
            enforced = GrantForgeKafkaAuthorizer.authorizeWith(handle, requestContext, actions);
        }
        EnforcedAnswerLog.log(requestContext, actions, enforced);
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
                return failed(actions, kafka);
            }
            if (answer > 1) {
                describeKafkaBasesQuietly(encoder, requestLength, context, actions, kafka);
            }
            return grantForgeDecides() ? grantForgesAnswers(encoder, requestLength, actions.size()) : kafka;
        } catch (Throwable agentFailed) {
            logFailure(agentFailed.toString());
            return failed(actions, kafka);
        } finally {
            if (encoder != null) {
                encoder.afterCall();
            }
        }
    }

    /** The one JNI call of a comparison (a method of its own so that a test can make the agent fail). */
    long nativeCompare(RequestEncoder encoder, int requestLength) {
        return NativeAgent.compare(handle, encoder.address(), encoder.capacity(), requestLength, decider);
    }

    /** The answers when the agent failed: Kafka's in shadow mode, all refused in compare mode (fail closed). */
    private List<AuthorizationResult> failed(List<Action> actions, List<AuthorizationResult> kafka) {
        failures.incrementAndGet();
        return grantForgeDecides() ? allDenied(actions.size()) : kafka;
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
            describeKafkaBases(encoder, requestLength, context, actions, kafka);
        } catch (Throwable e) {
            logFailure("describing the Kafka ACL behind a disagreement: " + e);
        }
    }

    /** Tells the agent the Kafka ACL behind each disagreement it asked about (new ones only: rare). */
    private void describeKafkaBases(RequestEncoder encoder, int requestLength, AuthorizableRequestContext context,
                                    List<Action> actions, List<AuthorizationResult> kafka) {
        for (int i = 0; i < actions.size(); i++) {
            if ((encoder.comparisonFlags(requestLength, actions.size(), i) & RequestEncoder.WANTS_KAFKA_BASIS) != 0) {
                String basis = KafkaAclBasis.of(this, superUsers, context, actions.get(i),
                    kafka.get(i) == AuthorizationResult.ALLOWED);
                NativeAgent.describeKafkaBasis(handle, encoder.address(), encoder.capacity(), requestLength, i, decider,
                    basis.getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private static List<AuthorizationResult> allDenied(int count) {
        return Collections.nCopies(count, AuthorizationResult.DENIED);
    }

    private long lastFailureLog;

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
        LOG.warn("GrantForge {} mode: the agent failed to compare a request ({}); {}", grantForgeDecides() ? "compare"
            : "shadow", what, grantForgeDecides() ? "it was refused" : "Kafka's answer stands");
    }

    /**
     * The idempotent producer's question ("may the principal do this on some resource of the type?"): answered by the
     * decider. Kafka's default implementation asks {@code authorize} about a made-up resource, which is not compared.
     */
    @Override
    public AuthorizationResult authorizeByResourceType(AuthorizableRequestContext requestContext, AclOperation op,
                                                       ResourceType resourceType) {
        if (grantForgeDecides()) {
            GrantForgeKafkaAuthorizer.checkByResourceTypeArguments(op, resourceType);
            return GrantForgeKafkaAuthorizer.authorizeByResourceTypeWith(handle, requestContext, op, resourceType);
        }
        ASKING_BY_RESOURCE_TYPE.set(Boolean.TRUE);
        try {
            return super.authorizeByResourceType(requestContext, op, resourceType);
        } finally {
            ASKING_BY_RESOURCE_TYPE.remove();
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
            if (grantForgeDecides() && binding.entry().permissionType() == AclPermissionType.DENY) {
                LOG.warn("GrantForge compare mode: the DENY ACL {} added by {} is kept and compared, not enforced: "
                    + "GrantForge's policies decide; add the deny to a GrantForge policy to enforce it", binding,
                    requestContext.principal());
            }
        }
        return super.createAcls(requestContext, aclBindings);
    }

    @Override
    public void close() throws IOException {
        OpenedAgent.release(handle, metrics);
        super.close();
    }
}
