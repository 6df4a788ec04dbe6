package org.devlive.grantforge.plugin.api.model;

/** SECRET values are stored encrypted and never shown again. */
public enum ConfigFieldType { STRING, TEXT, INTEGER, BOOLEAN, SECRET, ENUM }
