package org.devlive.grantforge.plugin.api.model;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

public record DataMaskDefinition(Set<String> resources, List<MaskTypeDefinition> maskTypes) {

    public DataMaskDefinition {
        resources = Set.copyOf(resources);
        maskTypes = List.copyOf(maskTypes);
        if (resources.isEmpty()) {
            throw new IllegalArgumentException("a data mask needs at least one resource");
        }
        if (maskTypes.isEmpty()) {
            throw new IllegalArgumentException("a data mask needs at least one mask type");
        }
        Set<String> seen = new HashSet<>();
        for (MaskTypeDefinition maskType : maskTypes) {
            if (!seen.add(maskType.name())) {
                throw new IllegalArgumentException("mask type " + maskType.name() + " declared twice");
            }
        }
    }
}
