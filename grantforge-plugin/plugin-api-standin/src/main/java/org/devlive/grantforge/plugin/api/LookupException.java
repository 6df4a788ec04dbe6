package org.devlive.grantforge.plugin.api;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/** A lookup or browse failure with its reason; the message is shown to admins: one line, no secrets. */
public final class LookupException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public enum Reason { NOT_FOUND, ACCESS_DENIED, UNREACHABLE, AUTHENTICATION_FAILED, LIMIT_EXCEEDED, INVALID_INPUT, FAILED }

    private final Reason reason;

    public LookupException(Reason reason, String message) {
        this(reason, message, null);
    }

    public LookupException(Reason reason, String message, @Nullable Throwable cause) {
        super(Objects.requireNonNull(message, "message"), cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason getReason() {
        return reason;
    }
}
