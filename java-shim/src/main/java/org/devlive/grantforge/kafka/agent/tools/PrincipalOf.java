package org.devlive.grantforge.kafka.agent.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import javax.security.auth.kerberos.KerberosPrincipal;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.security.kerberos.KerberosName;
import org.apache.kafka.common.security.kerberos.KerberosShortNamer;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;

/**
 * {@code explain --principal-of CERTIFICATE|KERBEROS-NAME [--server-properties FILE] [--listener NAME]}: the
 * principal Kafka gives a connection that presents this certificate (PEM or DER) or authenticates as this Kerberos
 * name, computed by Kafka's own classes as its default principal builder does: the certificate subject's RFC 2253
 * name through {@code ssl.principal.mapping.rules}, or the Kerberos name through
 * {@code sasl.kerberos.principal.to.local.rules} with this host's default realm. The rules are the node's (its
 * {@code server.properties}; a {@code listener.name.<listener>.} form wins for {@code --listener}), Kafka's
 * defaults without one. The question then goes on as {@code --principal User:<name>}.
 */
final class PrincipalOf {
    static final String OPTION = "--principal-of";
    static final String PROPERTIES_OPTION = "--server-properties";
    static final String SSL_RULES = "ssl.principal.mapping.rules";
    static final String KERBEROS_RULES = "sasl.kerberos.principal.to.local.rules";
    static final String PRINCIPAL_BUILDER = "principal.builder.class";

    /** A command line the user got wrong: {@code explain} prints its usage. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    private PrincipalOf() {
    }

    /**
     * Prints the principal of {@code --principal-of} and how Kafka reached it, and returns the arguments of the
     * decision for it (the two options replaced by {@code --principal}), or null when no decision is asked
     * ({@code --operation} absent).
     */
    static String[] resolve(String[] args, PrintStream out) throws UsageException, IOException, GeneralSecurityException {
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        String subject = take(rest, OPTION);
        if (subject == null) {
            throw new UsageException(OPTION + " is missing");
        }
        String propertiesFile = take(rest, PROPERTIES_OPTION);
        if (rest.contains("--principal")) {
            throw new UsageException(OPTION + " and --principal name the principal twice: give one");
        }
        int listenerAt = rest.indexOf("--listener");
        String listener = listenerAt >= 0 && listenerAt + 1 < rest.size() ? rest.get(listenerAt + 1) : null;
        Properties server = new Properties();
        if (propertiesFile != null) {
            try (InputStream in = Files.newInputStream(Paths.get(propertiesFile))) {
                server.load(in);
            } catch (NoSuchFileException e) {
                throw new IOException(PROPERTIES_OPTION + " " + propertiesFile + ": no such file");
            }
        }
        String name = looksLikeCertificate(subject) ? ofCertificate(Paths.get(subject), server, listener, out)
                : ofKerberosName(subject, server, listener, out);
        String builder = server.getProperty(PRINCIPAL_BUILDER);
        if (builder != null && !builder.trim().isEmpty()) {
            out.println("  note: " + PRINCIPAL_BUILDER + " is " + builder.trim() + "; this is what Kafka's default builder gives,"
                + " yours may differ");
        }
        if (!rest.contains("--operation")) {
            return null;
        }
        rest.add("--principal");
        rest.add("User:" + name);
        out.println();
        return rest.toArray(new String[0]);
    }

    private static String ofCertificate(Path file, Properties server, String listener, PrintStream out)
            throws IOException, GeneralSecurityException {
        X509Certificate certificate;
        try (InputStream in = Files.newInputStream(file)) {
            certificate = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        } catch (NoSuchFileException e) {
            throw new IOException(OPTION + " " + file + ": no such certificate file");
        }
        String distinguishedName = certificate.getSubjectX500Principal().getName();
        Setting rules = setting(server, listener, SSL_RULES, "DEFAULT");
        String name = SslPrincipalMapper.fromRules(rules.value).getName(distinguishedName);
        out.println("principal: User:" + name);
        out.println("  certificate subject: " + distinguishedName);
        out.println("  " + rules);
        return name;
    }

