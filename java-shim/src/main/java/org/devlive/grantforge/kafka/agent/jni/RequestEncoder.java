package org.devlive.grantforge.kafka.agent.jni;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;

/**
 * Writes a request into the calling thread's direct buffer in the layout the native library reads
 * ({@code crates/grantforge-jni/src/request_encoder.rs}, with the golden bytes this class is held to): one buffer per Kafka request thread, reused, grown
 * only when a request does not fit, so the hot path makes no garbage beyond the UTF-8 bytes. The
 * buffer's address is taken from the native library once per buffer and passed with every call, and
 * the request context is written again only when it differs from the previous call's: a request
 * thread serves one request after another, and each request asks with one context. "Differs" compares
 * what is written, by value: Kafka builds a new {@code KafkaPrincipal} for every request (its SASL and SSL
 * authenticators' {@code principal()} runs the principal builder each time), so comparing the principal
 * object would write the context again on every request of a broker.
 *
 * <p>A buffer grown past {@link #RETAINED_CAPACITY} for one large call (a request of many thousand
 * actions, a huge resource name) is let go after that call ({@link #afterCall}) and the thread goes
 * back to a buffer of {@link #INITIAL_CAPACITY}, with its new address: direct memory per request
 * thread stays bounded whatever one client asked once.
 */
public final class RequestEncoder {
    /** 3: the action count is a u32, so a call of more than 65,535 actions is answered. */
    public static final byte VERSION = 3;
    public static final int INITIAL_CAPACITY = 16 * 1024;
    /** A buffer larger than this is released after the call that needed it. */
    static final int RETAINED_CAPACITY = 256 * 1024;

    private static final ThreadLocal<RequestEncoder> PER_THREAD = new ThreadLocal<RequestEncoder>() {
        @Override
        protected RequestEncoder initialValue() {
            return new RequestEncoder();
        }
    };

    /** Gives a buffer's native address ({@link NativeAgent#bufferAddress}). */
    private final ToLongFunction<ByteBuffer> addressOf;
    private ByteBuffer buffer;
    private long address;

    /** The context the buffer holds (the values written; strings compare by identity first), and where it ends. */
    private String lastPrincipalType;
    private String lastPrincipalName;
    private InetAddress lastAddress;
    private String lastListener;
    private String lastClientId;
    private int lastRequestType = -1;
    private int lastRequestVersion = -1;
    private int contextEnd = -1;
    /** How many times a context was written (for tests: an equal context is not written again). */
    private long contextWrites;

    public RequestEncoder() {
        this(NativeAgent::bufferAddress);
    }

    /** With another source of buffer addresses: tests encode without the native library. */
    RequestEncoder(ToLongFunction<ByteBuffer> addressOf) {
        this.addressOf = addressOf;
        useBuffer(INITIAL_CAPACITY);
    }

    public static RequestEncoder forThisThread() {
        return PER_THREAD.get();
    }

    /** The buffer's native address (0 if the native library could not tell it: every call is refused). */
    public long address() {
        return address;
    }

    public int capacity() {
        return buffer.capacity();
    }

    /** A copy of the first {@code length} bytes of the buffer: what an encode wrote (for tests). */
    public byte[] written(int length) {
        byte[] bytes = new byte[length];
        ByteBuffer view = buffer.duplicate();
        view.clear();
        view.get(bytes);
        return bytes;
    }

    /**
     * Whether action {@code index} was allowed, when the native library answered in the buffer (more than
     * {@link NativeAgent#ACTIONS_IN_A_MASK} actions): it wrote one byte per action over the request, context included, so the next call writes the
     * context again.
     */
    public boolean allowedInBuffer(int index) {
        contextEnd = -1;
        return buffer.get(index) == 1;
    }

    /**
     * After a call whose answer has been read: a buffer grown past {@link #RETAINED_CAPACITY} goes back to
     * {@link #INITIAL_CAPACITY} (the next call passes the new buffer's address).
     */
    public void afterCall() {
        if (buffer.capacity() > RETAINED_CAPACITY) {
            useBuffer(INITIAL_CAPACITY);
        }
    }

    long contextWrites() {
        return contextWrites;
    }

