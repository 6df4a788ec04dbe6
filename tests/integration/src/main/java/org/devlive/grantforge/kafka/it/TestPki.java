package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.security.auth.x500.X500Principal;

import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority made at test time, and the PKCS12 key stores Kafka's TLS listeners and clients use:
 * what an operator's PKI hands out, made in milliseconds (EC P-256 keys) in a directory of its own. Every
 * certificate is issued by the one CA, valid from an hour ago for a day, and usable for TLS servers and clients;
 * a name without a rule in {@code ssl.principal.mapping.rules} is what Kafka then sees:
 * {@link X500Principal#getName()} of the subject, for example {@code CN=tess,OU=clients,O=GrantForge IT}.
 */
public final class TestPki {
    /** The password of every key store and key (test equipment). */
    public static final String PASSWORD = "it-store-secret";
    private static final String SIGNATURE = "SHA256withECDSA";
    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    private final Path dir;
    private final KeyPair caKeys;
    private final X509Certificate caCertificate;
    private final Path truststore;

    private TestPki(Path dir, KeyPair caKeys, X509Certificate caCertificate, Path truststore) {
        this.dir = dir;
        this.caKeys = caKeys;
        this.caCertificate = caCertificate;
        this.truststore = truststore;
    }

    /** A new CA, {@code CN=GrantForge IT CA}, with its trust store in {@code dir}. */
    public static TestPki create(Path dir) {
        try {
            Files.createDirectories(dir);
            KeyPair keys = newKeyPair();
            X500Principal name = new X500Principal("CN=GrantForge IT CA,O=GrantForge IT");
            JcaX509v3CertificateBuilder builder = certificate(name, name, keys);
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            X509Certificate ca = sign(builder, keys.getPrivate());
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", ca);
            Path truststore = dir.resolve("truststore.p12");
            store(trust, truststore);
            Files.writeString(dir.resolve("ca.pem"), pem(ca), StandardCharsets.US_ASCII);
            return new TestPki(dir, keys, ca, truststore);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the test CA in " + dir, e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("Cannot make the test CA", e);
        }
    }

    /** The PKCS12 trust store holding the CA alone (password {@link #PASSWORD}). */
    public Path truststore() {
        return truststore;
    }

    /**
     * Issues a certificate for {@code subject} (an RFC 2253 distinguished name) with these subject alternative
     * names (IP addresses or DNS names), and writes it with its key and the CA into a PKCS12 key store
     * {@code <file>.p12}; the certificate alone goes to {@code <file>.pem}.
     *
     * @return the key store
     */
    public Path keystore(String file, String subject, String... alternativeNames) {
        try {
            KeyPair keys = newKeyPair();
            JcaX509v3CertificateBuilder builder = certificate(caCertificate.getSubjectX500Principal(), new X500Principal(subject), keys);
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            builder.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            if (alternativeNames.length > 0) {
                List<GeneralName> names = new ArrayList<>();
                for (String alternative : alternativeNames) {
                    boolean ip = alternative.matches("[0-9.]+|.*:.*");
                    names.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, alternative));
                }
                builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(new GeneralName[0])));
            }
            X509Certificate leaf = sign(builder, caKeys.getPrivate());
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("key", keys.getPrivate(), PASSWORD.toCharArray(), new Certificate[] {leaf, caCertificate});
            Path keystore = dir.resolve(file + ".p12");
            store(store, keystore);
            Files.writeString(dir.resolve(file + ".pem"), pem(leaf), StandardCharsets.US_ASCII);
            return keystore;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the key store " + file + " in " + dir, e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("Cannot issue a certificate for " + subject, e);
        }
    }

    /** The PEM certificate {@link #keystore} wrote beside the key store {@code file}. */
    public Path certificatePem(String file) {
        return dir.resolve(file + ".pem");
    }

    private static KeyPair newKeyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256);
        return generator.generateKeyPair();
    }

    private static JcaX509v3CertificateBuilder certificate(X500Principal issuer, X500Principal subject, KeyPair keys) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIALS.incrementAndGet()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject, keys.getPublic());
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder builder, PrivateKey issuerKey)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner signer = new JcaContentSignerBuilder(SIGNATURE).build(issuerKey);
        return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
    }

    private static void store(KeyStore store, Path file) throws IOException, GeneralSecurityException {
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, PASSWORD.toCharArray());
        }
    }

    private static String pem(X509Certificate certificate) throws GeneralSecurityException {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(certificate.getEncoded());
        return "-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----\n";
    }
}
