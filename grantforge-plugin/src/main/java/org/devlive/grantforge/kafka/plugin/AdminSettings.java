package org.devlive.grantforge.kafka.plugin;

import static org.devlive.grantforge.kafka.plugin.KafkaConfigFields.*;

import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.devlive.grantforge.plugin.api.ServiceConfig;

/**
 * The Admin client's properties for a service: only what the chosen protocol, mechanism and store types use, with
 * timeouts that end every call inside the host's 10 s limit.
 */
final class AdminSettings {

    /** Keys the plugin sets itself; {@code client.properties} may not set them. */
    static final Set<String> SET_BY_THE_PLUGIN = Set.of("client.id", "default.api.timeout.ms", "connections.max.idle.ms",
            "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms", "ssl.endpoint.identification.algorithm",
            "sasl.kerberos.service.name", "sasl.login.callback.handler.class", "sasl.login.connect.timeout.ms",
            "sasl.login.read.timeout.ms", "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms");

    /** A host (name, IPv4 or bracketed IPv6) and a port. */
    private static final Pattern HOST_AND_PORT = Pattern.compile("(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\],]+):(\\d{1,5})");
    /** How long closing may take after the answer is in: the host's limit counts it too. */
    static final int CLOSE_TIMEOUT_MS = 1000;

    private AdminSettings() {
    }

    /**
     * The login (an OAuth token endpoint's answer) happens while the Admin client is made, before any request's
     * timeout runs, and Kafka's defaults let it retry for 10 s with no read timeout at all: bound each attempt and
     * the retries to half the service's timeout each, so that a silent token endpoint ends the call in time too.
     */
    private static void addLoginTimeouts(int timeoutMs, Properties props) {
        String half = Integer.toString(timeoutMs / 2);
        props.put("sasl.login.connect.timeout.ms", half);
        props.put("sasl.login.read.timeout.ms", half);
        props.put("sasl.login.retry.backoff.ms", "100");
        props.put("sasl.login.retry.backoff.max.ms", half);
    }

    static boolean isHostAndPort(String address) {
        Matcher m = HOST_AND_PORT.matcher(address);
        if (!m.matches()) {
            return false;
        }
        int port = Integer.parseInt(m.group(2));
        return port >= 1 && port <= 65535;
    }

    static String protocol(ServiceConfig config) {
        String protocol = config.get(SECURITY_PROTOCOL);
        return protocol == null ? "PLAINTEXT" : protocol;
    }

    static boolean usesSasl(ServiceConfig config) {
        return protocol(config).startsWith("SASL_");
    }

    static boolean usesTls(ServiceConfig config) {
        String protocol = protocol(config);
        return protocol.equals("SSL") || protocol.equals("SASL_SSL");
    }

