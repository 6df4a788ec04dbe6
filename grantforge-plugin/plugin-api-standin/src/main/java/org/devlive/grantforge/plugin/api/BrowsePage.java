package org.devlive.grantforge.plugin.api;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

public record BrowsePage(String root, String directory, List<BrowseEntry> entries, @Nullable String nextCursor) {

    public BrowsePage {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(directory, "directory");
        entries = List.copyOf(entries);
    }
}