    /** Encodes {@code authorize(context, actions)}; returns the number of bytes written. */
    public int encodeAuthorize(AuthorizableRequestContext context, List<Action> actions) {
        while (true) {
            try {
                putContext(context);
                buffer.putInt(actions.size());
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
                growFor(actions);
            }
        }
    }

    /** A flag of {@link #comparisonFlags}: GrantForge allows the action. */
    public static final int GRANTFORGE_ALLOWS = 1;
    /** A flag of {@link #comparisonFlags}: GrantForge's answer differs from Kafka's. */
    public static final int DIFFERS = 2;
    /** A flag of {@link #comparisonFlags}: the agent asks for the Kafka ACL behind Kafka's answer. */
    public static final int WANTS_KAFKA_BASIS = 4;

    /**
     * Encodes {@code authorize(context, actions)} followed by Kafka's answers (a byte each, 1 allowed), with room
     * after them for the flags {@link NativeAgent#compare} writes; returns the request's length (without the answers).
     */
    public int encodeComparison(AuthorizableRequestContext context, List<Action> actions,
                                List<AuthorizationResult> kafka) {
        int count = actions.size();
        while (true) {
            int length = encodeAuthorize(context, actions);
            if (buffer.remaining() >= 2 * count) {
                for (int i = 0; i < count; i++) {
                    buffer.put((byte) (kafka.get(i) == AuthorizationResult.ALLOWED ? 1 : 0));
                }
                return length;
            }
            useBuffer(grownCapacity(buffer.capacity(), length + 2L * count));
        }
    }

    /** The flags {@link NativeAgent#compare} wrote for action {@code index} of a request of {@code count} actions. */
    public int comparisonFlags(int requestLength, int count, int index) {
        return buffer.get(requestLength + count + index);
    }

    /** A verdict of {@link NativeAgent#hybrid} ({@code crates/grantforge-jni/src/hybrid_codec.rs}): GrantForge refuses. */
    public static final int VERDICT_REFUSED = 0;
    /** A verdict of {@link NativeAgent#hybrid}: GrantForge allows. */
    public static final int VERDICT_ALLOWED = 1;
    /** A verdict of {@link NativeAgent#hybrid}: no policy decides, Kafka's ACLs answer. */
    public static final int VERDICT_LEFT_TO_KAFKA = 2;
    /** Written over {@link #VERDICT_LEFT_TO_KAFKA} for {@link NativeAgent#settleByAcls}: Kafka's ACLs refuse. */
    public static final int VERDICT_ACLS_REFUSE = 3;
    /** Written over {@link #VERDICT_LEFT_TO_KAFKA} for {@link NativeAgent#settleByAcls}: Kafka's ACLs allow. */
    public static final int VERDICT_ACLS_ALLOW = 4;

    /**
     * Encodes {@code authorize(context, actions)} with room after it for the verdict {@link NativeAgent#hybrid}
     * writes per action; returns the request's length.
     */
    public int encodeHybrid(AuthorizableRequestContext context, List<Action> actions) {
        while (true) {
            int length = encodeAuthorize(context, actions);
            if (buffer.remaining() >= actions.size()) {
                return length;
            }
            useBuffer(grownCapacity(buffer.capacity(), length + (long) actions.size()));
        }
    }

    /** The verdict {@link NativeAgent#hybrid} wrote for action {@code index}. */
    public int hybridVerdict(int requestLength, int index) {
        return buffer.get(requestLength + index);
    }

    /**
     * Writes Kafka's answer ({@code allowed[i]}) over the verdict of each action left to its ACLs, then the ACL behind
     * each of them ({@code acls[i]}, empty where nothing is reported), as {@link NativeAgent#settleByAcls} reads them;
     * returns the length of what follows the request. A buffer too small is grown with the request kept.
     */
    public int putAclAnswers(int requestLength, int count, boolean[] allowed, String[] acls) {
        while (true) {
            try {
                buffer.clear();
                buffer.position(requestLength + count);
                for (int i = 0; i < count; i++) {
                    if (acls[i] != null) {
                        buffer.put(requestLength + i, (byte) (allowed[i] ? VERDICT_ACLS_ALLOW : VERDICT_ACLS_REFUSE));
                        putString(acls[i]);
                    }
                }
                return buffer.position() - requestLength;
            } catch (java.nio.BufferOverflowException e) {
                ByteBuffer kept = buffer;
                long needed = (long) requestLength + count + 64L * 1024;
                for (int i = 0; i < count; i++) {
                    needed += acls[i] == null ? 0 : 4 + utf8Length(acls[i]);
                }
                useBuffer(grownCapacity(kept.capacity(), needed));
                ByteBuffer copy = kept.duplicate();
                copy.clear();
                copy.limit(requestLength + count);
                buffer.put(copy);
            }
        }
    }