    private static String ofKerberosName(String kerberosName, Properties server, String listener, PrintStream out)
            throws IOException {
        Setting rules = setting(server, listener, KERBEROS_RULES, "DEFAULT");
        @SuppressWarnings("unchecked")
        List<String> ruleList = (List<String>) ConfigDef.parseType(KERBEROS_RULES, rules.value, ConfigDef.Type.LIST);
        String realm = defaultRealm();
        KerberosName parsed = KerberosName.parse(kerberosName);
        if (parsed.realm() == null) {
            throw new IOException(noRealm(kerberosName, realm, rules));
        }
        String name;
        try {
            name = KerberosShortNamer.fromUnparsedRules(realm, ruleList).shortName(parsed);
        } catch (IOException noRuleApplies) {
            throw new IOException(noRuleApplies(kerberosName, parsed, realm, rules), noRuleApplies);
        }
        out.println("principal: User:" + name);
        out.println("  Kerberos name: " + kerberosName + " (this host's default realm: "
            + (realm.isEmpty() ? "none, no krb5.conf" : realm) + ")");
        out.println("  " + rules);
        return name;
    }

    /**
     * A name without a realm is never what a connection authenticates as (GSSAPI always gives the full name), and
     * Kafka's rules, which match on the realm, would pass it through unmapped or answer "No rules apply".
     */
    static String noRealm(String kerberosName, String defaultRealm, Setting rules) {
        return "the Kerberos name `" + kerberosName + "` has no realm: a client authenticates with its full name, realm"
            + " included, and " + rules.key + " = " + rules.value + " maps that full name. Give it as klist or the"
            + " keytab shows it, such as " + kerberosName + "@" + (defaultRealm.isEmpty() ? "EXAMPLE.COM" : defaultRealm);
    }

    /** Kafka's own words are only "No rules apply to NAME, rules [...]": say why, and what to do. */
    static String noRuleApplies(String kerberosName, KerberosName parsed, String defaultRealm, Setting rules) {
        return "no rule of " + rules.key + " = " + rules.value + " applies to `" + kerberosName + "`"
            + (rules.value.equals("DEFAULT") ? ": DEFAULT maps only names of this host's default realm ("
                + (defaultRealm.isEmpty() ? "none here: no krb5.conf" : defaultRealm) + ")" : "")
            + ". Add a RULE for realm " + parsed.realm() + " to " + rules.key + " (docs/transports.md), or give the node's"
            + " server.properties with " + PROPERTIES_OPTION + " and this host the node's krb5.conf";
    }

    /** As Kafka's SaslChannelBuilder finds it: the JDK's Kerberos configuration, or none. */
    private static String defaultRealm() {
        try {
            return new KerberosPrincipal("tmp", KerberosPrincipal.KRB_NT_PRINCIPAL).getRealm();
        } catch (RuntimeException e) {
            return "";
        }
    }

    private static boolean looksLikeCertificate(String subject) {
        String lower = subject.toLowerCase(Locale.ROOT);
        return Files.isRegularFile(Paths.get(subject)) || lower.endsWith(".pem") || lower.endsWith(".crt")
            || lower.endsWith(".cer") || lower.endsWith(".der");
    }

    /** The value of a rules key and where it came from. */
    static final class Setting {
        final String key;
        final String value;
        final boolean configured;

        Setting(String key, String value, boolean configured) {
            this.key = key;
            this.value = value;
            this.configured = configured;
        }

        @Override
        public String toString() {
            return "by " + key + " = " + value + (configured ? "" : " (Kafka's default)");
        }
    }

    private static Setting setting(Properties server, String listener, String key, String kafkaDefault) {
        if (listener != null) {
            String prefixed = "listener.name." + listener.toLowerCase(Locale.ROOT) + "." + key;
            String value = server.getProperty(prefixed);
            if (value != null) {
                return new Setting(prefixed, value.trim(), true);
            }
        }
        String value = server.getProperty(key);
        return value != null ? new Setting(key, value.trim(), true) : new Setting(key, kafkaDefault, false);
    }

    /** Removes {@code option} and its value from {@code args}; returns the value, or null when absent. */
    private static String take(List<String> args, String option) throws UsageException {
        int at = args.indexOf(option);
        if (at < 0) {
            return null;
        }
        if (at + 1 >= args.size()) {
            throw new UsageException(option + " needs a value");
        }
        String value = args.get(at + 1);
        args.subList(at, at + 2).clear();
        return value;
    }

    static boolean asked(String[] args) {
        return Arrays.asList(args).contains(OPTION);
    }

    static final String USAGE = "usage: explain --principal-of CERTIFICATE.pem|KERBEROS-NAME [--server-properties FILE] [--listener NAME]\n"
        + "               [(--snapshot FILE | --cache-dir DIR) --operation OP (--topic T | ...) ...]\n"
        + "the principal Kafka gives a connection presenting this certificate, or authenticating as this Kerberos name, by\n"
        + "the node's ssl.principal.mapping.rules or sasl.kerberos.principal.to.local.rules (Kafka's own classes: run with\n"
        + "kafka-clients on the class path), then the decision for it when a question follows.";
}
