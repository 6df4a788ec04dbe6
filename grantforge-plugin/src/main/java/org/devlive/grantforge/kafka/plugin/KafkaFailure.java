package org.devlive.grantforge.kafka.plugin;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.devlive.grantforge.plugin.api.LookupException;

/**
 * What went wrong talking to Kafka, as the API's reason and one line for an admin (secrets still in it: the caller
 * passes it through {@link SafeText}). Kafka wraps its errors (ExecutionException from futures, KafkaException from
 * the client's constructor), so the cause chain is searched for the most telling one.
 */
record KafkaFailure(LookupException.Reason reason, String message) {

    static KafkaFailure of(Throwable failure, String bootstrap, int timeoutMs) {
        if (failure instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new KafkaFailure(LookupException.Reason.FAILED, "interrupted while waiting for " + bootstrap);
        }
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            KafkaFailure known = known(cause, bootstrap, timeoutMs);
            if (known != null) {
                return known;
            }
        }
        return new KafkaFailure(LookupException.Reason.FAILED, describe(failure));
    }

    private static KafkaFailure known(Throwable cause, String bootstrap, int timeoutMs) {
        if (cause instanceof TimeoutException || cause instanceof java.util.concurrent.TimeoutException) {
            return new KafkaFailure(LookupException.Reason.UNREACHABLE, "cannot reach " + bootstrap + ": no answer within "
                    + timeoutMs + " ms (check the address, the port, the security protocol and the network)");
        }
        if (cause instanceof ConfigException && String.valueOf(cause.getMessage()).contains("resolvable bootstrap")) {
            return new KafkaFailure(LookupException.Reason.UNREACHABLE, "cannot reach " + bootstrap
                    + ": none of its host names resolves");
        }
        if (cause instanceof SslAuthenticationException) {
            return new KafkaFailure(LookupException.Reason.AUTHENTICATION_FAILED, "authentication failed: the TLS handshake with "
                    + bootstrap + " failed (check the trusted certificates, the key store and host name verification): "
                    + rootMessage(cause));
        }
        if (cause instanceof AuthenticationException) {
            return new KafkaFailure(LookupException.Reason.AUTHENTICATION_FAILED, "authentication failed: " + firstLine(cause));
        }
        if (cause instanceof AuthorizationException) {
            return new KafkaFailure(LookupException.Reason.ACCESS_DENIED, "not authorized: " + firstLine(cause));
        }
        if (cause instanceof UnsupportedVersionException) {
            return new KafkaFailure(LookupException.Reason.FAILED, "broker too old for this request: " + firstLine(cause));
        }
        return null;
    }

    /** An unknown failure: the outer message, and the innermost one when Kafka wrapped it. */
    private static String describe(Throwable failure) {
        Throwable outer = failure;
        while ((outer instanceof ExecutionException || outer instanceof CompletionException) && outer.getCause() != null) {
            outer = outer.getCause();
        }
        String text = firstLine(outer);
        if (outer instanceof KafkaException && outer.getCause() != null) {
            text += ": " + rootMessage(outer);
        }
        return text;
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return firstLine(root);
    }

    private static String firstLine(Throwable failure) {
        String message = failure.getMessage();
        if (message == null || message.isBlank()) {
            return failure.getClass().getSimpleName();
        }
        return message.strip().lines().findFirst().orElse("");
    }
}