    static int timeoutMs(ServiceConfig config) {
        long timeout = config.getLong(REQUEST_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
        return (int) Math.max(MIN_TIMEOUT_MS, Math.min(MAX_TIMEOUT_MS, timeout));
    }

    static String bootstrapServers(ServiceConfig config) {
        return config.require(BOOTSTRAP_SERVERS).replaceAll("\\s+", "");
    }

    static Properties of(ServiceConfig config) {
        Properties props = new Properties();
        props.putAll(ClientProperties.parse(config.get(CLIENT_PROPERTIES)));
        props.put("bootstrap.servers", bootstrapServers(config));
        props.put("security.protocol", protocol(config));
        // unique per call: two Admin clients with one client.id clash on their JMX app-info beans
        props.put("client.id", "grantforge-" + config.serviceName() + "-" + UUID.randomUUID());
        String timeout = Integer.toString(timeoutMs(config));
        props.put("request.timeout.ms", timeout);
        props.put("default.api.timeout.ms", timeout);
        props.put("socket.connection.setup.timeout.ms", timeout);
        props.put("socket.connection.setup.timeout.max.ms", timeout);
        props.put("connections.max.idle.ms", "10000");
        if (usesSasl(config)) {
            addSasl(config, props);
            addLoginTimeouts(timeoutMs(config), props);
        }
        if (usesTls(config)) {
            addTls(config, props);
        }
        return props;
    }

    /** The JAAS line: the service's own, else one made from the user name and password (PLAIN, SCRAM) or keytab. */
    static String jaasConfig(ServiceConfig config, String mechanism) {
        String own = config.get(SASL_JAAS_CONFIG);
        if (own != null && !own.isBlank()) {
            return own;
        }
        return switch (mechanism) {
            case "PLAIN" -> loginLine("org.apache.kafka.common.security.plain.PlainLoginModule", config);
            case "SCRAM-SHA-256", "SCRAM-SHA-512" -> loginLine("org.apache.kafka.common.security.scram.ScramLoginModule", config);
            case "GSSAPI" -> "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="
                    + quoted(config.require(KERBEROS_KEYTAB)) + " principal=" + quoted(config.require(KERBEROS_PRINCIPAL)) + ";";
            default -> throw new IllegalStateException(mechanism + " needs a whole sasl.jaas.config");
        };
    }

    private static void addSasl(ServiceConfig config, Properties props) {
        String mechanism = config.get(SASL_MECHANISM) == null ? "PLAIN" : config.get(SASL_MECHANISM);
        props.put("sasl.mechanism", mechanism);
        props.put("sasl.jaas.config", jaasConfig(config, mechanism));
        if (mechanism.equals("GSSAPI")) {
            props.put("sasl.kerberos.service.name", config.get(KERBEROS_SERVICE_NAME) == null ? "kafka" : config.get(KERBEROS_SERVICE_NAME));
        }
        if (mechanism.equals("OAUTHBEARER") && config.get(OAUTH_TOKEN_ENDPOINT) != null) {
            props.put("sasl.oauthbearer.token.endpoint.url", config.get(OAUTH_TOKEN_ENDPOINT));
            props.put("sasl.login.callback.handler.class",
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler");
        }
    }

    private static void addTls(ServiceConfig config, Properties props) {
        String trustType = valueOr(config, TRUSTSTORE_TYPE, "JKS");
        if (config.get(TRUSTSTORE_CERTIFICATES) != null || config.get(TRUSTSTORE_LOCATION) != null) {
            props.put("ssl.truststore.type", trustType);
        }
        copy(config, props, TRUSTSTORE_CERTIFICATES, TRUSTSTORE_LOCATION);
        if (config.get(TRUSTSTORE_LOCATION) != null && !trustType.equals("PEM")) {
            copy(config, props, TRUSTSTORE_PASSWORD);
        }
        String keyType = valueOr(config, KEYSTORE_TYPE, "JKS");
        boolean pemKey = keyType.equals("PEM") && config.get(KEYSTORE_CERTIFICATE_CHAIN) != null;
        if (config.get(KEYSTORE_LOCATION) != null || pemKey) {
            props.put("ssl.keystore.type", keyType);
            copy(config, props, KEYSTORE_LOCATION, KEY_PASSWORD);
            if (pemKey) {
                copy(config, props, KEYSTORE_CERTIFICATE_CHAIN, KEYSTORE_KEY);
            } else {
                copy(config, props, KEYSTORE_PASSWORD);
            }
        }
        if (!config.getBoolean(HOSTNAME_VERIFICATION, true)) {
            props.put("ssl.endpoint.identification.algorithm", "");
        }
    }

    private static String loginLine(String module, ServiceConfig config) {
        return module + " required username=" + quoted(config.require(SASL_USERNAME)) + " password="
                + quoted(config.require(SASL_PASSWORD)) + ";";
    }

    /** A JAAS option value in double quotes, with {@code \} and {@code "} escaped. */
    static String quoted(String value) {
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String valueOr(ServiceConfig config, String field, String fallback) {
        String value = config.get(field);
        return value == null ? fallback : value;
    }

    private static void copy(ServiceConfig config, Properties props, String... fields) {
        for (String field : fields) {
            String value = config.get(field);
            if (value != null && !value.isBlank()) {
                props.put(field, value);
            }
        }
    }
}