    /** Encodes {@code authorizeByResourceType(context, op, resourceType)}. */
    public int encodeByResourceType(AuthorizableRequestContext context, AclOperation op, ResourceType resourceType) {
        while (true) {
            try {
                putContext(context);
                buffer.put(op.code());
                buffer.put(resourceType.code());
                return buffer.position();
            } catch (java.nio.BufferOverflowException e) {
                grow();
            }
        }
    }

    /** Positions the buffer after the version and the context, writing them unless the buffer holds them. */
    private void putContext(AuthorizableRequestContext context) {
        KafkaPrincipal principal = context.principal();
        String principalType = principal == null ? "" : principal.getPrincipalType();
        String principalName = principal == null ? "" : principal.getName();
        InetAddress address = context.clientAddress();
        String listener = context.listenerName();
        String clientId = context.clientId();
        int requestType = context.requestType();
        int requestVersion = context.requestVersion();
        // InetAddress.equals compares the address bytes, which are what is written.
        if (contextEnd > 0 && requestType == lastRequestType && requestVersion == lastRequestVersion
            && Objects.equals(principalName, lastPrincipalName) && Objects.equals(principalType, lastPrincipalType)
            && Objects.equals(address, lastAddress) && Objects.equals(listener, lastListener)
            && Objects.equals(clientId, lastClientId)) {
            buffer.clear();
            buffer.position(contextEnd);
            return;
        }
        contextEnd = -1;
        contextWrites++;
        buffer.clear();
        buffer.put(VERSION);
        int lengthAt = buffer.position();
        buffer.putInt(0);
        putString(principalType);
        putString(principalName);
        byte[] raw = address == null ? new byte[0] : address.getAddress();
        buffer.put((byte) raw.length);
        buffer.put(raw);
        putString(listener);
        putString(clientId);
        buffer.putShort((short) requestType);
        buffer.putShort((short) requestVersion);
        buffer.putInt(lengthAt, buffer.position() - lengthAt - 4);
        lastPrincipalType = principalType;
        lastPrincipalName = principalName;
        lastAddress = address;
        lastListener = listener;
        lastClientId = clientId;
        lastRequestType = requestType;
        lastRequestVersion = requestVersion;
        contextEnd = buffer.position();
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
        useBuffer(grownCapacity(buffer.capacity(), (long) buffer.capacity() * 2));
    }

    /** Grows at once to what the actions need (not by doubling, re-encoding each time). */
    private void growFor(List<Action> actions) {
        long needed = 64L * 1024;
        for (Action action : actions) {
            needed += 8 + utf8Length(action.resourcePattern().name());
        }
        useBuffer(grownCapacity(buffer.capacity(), needed));
    }

    /** At least double, at least {@code needed} (plus room for the context), at most the largest array. */
    private static int grownCapacity(int capacity, long needed) {
        long grown = Math.max((long) capacity * 2, needed + (needed >> 3));
        if (capacity == Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("a request to the native agent would exceed 2 GiB");
        }
        return (int) Math.min(grown, Integer.MAX_VALUE - 8);
    }

    private static long utf8Length(String value) {
        if (value == null) {
            return 0;
        }
        long length = value.length();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c >= 0x80) {
                length += c >= 0x800 && !Character.isSurrogate(c) ? 2 : 1;
            }
        }
        return length;
    }

    private void useBuffer(int capacity) {
        buffer = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        address = addressOf.applyAsLong(buffer);
        contextEnd = -1;
    }
}
