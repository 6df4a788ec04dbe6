package org.devlive.grantforge.kafka.agent;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.RequestEncoder;

/**
 * Kafka's {@link Authorizer} answered from GrantForge policies. This class only adapts Kafka's API:
 * every decision, the snapshot, the ACL view and the agent's lifecycle live in the native library,
 * reached through {@link NativeAgent} with one JNI call per Kafka call. A node that is broker and
 * controller creates two instances; they share one native agent.
 */
public class GrantForgeKafkaAuthorizer implements Authorizer {
    /**
     * The answers to a one-action call, shared: Kafka only reads the list (its own AclAuthorizer returned
     * unmodifiable lists), and most calls ask about one action.
     */
    static final List<AuthorizationResult> ONLY_ALLOWED = Collections.singletonList(AuthorizationResult.ALLOWED);
    static final List<AuthorizationResult> ONLY_DENIED = Collections.singletonList(AuthorizationResult.DENIED);

    private volatile long handle;

    /** The native agent's handle, 0 before {@code configure}: for {@code MonitorableGrantForgeKafkaAuthorizer} and the JAR's tools. */
    public final long nativeHandle() {
        return handle;
    }
    private OpenedAgent agent;
    private AclView aclView;

    /** {@code grantforge.start.timeout.ms} as the native agent parsed and validated it (the only place that does). */
    final long startTimeoutMs() {
        return agent.startTimeoutMs;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        OpenedAgent opened = OpenedAgent.open(configs);
        try {
            agent = opened;
            aclView = new AclView(opened.handle);
            handle = opened.handle;
        } catch (RuntimeException | Error e) {
            // Whatever fails once the native agent is open gives it back: no agent outlives a failed configure.
            handle = 0L;
            agent = null;
            aclView = null;
            opened.close();
            throw e;
        }
    }

    /**
     * The controllers' listeners (early start) open at once; the others once the first snapshot is
     * in force or {@code grantforge.start.timeout.ms} has passed ({@link OpenedAgent#start}).
     */
    @Override
    public Map<Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
        return agent.start(serverInfo, Collections.<Endpoint, CompletionStage<Void>>emptyMap(), true);
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext requestContext, List<Action> actions) {
        return authorizeWith(handle, requestContext, actions);
    }

    /** The native agent's answers (one JNI call): every action refused if it fails. */
    static List<AuthorizationResult> authorizeWith(long handle, AuthorizableRequestContext requestContext,
                                                   List<Action> actions) {
        int count = actions.size();
        RequestEncoder encoder = RequestEncoder.forThisThread();
        int length = encoder.encodeAuthorize(requestContext, actions);
        long answer = NativeAgent.authorize(handle, encoder.address(), encoder.capacity(), length);
        if (count == 1) {
            encoder.afterCall();
            return answer >= 0 && (answer & 1L) == 1L ? ONLY_ALLOWED : ONLY_DENIED;
        }
        List<AuthorizationResult> results = new ArrayList<AuthorizationResult>(count);
        for (int i = 0; i < count; i++) {
            boolean allowed = answer == NativeAgent.RESULTS_IN_BUFFER
                ? encoder.allowedInBuffer(i)
                : i < NativeAgent.ACTIONS_IN_A_MASK && (answer >= 0) && ((answer >>> i) & 1L) == 1L;
            results.add(allowed ? AuthorizationResult.ALLOWED : AuthorizationResult.DENIED);
        }
        encoder.afterCall();
        return results;
    }

    /**
     * Whether the principal may perform {@code op} on some resource of the type (asked for
     * idempotent producers): answered from the policies' index in one call, never by scanning ACLs.
     */
    @Override
    public AuthorizationResult authorizeByResourceType(AuthorizableRequestContext requestContext, AclOperation op,
                                                       ResourceType resourceType) {
        checkByResourceTypeArguments(op, resourceType);
        return authorizeByResourceTypeWith(handle, requestContext, op, resourceType);
    }

    /** The arguments Kafka's own authorizer refuses ({@code AuthorizerUtils.validateAclBinding} style). */
    static void checkByResourceTypeArguments(AclOperation op, ResourceType resourceType) {
        if (op == AclOperation.ANY || op == AclOperation.UNKNOWN) {
            throw new IllegalArgumentException("Must specify a non-filter operation type, not " + op);
        }
        if (resourceType == ResourceType.ANY || resourceType == ResourceType.UNKNOWN) {
            throw new IllegalArgumentException("Must specify a non-filter resource type, not " + resourceType);
        }
    }

    /** The native agent's answer (one JNI call): refused if it fails. */
    static AuthorizationResult authorizeByResourceTypeWith(long handle, AuthorizableRequestContext requestContext,
                                                           AclOperation op, ResourceType resourceType) {
        RequestEncoder encoder = RequestEncoder.forThisThread();
        int length = encoder.encodeByResourceType(requestContext, op, resourceType);
        boolean allowed = NativeAgent.authorizeByResourceType(handle, encoder.address(), encoder.capacity(), length);
        encoder.afterCall();
        return allowed ? AuthorizationResult.ALLOWED : AuthorizationResult.DENIED;
    }

    @Override
    public List<? extends CompletionStage<AclCreateResult>> createAcls(AuthorizableRequestContext requestContext,
                                                                      List<AclBinding> aclBindings) {
        List<CompletableFuture<AclCreateResult>> results = new ArrayList<CompletableFuture<AclCreateResult>>();
        for (int i = 0; i < aclBindings.size(); i++) {
            results.add(CompletableFuture.completedFuture(new AclCreateResult(aclsArePolicies())));
        }
        return results;
    }

    @Override
    public List<? extends CompletionStage<AclDeleteResult>> deleteAcls(AuthorizableRequestContext requestContext,
                                                                      List<AclBindingFilter> aclBindingFilters) {
        List<CompletableFuture<AclDeleteResult>> results = new ArrayList<CompletableFuture<AclDeleteResult>>();
        for (int i = 0; i < aclBindingFilters.size(); i++) {
            results.add(CompletableFuture.completedFuture(new AclDeleteResult(aclsArePolicies())));
        }
        return results;
    }

    private PolicyViolationException aclsArePolicies() {
        byte[] service = NativeAgent.serviceName(handle);
        String name = service == null || service.length == 0 ? "(no snapshot yet)" : new String(service, StandardCharsets.UTF_8);
        return new PolicyViolationException("ACLs of this cluster are GrantForge policies of service " + name
            + "; change them in GrantForge");
    }

    @Override
    public Iterable<AclBinding> acls(AclBindingFilter filter) {
        return aclView == null ? Collections.<AclBinding>emptyList() : aclView.matching(filter);
    }

    /** Counted by the native library: no row is shipped or decoded. */
    @Override
    public int aclCount() {
        AclView view = aclView;
        return view == null ? 0 : view.count();
    }

    /**
     * Gives the native agent back (the last authorizer of the JVM stops it and frees its snapshots and token).
     * The handle then answers nothing: every later {@code authorize} is refused, super users' included.
     */
    @Override
    public void close() {
        if (agent != null) {
            agent.close();
        }
    }
}
