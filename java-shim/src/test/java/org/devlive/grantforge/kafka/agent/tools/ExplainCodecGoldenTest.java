package org.devlive.grantforge.kafka.agent.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.GoldenFixtures;

/** {@link ExplainCodec} writes and reads the golden bytes of {@code crates/grantforge-jni/src/explain_codec.rs}. */
class ExplainCodecGoldenTest {

    @Test
    void writesTheGoldenRequestWithItsEmptyArgumentInPlace() {
        List<String> args = List.of("--snapshot", "e2e.json", "--principal", "User:alice", "--client-id", "",
            "--operation", "READ", "--topic", "café");
        byte[] stdin = "--principal User:bob --operation WRITE --topic orders\n".getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(GoldenFixtures.read("explain-request.bin"), ExplainCodec.encodeRequest(args, stdin));
    }

    @Test
    void readsTheGoldenAnswer() {
        ExplainCodec.Answer answer = ExplainCodec.decodeAnswer(GoldenFixtures.read("explain-answer.bin"));
        assertEquals(2, answer.exitCode);
        assertEquals("explain: name the operation\nusage: …\n", answer.output);
        assertNull(ExplainCodec.decodeAnswer(null), "the native library failed");
        assertNull(ExplainCodec.decodeAnswer(new byte[0]), "the native library failed");
    }
}
