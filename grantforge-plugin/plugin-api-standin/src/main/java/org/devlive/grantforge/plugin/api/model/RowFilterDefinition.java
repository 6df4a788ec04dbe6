package org.devlive.grantforge.plugin.api.model;

import java.util.Set;

public record RowFilterDefinition(Set<String> resources) {

    public RowFilterDefinition {
        resources = Set.copyOf(resources);
        if (resources.isEmpty()) {
            throw new IllegalArgumentException("a row filter needs at least one resource");
        }
    }
}
