package org.devlive.grantforge.kafka.agent.jni;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.server.quota.ClientQuotaEntity;

/**
 * The native methods of the quota table (one per JVM, in the Rust library) and the codec of their
 * payloads, paired with {@code crates/grantforge-jni/src/native_quotas.rs}. Quota types are Kafka's
 * {@code ClientQuotaType} ordinals (PRODUCE, FETCH, REQUEST, CONTROLLER_MUTATION). Strings travel
 * as UTF-8, each behind its length (u32, little-endian). On a native error the defaults mean
 * "nothing changed" and "no limit".
 */
public final class NativeQuotas {
    private NativeQuotas() {
    }

    /**
     * The node's {@code socket.request.max.bytes}: the largest request decides the smallest bound Kafka's throttle
     * enforces, which a user's remainder may not fall below (0 or less: Kafka's default). True when that changed the
     * bounds (and so possibly a limit).
     */
    public static native boolean configure(long socketRequestMaxBytes);

    /** Kafka's {@code updateQuota}; {@code entity} from {@link #encodeEntity}. True when a value changed. */
    public static native boolean update(int quotaType, byte[] entity, double value);

    /** Kafka's {@code removeQuota}. True when a value was removed. */
    public static native boolean remove(int quotaType, byte[] entity);

    /** {@link #resolve}'s {@code notKept}: the view keeps the answer. */
    public static final int KEPT = 0;
    /** The view of the quota type is full. */
    public static final int TYPE_FULL = 1;
    /** The user holds its share of the view. */
    public static final int USER_SHARE_FULL = 2;
    /** The user and client id are too long to keep. */
    public static final int LONG_NAMES = 3;

    /**
     * The group of a connection: user tag, client-id tag, limit (f64, NaN for none); null on a native error.
     * {@code notKept} says whether the view keeps the answer ({@link #KEPT}) or why not (counted, and logged once per
     * fill, by the native library).
     */
    public static native byte[] resolve(int quotaType, byte[] user, byte[] clientId, int notKept);

    /** Kafka's {@code quotaLimit}: the limit of the group with these tags, NaN for none. */
    public static native double limitOfGroup(int quotaType, byte[] userTag, byte[] clientTag);

    /** The quota table's metrics, in the layout {@link AgentMetrics#decode} reads; null on a native error. */
    public static native byte[] stats();

    /** An entity as its (entity type name, name) pairs: count, then each type and name. */
    public static byte[] encodeEntity(ClientQuotaEntity entity) {
        List<ClientQuotaEntity.ConfigEntity> parts = entity.configEntities();
        byte[][] texts = new byte[parts.size() * 2][];
        int size = 4;
        for (int i = 0; i < parts.size(); i++) {
            texts[2 * i] = utf8(parts.get(i).entityType().name());
            texts[2 * i + 1] = utf8(parts.get(i).name());
            size += 8 + texts[2 * i].length + texts[2 * i + 1].length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(parts.size());
        for (byte[] text : texts) {
            out.putInt(text.length).put(text);
        }
        return out.array();
    }

    /** What {@link #resolve} answered: {@code [user tag, client-id tag]} and the limit. */
    public static final class Resolved {
        public final String userTag;
        public final String clientTag;
        public final double limit;

        Resolved(String userTag, String clientTag, double limit) {
            this.userTag = userTag;
            this.clientTag = clientTag;
            this.limit = limit;
        }
    }

    public static Resolved decodeResolved(byte[] answer) {
        ByteBuffer in = ByteBuffer.wrap(answer).order(ByteOrder.LITTLE_ENDIAN);
        String user = text(in);
        String client = text(in);
        return new Resolved(user, client, in.getDouble());
    }

    public static byte[] utf8(String text) {
        return (text == null ? "" : text).getBytes(StandardCharsets.UTF_8);
    }

    private static String text(ByteBuffer in) {
        byte[] bytes = new byte[in.getInt()];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
