package org.devlive.grantforge.plugin.api;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/** The answer to "Test connection"; the message is shown in the console and must hold no secret. */
public record ConnectionResult(Status status, @Nullable String message) {

    public enum Status { SUCCEEDED, FAILED, UNSUPPORTED }

    public ConnectionResult {
        Objects.requireNonNull(status, "status");
    }

    public static ConnectionResult succeeded() {
        return new ConnectionResult(Status.SUCCEEDED, null);
    }

    public static ConnectionResult failed(String message) {
        return new ConnectionResult(Status.FAILED, Objects.requireNonNull(message, "message"));
    }

    public static ConnectionResult unsupported() {
        return new ConnectionResult(Status.UNSUPPORTED, null);
    }
}
