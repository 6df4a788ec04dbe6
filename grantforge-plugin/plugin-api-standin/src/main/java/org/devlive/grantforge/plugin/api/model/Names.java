package org.devlive.grantforge.plugin.api.model;

import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/** The name, label and optional-text rules of the model (package-private, as in GrantForge). */
final class Names {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,63}");

    private Names() {
    }

    static String name(String value, String what) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " must be 1-64 lowercase letters, digits, '_' or '-' starting with a letter");
        }
        return value;
    }

    static String label(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        return value.strip();
    }

    static @Nullable String optional(@Nullable String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }

    static <T> T required(T value, String what) {
        return Objects.requireNonNull(value, what);
    }
}
