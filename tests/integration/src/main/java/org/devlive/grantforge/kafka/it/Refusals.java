package org.devlive.grantforge.kafka.it;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;

/** A client's failure as an answer to compare between authorizers. */
public final class Refusals {
    private Refusals() {
    }

    /**
     * A refusal in Kafka's own words: the error code of the first Kafka error in the chain, which must be an
     * authorization failure. Anything else (a timeout, a lost connection) is no answer to compare and fails the test.
     */
    public static String of(Exception e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof ApiException) {
                Errors error = Errors.forException(cause);
                if (error.name().endsWith("_AUTHORIZATION_FAILED")) {
                    return "refused: " + error.name() + " (" + error.code() + ")";
                }
                break;
            }
        }
        throw new AssertionError("not a refusal, no answer to compare: " + e, e);
    }
}
