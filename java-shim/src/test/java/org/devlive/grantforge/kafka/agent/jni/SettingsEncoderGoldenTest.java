package org.devlive.grantforge.kafka.agent.jni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.GoldenFixtures;

/**
 * {@link SettingsEncoder} writes the golden settings bytes that the Rust decoder is tested on
 * ({@code crates/grantforge-jni/src/settings_encoder.rs}), without the native library.
 */
class SettingsEncoderGoldenTest {
    @Test
    void encodesTheGoldenSettings() {
        Map<String, String> settings = new TreeMap<>();
        settings.put("super.users", "User:admin;User:ops");
        settings.put("grantforge.policy.file", "/etc/grantforge/policies.json");
        settings.put("grantforge.start.timeout.ms", "");
        settings.put("grantforge.instance", "broker-1 (zone é)");
        assertArrayEquals(GoldenFixtures.read("settings.bin"), SettingsEncoder.encode(settings));
    }
}
