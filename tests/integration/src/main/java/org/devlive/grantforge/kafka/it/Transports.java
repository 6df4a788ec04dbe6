package org.devlive.grantforge.kafka.it;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The listeners production runs and the client logins that reach them, all over TLS from one {@link TestPki}:
 * SSL with client certificates ({@value #MTLS}), and SASL_SSL with SCRAM-SHA-512 ({@value #SCRAM}), Kerberos
 * ({@value #KERBEROS}) or OAuth bearer tokens a JWKS validates ({@value #OAUTH}). Brokers present {@link #BROKER_DN}'s certificate
 * (for 127.0.0.1 and localhost, so clients verify the host name as by default); on the SSL listener that is also
 * the principal brokers replicate as when it is their inter-broker listener.
 */
public final class Transports {
    public static final String MTLS = "MTLS";
    public static final String SCRAM = "SCRAM";
    public static final String KERBEROS = "KERBEROS";
    public static final String OAUTH = "OAUTH";
    /** The subject of the brokers' certificate. */
    public static final String BROKER_DN = "CN=broker,OU=brokers,O=GrantForge IT";
    public static final String SCRAM_MECHANISM = "SCRAM-SHA-512";

    private final TestPki pki;
    private final Path brokerKeystore;

    public Transports(TestPki pki) {
        this.pki = pki;
        this.brokerKeystore = pki.keystore("broker", BROKER_DN, "127.0.0.1", "localhost");
    }

    public TestPki pki() {
        return pki;
    }

    // ------------------------------------------------------------------------------------------
    // listeners

    /** SSL with {@code ssl.client.auth=required}; principals are certificate subjects mapped by {@code mappingRules}. */
    public Listener mutualTlsListener(String mappingRules) {
        Map<String, String> settings = serverTls(MTLS);
        String prefix = Listener.prefix(MTLS);
        settings.put(prefix + "ssl.client.auth", "required");
        settings.put(prefix + "ssl.truststore.location", pki.truststore().toString());
        settings.put(prefix + "ssl.truststore.password", TestPki.PASSWORD);
        settings.put(prefix + "ssl.truststore.type", "PKCS12");
        settings.put("ssl.principal.mapping.rules", mappingRules);
        return new Listener(MTLS, "SSL", settings);
    }

    /** SASL_SSL with SCRAM-SHA-512: users are created with the Admin API ({@code alterUserScramCredentials}). */
    public Listener scramListener() {
        Map<String, String> settings = saslServerTls(SCRAM, SCRAM_MECHANISM);
        settings.put(Listener.prefix(SCRAM) + "scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        return new Listener(SCRAM, "SASL_SSL", settings);
    }

    /**
     * SASL_SSL with GSSAPI against {@code kdc}: the broker logs in as {@link TestKdc#BROKER_PRINCIPAL}, and client
     * principals become short names by {@code toLocalRules} ({@code sasl.kerberos.principal.to.local.rules}). The
     * node needs {@link TestKdc#jvmArgs()}.
     */
    public Listener kerberosListener(TestKdc kdc, String toLocalRules) {
        Map<String, String> settings = saslServerTls(KERBEROS, "GSSAPI");
        String prefix = Listener.prefix(KERBEROS);
        settings.put(prefix + "sasl.kerberos.service.name", TestKdc.SERVICE_NAME);
        settings.put(prefix + "gssapi.sasl.jaas.config", kdc.jaasConfig(TestKdc.BROKER_PRINCIPAL));
        settings.put("sasl.kerberos.principal.to.local.rules", toLocalRules);
        return new Listener(KERBEROS, "SASL_SSL", settings);
    }

    /**
     * SASL_SSL with OAUTHBEARER, tokens validated against the JWKS of {@code idp} (signature, expiry, audience):
     * the principal is the token's {@code sub}. The node needs {@link TestIdentityProvider#jvmArgs()}.
     */
    public Listener oauthListener(TestIdentityProvider idp) {
        Map<String, String> settings = saslServerTls(OAUTH, "OAUTHBEARER");
        String prefix = Listener.prefix(OAUTH);
        settings.put(prefix + "oauthbearer.sasl.server.callback.handler.class",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler");
        settings.put(prefix + "oauthbearer.sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
        settings.put("sasl.oauthbearer.jwks.endpoint.url", idp.jwksUrl());
        settings.put("sasl.oauthbearer.expected.audience", TestIdentityProvider.AUDIENCE);
        settings.put("sasl.oauthbearer.expected.issuer", TestIdentityProvider.ISSUER);
        return new Listener(OAUTH, "SASL_SSL", settings);
    }

    private Map<String, String> serverTls(String listener) {
        String prefix = Listener.prefix(listener);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put(prefix + "ssl.keystore.location", brokerKeystore.toString());
        settings.put(prefix + "ssl.keystore.password", TestPki.PASSWORD);
        settings.put(prefix + "ssl.key.password", TestPki.PASSWORD);
        settings.put(prefix + "ssl.keystore.type", "PKCS12");
        return settings;
    }

    private Map<String, String> saslServerTls(String listener, String mechanism) {
        Map<String, String> settings = serverTls(listener);
        settings.put(Listener.prefix(listener) + "sasl.enabled.mechanisms", mechanism);
        return settings;
    }

    // ------------------------------------------------------------------------------------------
    // client logins

    /** A client certificate for {@code subject}, issued now (its PEM beside it: {@link TestPki#certificatePem}). */
    public ClientLogin certificateLogin(String file, String subject) {
        Path keystore = pki.keystore(file, subject);
        Properties props = clientTls("SSL");
        props.put("ssl.keystore.location", keystore.toString());
        props.put("ssl.keystore.password", TestPki.PASSWORD);
        props.put("ssl.key.password", TestPki.PASSWORD);
        props.put("ssl.keystore.type", "PKCS12");
        return new ClientLogin(MTLS, props);
    }

    public ClientLogin scramLogin(String user, String password) {
        return sasl(SCRAM, SCRAM_MECHANISM, "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
    }

    /** A login as {@code principal} ({@code name/instance@REALM}) from a keytab the KDC makes now. */
    public ClientLogin kerberosLogin(TestKdc kdc, String principal) {
        ClientLogin login = sasl(KERBEROS, "GSSAPI", kdc.jaasConfig(principal));
        Properties props = login.settings();
        props.put("sasl.kerberos.service.name", TestKdc.SERVICE_NAME);
        return new ClientLogin(KERBEROS, props);
    }

    /** A login with an access token {@code idp} signs for {@code subject}. */
    public ClientLogin oauthLogin(TestIdentityProvider idp, String subject) {
        ClientLogin login = sasl(OAUTH, "OAUTHBEARER", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                + StaticTokenLogin.OPTION + "=\"" + idp.token(subject) + "\";");
        Properties props = login.settings();
        props.put("sasl.login.callback.handler.class", StaticTokenLogin.class.getName());
        return new ClientLogin(OAUTH, props);
    }

    private ClientLogin sasl(String listener, String mechanism, String jaasConfig) {
        Properties props = clientTls("SASL_SSL");
        props.put("sasl.mechanism", mechanism);
        props.put("sasl.jaas.config", jaasConfig);
        return new ClientLogin(listener, props);
    }

    private Properties clientTls(String protocol) {
        Properties props = new Properties();
        props.put("security.protocol", protocol);
        props.put("ssl.truststore.location", pki.truststore().toString());
        props.put("ssl.truststore.password", TestPki.PASSWORD);
        props.put("ssl.truststore.type", "PKCS12");
        return props;
    }
}
