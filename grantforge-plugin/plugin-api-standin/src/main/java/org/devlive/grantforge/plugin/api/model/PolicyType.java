package org.devlive.grantforge.plugin.api.model;

public enum PolicyType { ACCESS, DATA_MASK, ROW_FILTER }
