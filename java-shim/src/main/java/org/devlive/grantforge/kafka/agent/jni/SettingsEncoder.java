package org.devlive.grantforge.kafka.agent.jni;

import java.io.ByteArrayOutputStream;
import java.util.Map;

/**
 * The settings payload {@link NativeAgent#open} takes: the keys the agent reads, as (key, value) strings one after
 * the other, in the map's order. Layout and golden bytes: {@code crates/grantforge-jni/src/settings_encoder.rs}.
 */
public final class SettingsEncoder {
    private SettingsEncoder() {
    }

    public static byte[] encode(Map<String, String> settings) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, String> entry : settings.entrySet()) {
            Wire.writeString(out, entry.getKey());
            Wire.writeString(out, entry.getValue());
        }
        return out.toByteArray();
    }
}
