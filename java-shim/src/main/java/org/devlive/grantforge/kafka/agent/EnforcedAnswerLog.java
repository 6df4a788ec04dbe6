package org.devlive.grantforge.kafka.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's authorizer log ({@code kafka.authorizer.logger}) in compare mode. Kafka's {@code StandardAuthorizer} logs
 * the answer of its ACLs, which nobody enforces there: a read GrantForge allowed would read "Denied". So compare mode
 * asks Kafka with its logging off ({@link #unlogged}) and logs the enforced answers here, in Kafka's words and at
 * Kafka's levels: a refusal Kafka reports at INFO, an allowed access at DEBUG.
 */
final class EnforcedAnswerLog {
    private static final Logger AUDIT = LoggerFactory.getLogger("kafka.authorizer.logger");

    private EnforcedAnswerLog() {
    }

    /** The actions as Kafka's own authorizer must see them so that it logs nothing above TRACE. */
    static List<Action> unlogged(List<Action> actions) {
        List<Action> quiet = new ArrayList<Action>(actions.size());
        for (Action action : actions) {
            quiet.add(new Action(action.operation(), action.resourcePattern(), action.resourceReferenceCount(), false,
                false));
        }
        return quiet;
    }

    /** Logs each enforced answer that Kafka asked to report. */
    static void log(AuthorizableRequestContext context, List<Action> actions, List<AuthorizationResult> enforced) {
        for (int i = 0; i < actions.size(); i++) {
            Action action = actions.get(i);
            boolean allowed = enforced.get(i) == AuthorizationResult.ALLOWED;
            if (allowed && action.logIfAllowed() && AUDIT.isDebugEnabled()) {
                AUDIT.debug(message(context, action, true));
            } else if (!allowed && action.logIfDenied() && AUDIT.isInfoEnabled()) {
                AUDIT.info(message(context, action, false));
            }
        }
    }

    /** Kafka's own audit message, its rule replaced by the side that decided. */
    private static String message(AuthorizableRequestContext context, Action action, boolean allowed) {
        ResourcePattern pattern = action.resourcePattern();
        return "Principal = " + context.principal() + " is " + (allowed ? "Allowed" : "Denied") + " operation = "
            + action.operation() + " from host = " + context.clientAddress().getHostAddress() + " on resource = "
            + typeName(pattern.resourceType()) + ":" + pattern.patternType() + ":"
            + pattern.name() + " for request = " + requestName(context.requestType()) + " with resourceRefCount = "
            + action.resourceReferenceCount() + " based on GrantForge's policies (compare mode; Kafka's ACLs are compared,"
            + " not enforced)";
    }

    /** The resource type as Kafka's log writes it ({@code TransactionalId}; its helper moved between releases). */
    private static String typeName(ResourceType type) {
        StringBuilder name = new StringBuilder();
        for (String word : type.name().split("_")) {
            name.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
        }
        return name.toString();
    }

    private static String requestName(int requestType) {
        try {
            return ApiKeys.forId(requestType).name;
        } catch (IllegalArgumentException unknown) {
            return String.valueOf(requestType);
        }
    }
}
