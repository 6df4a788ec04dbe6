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

    /** The u32 (a count, a length or an index), little-endian, at {@code at} of {@code bytes}. */
    public static int readInt(byte[] bytes, int at) {
        return (bytes[at] & 0xff) | (bytes[at + 1] & 0xff) << 8 | (bytes[at + 2] & 0xff) << 16 | (bytes[at + 3] & 0xff) << 24;
    }

    /** A u32 (a count or a length), little-endian. */
    public static void writeInt(ByteArrayOutputStream out, int n) {
        out.write(n);
        out.write(n >>> 8);
        out.write(n >>> 16);
        out.write(n >>> 24);
    }
}
