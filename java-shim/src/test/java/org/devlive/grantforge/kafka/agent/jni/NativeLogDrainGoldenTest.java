package org.devlive.grantforge.kafka.agent.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.GoldenFixtures;

/** {@link NativeLogDrain} decodes the golden log records the Rust encoder writes ({@code crates/grantforge-jni/src/native_log_drain.rs}). */
class NativeLogDrainGoldenTest {
    @Test
    void decodesTheGoldenRecords() {
        List<String> records = new ArrayList<>();
        NativeLogDrain.decode(GoldenFixtures.read("log-records.bin"),
            (level, logger, message) -> records.add(level + " " + logger + " " + message));
        assertEquals(List.of(
            "1 org.devlive.grantforge.kafka.native.server the GrantForge server cannot be reached",
            "2 org.devlive.grantforge.kafka.native.agent policy version 7: policy 3: ¿ip-range?",
            "3 grantforge.audit alice WRITE topic orders ALLOWED",
            "4 org.devlive.grantforge.kafka.native.jni ",
            "5 org.devlive.grantforge.kafka.native trace"), records);
    }
}
