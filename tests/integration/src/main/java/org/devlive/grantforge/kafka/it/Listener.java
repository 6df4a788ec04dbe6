package org.devlive.grantforge.kafka.it;

import java.util.Map;

/**
 * A client listener of a node beside the harness's SASL_PLAINTEXT one: its name in {@code listeners}, its
 * security protocol in {@code listener.security.protocol.map}, and the server properties it needs (full keys,
 * mostly {@code listener.name.<name>.*}). {@link Transports} makes those of production's transports.
 */
public record Listener(String name, String securityProtocol, Map<String, String> settings) {
    public Listener {
        settings = Map.copyOf(settings);
    }

    /** The prefix of this listener's own settings, {@code listener.name.<lower-case name>.}. */
    public static String prefix(String name) {
        return "listener.name." + name.toLowerCase(java.util.Locale.ROOT) + ".";
    }
}
