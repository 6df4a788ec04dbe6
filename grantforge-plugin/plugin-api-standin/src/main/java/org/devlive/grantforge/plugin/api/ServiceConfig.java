package org.devlive.grantforge.plugin.api;

import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/** The effective configuration of a service: declared fields with a value, secrets opened. */
public record ServiceConfig(String serviceName, Map<String, String> values) {

    public ServiceConfig {
        Objects.requireNonNull(serviceName, "serviceName");
        values = Map.copyOf(values);
    }

    public @Nullable String get(String field) {
        return values.get(field);
    }

    public String require(String field) {
        String value = values.get(field);
        if (value == null) {
            throw new IllegalStateException("service " + serviceName + " has no value for " + field);
        }
        return value;
    }

    public long getLong(String field, long fallback) {
        String value = values.get(field);
        if (value == null) {
            return fallback;
        }
        return Long.parseLong(value.startsWith("+") ? value.substring(1) : value);
    }

    public boolean getBoolean(String field, boolean fallback) {
        String value = values.get(field);
        return value == null ? fallback : "true".equals(value);
    }

    /** Names the fields, never their values (which may be secrets). */
    @Override
    public String toString() {
        return "ServiceConfig[" + serviceName + ", fields=" + new TreeSet<>(values.keySet()) + "]";
    }
}
