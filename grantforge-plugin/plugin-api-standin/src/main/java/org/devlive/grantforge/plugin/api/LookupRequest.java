package org.devlive.grantforge.plugin.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** A lookup of values for one level; the host passes a limit in 1..100. */
public record LookupRequest(ServiceConfig config, String resource, String userInput,
        Map<String, List<String>> context, int limit) {

    public LookupRequest {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(userInput, "userInput");
        Objects.requireNonNull(context, "context");
        Map<String, List<String>> copy = new LinkedHashMap<>();
        context.forEach((level, values) -> copy.put(level, List.copyOf(values)));
        context = Map.copyOf(copy);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1");
        }
    }
}
