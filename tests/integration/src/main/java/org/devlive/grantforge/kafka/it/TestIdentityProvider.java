package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;

/**
 * An OAuth identity provider made at test time, as far as Kafka's brokers see one: an RSA key whose public half is
 * a JWKS file the brokers validate tokens against ({@code sasl.oauthbearer.jwks.endpoint.url}), and signed
 * RS256 access tokens for an audience and a subject. Kafka 4 reads a JWKS URL or file only when the broker JVM's
 * allow lists name it ({@link #jvmArgs()}).
 */
public final class TestIdentityProvider {
    public static final String ISSUER = "https://idp.grantforge.test";
    public static final String AUDIENCE = "kafka";
    private static final String KEY_ID = "it-signing-key";
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final KeyPair keys;
    private final Path jwks;

    private TestIdentityProvider(KeyPair keys, Path jwks) {
        this.keys = keys;
        this.jwks = jwks;
    }

    /** A new signing key, its JWKS written to {@code dir/jwks.json}. */
    public static TestIdentityProvider create(Path dir) {
        try {
            Files.createDirectories(dir);
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            KeyPair keys = generator.generateKeyPair();
            RSAPublicKey key = (RSAPublicKey) keys.getPublic();
            Path jwks = dir.resolve("jwks.json");
            Files.writeString(jwks, "{\"keys\":[{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":\"" + KEY_ID + "\",\"n\":\""
                    + unsigned(key.getModulus()) + "\",\"e\":\"" + unsigned(key.getPublicExponent()) + "\"}]}", StandardCharsets.UTF_8);
            return new TestIdentityProvider(keys, jwks);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the JWKS in " + dir, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Cannot make the identity provider's key", e);
        }
    }

    /** The JWKS as the URL brokers are given. */
    public String jwksUrl() {
        return jwks.toUri().toString();
    }

    /** The flags of a broker JVM that reads {@link #jwksUrl()}: Kafka 4's allow lists of OAuth URLs and files. */
    public List<String> jvmArgs() {
        return List.of("-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + jwksUrl(),
                "-Dorg.apache.kafka.sasl.oauthbearer.allowed.files=" + jwks.toAbsolutePath());
    }

    /** An access token for {@code subject}, valid for an hour from a minute ago. */
    public String token(String subject) {
        Instant now = Instant.now();
        long issued = now.minus(Duration.ofMinutes(1)).getEpochSecond();
        String header = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"" + KEY_ID + "\"}";
        String claims = "{\"iss\":\"" + ISSUER + "\",\"aud\":\"" + AUDIENCE + "\",\"sub\":\"" + subject + "\",\"iat\":" + issued
                + ",\"exp\":" + (issued + 3600) + ",\"scope\":\"kafka\"}";
        String signed = encode(header) + "." + encode(claims);
        try {
            Signature rs256 = Signature.getInstance("SHA256withRSA");
            rs256.initSign(keys.getPrivate());
            rs256.update(signed.getBytes(StandardCharsets.US_ASCII));
            return signed + "." + BASE64URL.encodeToString(rs256.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Cannot sign a token", e);
        }
    }

    private static String encode(String json) {
        return BASE64URL.encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }

    /** A JWK number: big-endian, without the sign byte BigInteger may add. */
    private static String unsigned(BigInteger value) {
        byte[] bytes = value.toByteArray();
        if (bytes.length > 1 && bytes[0] == 0) {
            bytes = java.util.Arrays.copyOfRange(bytes, 1, bytes.length);
        }
        return BASE64URL.encodeToString(bytes);
    }
}
