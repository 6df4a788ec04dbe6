package org.devlive.grantforge.plugin.api.model;

/** How a level's values match names: WILDCARD has {@code *} (any run) and {@code ?} (one character). */
public enum MatcherType { EXACT, WILDCARD, PATH, REGEX }
