package org.devlive.grantforge.kafka.it;

import java.util.Properties;

/**
 * How a client connects to one of a node's further {@link Listener}s: the listener's name and the client settings
 * of the login (security protocol, trust and key stores, SASL mechanism and JAAS line). {@link Transports} makes
 * them; {@link KafkaNode#clientProps(ClientLogin)} adds the listener's address.
 */
public record ClientLogin(String listener, Properties settings) {
    public ClientLogin {
        Properties copy = new Properties();
        copy.putAll(settings);
        settings = copy;
    }

    @Override
    public Properties settings() {
        Properties copy = new Properties();
        copy.putAll(settings);
        return copy;
    }
}
