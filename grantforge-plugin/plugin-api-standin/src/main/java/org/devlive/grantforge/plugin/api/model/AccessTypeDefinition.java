package org.devlive.grantforge.plugin.api.model;

import java.util.Set;

public record AccessTypeDefinition(String name, String label, Set<String> impliedGrants) {

    public AccessTypeDefinition {
        Names.name(name, "access type name");
        label = Names.label(label, "access type label");
        impliedGrants = Set.copyOf(impliedGrants);
        for (String implied : impliedGrants) {
            Names.name(implied, "implied access type");
        }
        if (impliedGrants.contains(name)) {
            throw new IllegalArgumentException("access type " + name + " implies itself");
        }
    }

    public static AccessTypeDefinition of(String name, String label, String... impliedGrants) {
        return new AccessTypeDefinition(name, label, Set.of(impliedGrants));
    }
}
