package org.devlive.grantforge.plugin.api;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/** One page of a directory of a PATH level. */
public record BrowseRequest(ServiceConfig config, String resource, String directory, @Nullable String cursor, int pageSize) {

    public static final int MAX_PAGE_SIZE = 500;

    public BrowseRequest {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(directory, "directory");
        if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("pageSize must be 1-" + MAX_PAGE_SIZE);
        }
    }
}
