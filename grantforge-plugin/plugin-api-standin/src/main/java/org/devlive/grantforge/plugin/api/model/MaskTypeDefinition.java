package org.devlive.grantforge.plugin.api.model;

import org.jspecify.annotations.Nullable;

public record MaskTypeDefinition(String name, String label, @Nullable String transformer) {

    public MaskTypeDefinition {
        Names.name(name, "mask type name");
        label = Names.label(label, "mask type label");
        transformer = Names.optional(transformer);
    }
}
