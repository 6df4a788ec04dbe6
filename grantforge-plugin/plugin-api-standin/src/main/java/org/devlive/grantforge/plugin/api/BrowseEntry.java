package org.devlive.grantforge.plugin.api;

import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

public record BrowseEntry(String name, String value, boolean directory, @Nullable String owner, @Nullable String group,
        @Nullable String permission, @Nullable Long size, @Nullable Instant modifiedAt) {

    public BrowseEntry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
    }
}
