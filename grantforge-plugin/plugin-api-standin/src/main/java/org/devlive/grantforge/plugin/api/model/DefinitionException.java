package org.devlive.grantforge.plugin.api.model;

import java.util.List;

/** The structural problems of a service type definition, all at once. */
public final class DefinitionException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    public DefinitionException(String serviceType, List<String> problems) {
        super("invalid service type " + serviceType + ": " + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> getProblems() {
        return problems;
    }
}
