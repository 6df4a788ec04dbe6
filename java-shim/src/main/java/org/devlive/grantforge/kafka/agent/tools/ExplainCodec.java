package org.devlive.grantforge.kafka.agent.tools;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.Wire;

/**
 * The {@code explain} payloads ({@code crates/grantforge-jni/src/explain_codec.rs} documents the layout): the
 * request of arguments and standard input, and the answer of an exit code and the output. The one Java writer of
 * the request, for the JAR's {@code explain} command and for {@code migrate-acls --verify}'s explanations.
 */
final class ExplainCodec {

    /** What {@code explain} answered: its exit code (0 answered, 1 bad input, 2 bad usage) and its output. */
    static final class Answer {
        final int exitCode;
        final String output;

        Answer(int exitCode, String output) {
            this.exitCode = exitCode;
            this.output = output;
        }
    }

    private ExplainCodec() {
    }

    static byte[] encodeRequest(List<String> args, byte[] stdin) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Wire.writeInt(out, args.size());
        for (String arg : args) {
            Wire.writeString(out, arg);
        }
        Wire.writeInt(out, stdin.length);
        out.write(stdin, 0, stdin.length);
        return out.toByteArray();
    }

    /** The answer, or {@code null} when the native library returned none (it failed). */
    static Answer decodeAnswer(byte[] answer) {
        if (answer == null || answer.length < 5) {
            return null;
        }
        ByteBuffer in = ByteBuffer.wrap(answer).order(ByteOrder.LITTLE_ENDIAN);
        int exitCode = in.get() & 0xff;
        return new Answer(exitCode, Wire.readString(in));
    }

    /** Runs {@code explain} in the native library. */
    static Answer run(List<String> args, byte[] stdin) {
        return decodeAnswer(NativeAgent.explain(encodeRequest(args, stdin)));
    }
}
