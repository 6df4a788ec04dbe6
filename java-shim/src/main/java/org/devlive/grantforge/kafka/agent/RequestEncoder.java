package org.devlive.grantforge.kafka.agent;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

/**
 * Writes a request into the calling thread's direct buffer in the layout the native library reads
 * ({@code crates/grantforge-jni/src/codec.rs}): one buffer per Kafka request thread, reused, grown
 * only when a request does not fit, so the hot path makes no garbage beyond the UTF-8 bytes.
 */
final class RequestEncoder {
    static final byte VERSION = 1;
    private static final int INITIAL_CAPACITY = 16 * 1024;

    private static final ThreadLocal<RequestEncoder> PER_THREAD = new ThreadLocal<RequestEncoder>() {
        @Override
        protected RequestEncoder initialValue() {
            return new RequestEncoder();
        }
    };

    private ByteBuffer buffer = allocate(INITIAL_CAPACITY);

    static RequestEncoder forThisThread() {
        return PER_THREAD.get();
    }

    ByteBuffer buffer() {
        return buffer;
    }

    /** Encodes {@code authorize(context, actions)}; returns the number of bytes written. */
    int encodeAuthorize(AuthorizableRequestContext context, List<Action> actions) {
        while (true) {
            try {
                buffer.clear();
                putContext(context);
                buffer.putShort((short) actions.size());
                for (Action action : actions) {
                    ResourcePattern pattern = action.resourcePattern();
                    buffer.put(action.operation().code());
                    buffer.put(pattern.resourceType().code());
                    buffer.put(pattern.patternType().code());
                    buffer.put((byte) ((action.logIfAllowed() ? 1 : 0) | (action.logIfDenied() ? 2 : 0)));
                    putString(pattern.name());
                }
                return buffer.position();
            } catch (java.nio.BufferOverflowException e) {
                grow();
            }
        }
    }

    /** Encodes {@code authorizeByResourceType(context, op, resourceType)}. */
    int encodeByResourceType(AuthorizableRequestContext context, AclOperation op, ResourceType resourceType) {
        while (true) {
            try {
                buffer.clear();
                putContext(context);
                buffer.put(op.code());
                buffer.put(resourceType.code());
                return buffer.position();
            } catch (java.nio.BufferOverflowException e) {
                grow();
            }
        }
    }

    private void putContext(AuthorizableRequestContext context) {
        buffer.put(VERSION);
        KafkaPrincipal principal = context.principal();
        putString(principal == null ? "" : principal.getPrincipalType());
        putString(principal == null ? "" : principal.getName());
        InetAddress address = context.clientAddress();
        byte[] raw = address == null ? new byte[0] : address.getAddress();
        buffer.put((byte) raw.length);
        buffer.put(raw);
        putString(context.listenerName());
        putString(context.clientId());
        buffer.putShort((short) context.requestType());
        buffer.putShort((short) context.requestVersion());
    }

    /** u32 length + UTF-8; ASCII (topic names, most principals) is written as is, without garbage. */
    private void putString(String value) {
        String text = value == null ? "" : value;
        int length = text.length();
        if (buffer.remaining() >= 4 + length && isAscii(text)) {
            buffer.putInt(length);
            for (int i = 0; i < length; i++) {
                buffer.put((byte) text.charAt(i));
            }
            return;
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        buffer.putInt(bytes.length);
        buffer.put(bytes);
    }

    private static boolean isAscii(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    private void grow() {
        buffer = allocate(buffer.capacity() * 2);
    }

    private static ByteBuffer allocate(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }
}
