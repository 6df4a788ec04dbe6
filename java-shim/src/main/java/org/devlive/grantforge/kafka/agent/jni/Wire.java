package org.devlive.grantforge.kafka.agent.jni;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Strings and counts as the native library writes and reads them: u32 little-endian, strings as a length and UTF-8 bytes. */
public final class Wire {
    private Wire() {
    }

    public static String readString(ByteBuffer in) {
        byte[] bytes = new byte[in.getInt()];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    public static void writeString(ByteArrayOutputStream out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        writeInt(out, bytes.length);
        out.write(bytes, 0, bytes.length);
    }

    /** A u32 (a count or a length), little-endian. */
    public static void writeInt(ByteArrayOutputStream out, int n) {
        out.write(n);
        out.write(n >>> 8);
        out.write(n >>> 16);
        out.write(n >>> 24);
    }
}
