package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The golden bytes of the JNI payloads, {@code tests/fixtures/jni/}: written by the Rust tests of
 * {@code crates/grantforge-jni} (regenerated with {@code GF_UPDATE_GOLDEN=1}), read here without the native library.
 */
public final class GoldenFixtures {
    private GoldenFixtures() {
    }

    public static Path path(String name) {
        return Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"), "jni", name);
    }

    public static byte[] read(String name) {
        Path path = path(name);
        try {
            return Files.readAllBytes(path);
        } catch (IOException e) {
            throw new UncheckedIOException(path + ": run the Rust tests of crates/grantforge-jni", e);
        }
    }
}
