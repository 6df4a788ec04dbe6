package org.devlive.grantforge.kafka.plugin;

import static org.devlive.grantforge.kafka.plugin.KafkaConfigFields.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.devlive.grantforge.plugin.api.model.ConfigField;
import org.devlive.grantforge.plugin.api.model.ConfigProblem;

/**
 * The rules of a {@code kafka} service's configuration beyond each field's own form, without I/O. Each problem is
 * INVALID (the only reason whose detail the console shows), on the field to change, saying what to do. Rules look
 * only at what the chosen protocol and mechanism use: a stored secret they do not use (a SASL password after
 * switching to SSL) is accepted, since the server cannot clear a stored secret and would refuse the service for ever.
 */
final class ConfigValidation {

    /** Words that mark a client property as secret: such values belong in SECRET fields. */
    private static final List<String> SECRET_WORDS = List.of("password", "jaas", "secret", ".key");
    private static final Set<String> DECLARED = KafkaConfigFields.ALL.stream().map(ConfigField::name).collect(Collectors.toSet());

    private final ServiceConfig config;
    private final List<ConfigProblem> problems = new ArrayList<>();

    private ConfigValidation(ServiceConfig config) {
        this.config = config;
    }

    static List<ConfigProblem> problems(ServiceConfig config) {
        ConfigValidation validation = new ConfigValidation(config);
        validation.checkBootstrapServers();
        validation.checkSasl();
        validation.checkTls();
        validation.checkTimeout();
        validation.checkClientProperties();
        return List.copyOf(validation.problems);
    }

    private void invalid(String field, String detail) {
        problems.add(new ConfigProblem(field, ConfigProblem.Reason.INVALID, detail));
    }

    private boolean has(String field) {
        String value = config.get(field);
        return value != null && !value.isBlank();
    }

    private void checkBootstrapServers() {
        String servers = config.get(BOOTSTRAP_SERVERS);
        if (servers == null) {
            return;
        }
        for (String entry : servers.split(",", -1)) {
            String address = entry.strip();
            if (!AdminSettings.isHostAndPort(address)) {
                invalid(BOOTSTRAP_SERVERS, "'" + address + "' is not host:port with a port from 1 to 65535; "
                        + "list brokers as host:port, comma-separated");
            }
        }
    }

    private void checkSasl() {
        if (!AdminSettings.usesSasl(config)) {
            return;
        }
        String mechanism = config.get(SASL_MECHANISM);
        if (mechanism == null) {
            invalid(SASL_MECHANISM, "security protocol " + config.get(SECURITY_PROTOCOL) + " needs a SASL mechanism");
            return;
        }
        boolean ownJaas = has(SASL_JAAS_CONFIG);
        switch (mechanism) {
            case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512" -> {
                if (!ownJaas && !has(SASL_USERNAME)) {
                    invalid(SASL_USERNAME, mechanism + " needs a user name (or a whole sasl.jaas.config)");
                }
                if (!ownJaas && !has(SASL_PASSWORD)) {
                    invalid(SASL_PASSWORD, mechanism + " needs a password (or a whole sasl.jaas.config)");
                }
            }
            case "GSSAPI" -> {
                if (!ownJaas && !(has(KERBEROS_PRINCIPAL) && has(KERBEROS_KEYTAB))) {
                    invalid(KERBEROS_PRINCIPAL, "GSSAPI needs kerberos.principal and kerberos.keytab, or a whole sasl.jaas.config");
                }
            }
            case "OAUTHBEARER" -> {
                if (!ownJaas) {
                    invalid(SASL_JAAS_CONFIG, "OAUTHBEARER needs a whole sasl.jaas.config (the OAuthBearerLoginModule line "
                            + "with the client id and secret)");
                }
            }
            default -> invalid(SASL_MECHANISM, "unknown SASL mechanism " + mechanism);
        }
    }

    private void checkTls() {
        if (!AdminSettings.usesTls(config)) {
            return;
        }
        if (has(TRUSTSTORE_LOCATION) && has(TRUSTSTORE_CERTIFICATES)) {
            invalid(TRUSTSTORE_CERTIFICATES, "give the trusted certificates either as a file (ssl.truststore.location) "
                    + "or as PEM text (ssl.truststore.certificates), not both");
        }
        if ("PEM".equals(config.get(TRUSTSTORE_TYPE)) && !has(TRUSTSTORE_LOCATION) && !has(TRUSTSTORE_CERTIFICATES)) {
            invalid(TRUSTSTORE_CERTIFICATES, "trust store type PEM needs the CA certificates as PEM text, or a PEM file in "
                    + "ssl.truststore.location");
        }
        if (has(TRUSTSTORE_CERTIFICATES) && !"PEM".equals(config.get(TRUSTSTORE_TYPE))) {
            invalid(TRUSTSTORE_TYPE, "PEM certificates in ssl.truststore.certificates need trust store type PEM");
        }
        boolean pemKeystore = "PEM".equals(config.get(KEYSTORE_TYPE));
        if (pemKeystore && !has(KEYSTORE_LOCATION) && has(KEYSTORE_CERTIFICATE_CHAIN) != has(KEYSTORE_KEY)) {
            invalid(has(KEYSTORE_KEY) ? KEYSTORE_CERTIFICATE_CHAIN : KEYSTORE_KEY,
                    "key store type PEM needs both the certificate chain and the private key");
        }
        if (!pemKeystore && has(KEYSTORE_CERTIFICATE_CHAIN)) {
            invalid(KEYSTORE_TYPE, "a PEM certificate chain in ssl.keystore.certificate.chain needs key store type PEM");
        }
    }

    private void checkTimeout() {
        long timeout;
        try {
            timeout = config.getLong(REQUEST_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
        } catch (NumberFormatException e) {
            return; // the field's own INTEGER check reports it
        }
        if (timeout < MIN_TIMEOUT_MS || timeout > MAX_TIMEOUT_MS) {
            invalid(REQUEST_TIMEOUT_MS, "must be from " + MIN_TIMEOUT_MS + " to " + MAX_TIMEOUT_MS
                    + " ms, so that a call ends within GrantForge's 10 s limit");
        }
    }

    private void checkClientProperties() {
        String text = config.get(CLIENT_PROPERTIES);
        if (text == null) {
            return;
        }
        int number = 0;
        for (String line : text.split("\\R")) {
            number++;
            String stripped = line.strip();
            if (stripped.isEmpty() || stripped.startsWith("#")) {
                continue;
            }
            int equals = stripped.indexOf('=');
            String key = equals < 0 ? "" : stripped.substring(0, equals).strip();
            if (key.isEmpty()) {
                invalid(CLIENT_PROPERTIES, "line " + number + " is not key=value");
            } else if (DECLARED.contains(key) || AdminSettings.SET_BY_THE_PLUGIN.contains(key)) {
                invalid(CLIENT_PROPERTIES, "line " + number + " sets " + key + ", which has a field of its own or is set "
                        + "by the plugin; use the field");
            } else if (SECRET_WORDS.stream().anyMatch(key.toLowerCase(Locale.ROOT)::contains)) {
                invalid(CLIENT_PROPERTIES, "line " + number + " sets " + key + ", which looks secret; client properties "
                        + "are not sealed, so give secrets in the SECRET fields (sasl.jaas.config for a login)");
            }
        }
    }
}
