package org.devlive.grantforge.kafka.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Base64;

/**
 * Signs a policy file as a GrantForge server signs a snapshot: Ed25519 over the file's bytes, the signature in
 * Base64 beside it ({@code <file>.sig}), the public key as Base64 SubjectPublicKeyInfo in a key file
 * ({@code grantforge.signing.key.file}), so that a load measures verification too.
 */
final class SignedSnapshot {
    private SignedSnapshot() {
    }

    /** Writes {@code <file>.sig} and a key file beside it; returns the key file. */
    static Path sign(Path file) {
        try {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            Signature signer = Signature.getInstance("Ed25519");
            signer.initSign(pair.getPrivate());
            signer.update(Files.readAllBytes(file));
            Base64.Encoder base64 = Base64.getEncoder();
            Files.write(Paths.get(file + ".sig"), base64.encode(signer.sign()));
            Path key = Paths.get(file + ".pub");
            Files.write(key, base64.encodeToString(pair.getPublic().getEncoded()).getBytes(StandardCharsets.US_ASCII));
            return key;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is not available in this JVM", e);
        }
    }

    /** Removes the file, its signature and its key file. */
    static void delete(Path file) throws IOException {
        Files.deleteIfExists(file);
        Files.deleteIfExists(Paths.get(file + ".sig"));
        Files.deleteIfExists(Paths.get(file + ".pub"));
    }
}
