package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.apache.kerby.kerberos.kerb.KrbException;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

/**
 * A Kerberos KDC of realm {@value #REALM} in this JVM (Apache Kerby's {@code SimpleKdcServer}, as Kafka's own
 * {@code MiniKdc} runs one), on a loopback TCP port, with a {@code krb5.conf} that names it. One per JVM
 * ({@link #shared()}): the JDK reads {@code java.security.krb5.conf} once, so this JVM's Kerberos clients and
 * the nodes it starts ({@link #jvmArgs()}) all use this KDC.
 */
public final class TestKdc {
    public static final String REALM = "EXAMPLE.COM";
    /** The service name brokers log in under ({@code sasl.kerberos.service.name}). */
    public static final String SERVICE_NAME = "kafka";
    /**
     * The broker's principal: Kafka clients ask for {@code <service>/<host>}, the host being the name the broker's
     * address resolves to ({@code 127.0.0.1} is {@code localhost}).
     */
    public static final String BROKER_PRINCIPAL = SERVICE_NAME + "/localhost@" + REALM;

    private static TestKdc shared;

    private final Path dir;
    private final SimpleKdcServer server;
    private final Path krb5Conf;

    private TestKdc(Path dir, SimpleKdcServer server, Path krb5Conf) {
        this.dir = dir;
        this.server = server;
        this.krb5Conf = krb5Conf;
    }

    /** The KDC of this JVM, started on first use (and stopped when the JVM ends). */
    public static synchronized TestKdc shared() {
        if (shared == null) {
            shared = start();
        }
        return shared;
    }

    private static TestKdc start() {
        try {
            Path dir = Files.createTempDirectory("grantforge-it-kdc-");
            int port = Ports.free();
            SimpleKdcServer server = new SimpleKdcServer();
            server.setWorkDir(dir.toFile());
            server.setKdcRealm(REALM);
            server.setKdcHost("127.0.0.1");
            server.setAllowUdp(false);
            server.setAllowTcp(true);
            server.setKdcTcpPort(port);
            server.init();
            server.start();
            Path krb5Conf = dir.resolve("krb5.conf");
            Files.writeString(krb5Conf, "[libdefaults]\n"
                    + "  default_realm = " + REALM + "\n"
                    + "  udp_preference_limit = 1\n"
                    + "  dns_lookup_kdc = false\n"
                    + "  dns_lookup_realm = false\n"
                    + "[realms]\n"
                    + "  " + REALM + " = {\n"
                    + "    kdc = 127.0.0.1:" + port + "\n"
                    + "  }\n", StandardCharsets.UTF_8);
            System.setProperty("java.security.krb5.conf", krb5Conf.toString());
            TestKdc kdc = new TestKdc(dir, server, krb5Conf);
            Runtime.getRuntime().addShutdownHook(new Thread(kdc::stopQuietly, "grantforge-it-kdc-stop"));
            return kdc;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start the test KDC", e);
        } catch (KrbException e) {
            throw new IllegalStateException("Cannot start the test KDC", e);
        }
    }

    /** Creates {@code principal} (a full name, {@code name/instance@REALM}) with a random key, and its keytab. */
    public Path keytab(String principal) {
        Path keytab = dir.resolve(principal.replaceAll("[^A-Za-z0-9.-]", "_") + ".keytab");
        try {
            if (!Files.exists(keytab)) {
                server.createAndExportPrincipals(keytab.toFile(), principal);
            }
            return keytab;
        } catch (KrbException e) {
            throw new IllegalStateException("Cannot create the Kerberos principal " + principal, e);
        }
    }

    /** The {@code sasl.jaas.config} of a login as {@code principal} from its keytab. */
    public String jaasConfig(String principal) {
        return "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=\""
                + keytab(principal) + "\" principal=\"" + principal + "\";";
    }

    /** The JVM flags of a node that logs in to this KDC. */
    public List<String> jvmArgs() {
        return List.of("-Djava.security.krb5.conf=" + krb5Conf);
    }

    private void stopQuietly() {
        try {
            server.stop();
        } catch (KrbException | RuntimeException e) {
            // the JVM is ending
        }
    }
}
