package org.devlive.grantforge.plugin.api.model;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/** A problem of one field; the console shows {@code detail} only for {@link Reason#INVALID}. */
public record ConfigProblem(String field, Reason reason, @Nullable String detail) {

    public enum Reason { REQUIRED, UNKNOWN_FIELD, NOT_AN_INTEGER, NOT_A_BOOLEAN, NOT_AN_OPTION, PATTERN_MISMATCH, INVALID }

    public ConfigProblem {
        Objects.requireNonNull(field, "field");
        Objects.requireNonNull(reason, "reason");
    }

    public static ConfigProblem of(String field, Reason reason) {
        return new ConfigProblem(field, reason, null);
    }
}
