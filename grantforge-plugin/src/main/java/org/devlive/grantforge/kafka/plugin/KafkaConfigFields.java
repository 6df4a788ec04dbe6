package org.devlive.grantforge.kafka.plugin;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.devlive.grantforge.plugin.api.model.ConfigField;
import org.devlive.grantforge.plugin.api.model.ConfigFieldType;

/**
 * The configuration fields of a {@code kafka} service, in the order the console shows them. Names are Kafka's own
 * client keys where one exists, so they pass straight into the Admin client's properties; secrets are SECRET
 * fields, which the server stores sealed and never shows again.
 */
final class KafkaConfigFields {

    static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    static final String SECURITY_PROTOCOL = "security.protocol";
    static final String SASL_MECHANISM = "sasl.mechanism";
    static final String SASL_USERNAME = "sasl.username";
    static final String SASL_PASSWORD = "sasl.password";
    static final String SASL_JAAS_CONFIG = "sasl.jaas.config";
    static final String KERBEROS_SERVICE_NAME = "sasl.kerberos.service.name";
    static final String KERBEROS_PRINCIPAL = "kerberos.principal";
    static final String KERBEROS_KEYTAB = "kerberos.keytab";
    static final String OAUTH_TOKEN_ENDPOINT = "sasl.oauthbearer.token.endpoint.url";
    static final String TRUSTSTORE_TYPE = "ssl.truststore.type";
    static final String TRUSTSTORE_LOCATION = "ssl.truststore.location";
    static final String TRUSTSTORE_PASSWORD = "ssl.truststore.password";
    static final String TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates";
    static final String KEYSTORE_TYPE = "ssl.keystore.type";
    static final String KEYSTORE_LOCATION = "ssl.keystore.location";
    static final String KEYSTORE_PASSWORD = "ssl.keystore.password";
    static final String KEY_PASSWORD = "ssl.key.password";
    static final String KEYSTORE_CERTIFICATE_CHAIN = "ssl.keystore.certificate.chain";
    static final String KEYSTORE_KEY = "ssl.keystore.key";
    static final String HOSTNAME_VERIFICATION = "ssl.hostname.verification";
    static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
    static final String LOOKUP_INTERNAL_TOPICS = "lookup.internal.topics";
    static final String CLIENT_PROPERTIES = "client.properties";

    /** Below the host's 10 s call limit with room for closing the client. */
    static final int DEFAULT_TIMEOUT_MS = 5000;
    static final int MIN_TIMEOUT_MS = 1000;
    static final int MAX_TIMEOUT_MS = 8000;

    private static final String HOST_PORT = "[^\\s,]+:\\d{1,5}";

    static final List<ConfigField> ALL = List.of(
            ConfigField.builder(BOOTSTRAP_SERVERS).label("Bootstrap servers").mandatory()
                    .pattern("\\s*" + HOST_PORT + "\\s*(,\\s*" + HOST_PORT + "\\s*)*")
                    .description("host:port of one or more brokers, comma-separated").build(),
            ConfigField.builder(SECURITY_PROTOCOL).label("Security protocol")
                    .options("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL").defaultValue("PLAINTEXT").build(),
            ConfigField.builder(SASL_MECHANISM).label("SASL mechanism")
                    .options("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER").defaultValue("PLAIN")
                    .description("used with SASL_PLAINTEXT and SASL_SSL only").build(),
            ConfigField.builder(SASL_USERNAME).label("SASL user name").description("PLAIN and SCRAM").build(),
            ConfigField.builder(SASL_PASSWORD).label("SASL password").type(ConfigFieldType.SECRET)
                    .description("PLAIN and SCRAM").build(),
            ConfigField.builder(SASL_JAAS_CONFIG).label("SASL JAAS configuration").type(ConfigFieldType.SECRET)
                    .description("a whole JAAS line; replaces the one made from user name and password "
                            + "(GSSAPI, OAUTHBEARER or a custom login)").build(),
            ConfigField.builder(KERBEROS_SERVICE_NAME).label("Kerberos service name").defaultValue("kafka")
                    .description("GSSAPI: the brokers' Kerberos service name").build(),
            ConfigField.builder(KERBEROS_PRINCIPAL).label("Kerberos principal").description("GSSAPI with a keytab").build(),
            ConfigField.builder(KERBEROS_KEYTAB).label("Kerberos keytab")
                    .description("GSSAPI: path of the keytab on every GrantForge server instance").build(),
            ConfigField.builder(OAUTH_TOKEN_ENDPOINT).label("OAuth token endpoint URL")
                    .description("OAUTHBEARER; the GrantForge server JVM must also allow it in the system property "
                            + "org.apache.kafka.sasl.oauthbearer.allowed.urls").build(),
            ConfigField.builder(TRUSTSTORE_TYPE).label("Trust store type").options("JKS", "PKCS12", "PEM").defaultValue("JKS").build(),
            ConfigField.builder(TRUSTSTORE_LOCATION).label("Trust store location")
                    .description("path of the trust store on every GrantForge server instance").build(),
            ConfigField.builder(TRUSTSTORE_PASSWORD).label("Trust store password").type(ConfigFieldType.SECRET).build(),
            ConfigField.builder(TRUSTSTORE_CERTIFICATES).label("Trusted CA certificates (PEM)").type(ConfigFieldType.TEXT)
                    .description("trust store type PEM: the CA bundle itself, no file needed").build(),
            ConfigField.builder(KEYSTORE_TYPE).label("Key store type").options("JKS", "PKCS12", "PEM").defaultValue("JKS")
                    .description("mutual TLS").build(),
            ConfigField.builder(KEYSTORE_LOCATION).label("Key store location")
                    .description("mutual TLS: path of the key store on every GrantForge server instance").build(),
            ConfigField.builder(KEYSTORE_PASSWORD).label("Key store password").type(ConfigFieldType.SECRET).build(),
            ConfigField.builder(KEY_PASSWORD).label("Key password").type(ConfigFieldType.SECRET).build(),
            ConfigField.builder(KEYSTORE_CERTIFICATE_CHAIN).label("Client certificate chain (PEM)").type(ConfigFieldType.TEXT)
                    .description("key store type PEM").build(),
            ConfigField.builder(KEYSTORE_KEY).label("Client private key (PEM)").type(ConfigFieldType.SECRET)
                    .description("key store type PEM").build(),
            ConfigField.builder(HOSTNAME_VERIFICATION).label("Verify the brokers' host names").type(ConfigFieldType.BOOLEAN)
                    .defaultValue("true").build(),
            ConfigField.builder(REQUEST_TIMEOUT_MS).label("Request timeout (ms)").type(ConfigFieldType.INTEGER)
                    .defaultValue(Integer.toString(DEFAULT_TIMEOUT_MS))
                    .description(MIN_TIMEOUT_MS + "-" + MAX_TIMEOUT_MS + ": each call must end within GrantForge's 10 s limit")
                    .build(),
            ConfigField.builder(LOOKUP_INTERNAL_TOPICS).label("Look up internal topics").type(ConfigFieldType.BOOLEAN)
                    .defaultValue("false").description("offer __consumer_offsets and the like in topic lookups").build(),
            ConfigField.builder(CLIENT_PROPERTIES).label("Further client properties").type(ConfigFieldType.TEXT)
                    .description("further non-secret Admin client properties, key=value per line").build());

    /** The fields whose values must never appear in a message, a log line or a console answer: the SECRET ones. */
    static final Set<String> SECRETS = ALL.stream().filter(ConfigField::sensitive).map(ConfigField::name)
            .collect(Collectors.toUnmodifiableSet());

    private KafkaConfigFields() {
    }
}
