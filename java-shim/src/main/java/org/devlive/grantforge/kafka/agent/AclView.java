package org.devlive.grantforge.kafka.agent;

import java.lang.ref.SoftReference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.Wire;

/**
 * The policies in force as Kafka {@link AclBinding}s, filtered with Kafka's own
 * {@link AclBindingFilter#matches}, so {@code kafka-acls --list} behaves as with any authorizer.
 *
 * <p>The native library computes the rows when it applies a snapshot and again, on the agent's own thread,
 * whenever a validity period of its policies starts or ends (at most
 * {@code ACL_VIEW_MAX_ROWS} of {@code crates/grantforge-kafka/src/acl.rs}), and bumps the view's serial
 * each time. The rows are fetched and decoded once per serial, and the bindings are kept behind a
 * {@link SoftReference} until the serial changes: repeated listings cost a filter pass (as
 * StandardAuthorizer's, whose ACLs live on the heap), while the JVM may drop the decoded view under
 * memory pressure, to decode it again on the next call. {@code aclCount()} asks the native library for
 * the number without fetching any row.
 */
final class AclView {
    private final long handle;
    /** The bindings of one serial of the view, all of them, unmodifiable. */
    private volatile SoftReference<Decoded> decoded = new SoftReference<Decoded>(null);

    AclView(long handle) {
        this.handle = handle;
    }

    private static final class Decoded {
        final long serial;
        final List<AclBinding> bindings;

        Decoded(long serial, List<AclBinding> bindings) {
            this.serial = serial;
            this.bindings = bindings;
        }
    }

    /**
     * How many bindings {@link #matching} lists for the filter that matches everything, counted by the native
     * library without fetching any row: the rows of the operations this Kafka has.
     */
    int count() {
        return NativeAgent.aclCount(handle, SHOWN_OPERATIONS);
    }

    List<AclBinding> matching(AclBindingFilter filter) {
        return matching(all(), filter);
    }

    /** The bindings {@code filter} matches ({@code all} itself for the filter that matches everything). */
    static List<AclBinding> matching(List<AclBinding> all, AclBindingFilter filter) {
        if (AclBindingFilter.ANY.equals(filter)) {
            return all;
        }
        List<AclBinding> matching = new ArrayList<AclBinding>();
        for (AclBinding binding : all) {
            if (filter.matches(binding)) {
                matching.add(binding);
            }
        }
        return matching;
    }

    /**
     * Every binding of the view in force. The serial is read before the rows, so the rows are at least as
     * new as the serial they are kept under; a view that changed in between is fetched again next time.
     * One thread decodes a new view while the others wait for it (a large view is hundreds of MiB decoded,
     * docs/benchmarks.md: decoded once, not once per concurrent caller).
     */
    private List<AclBinding> all() {
        long serial = NativeAgent.aclViewSerial(handle);
        if (serial == 0) {
            // closed: let go of the kept view, list nothing
            decoded = new SoftReference<Decoded>(null);
            return Collections.emptyList();
        }
        List<AclBinding> kept = keptFor(serial);
        if (kept != null) {
            return kept;
        }
        synchronized (this) {
            kept = keptFor(serial);
            if (kept != null) {
                return kept;
            }
            List<AclBinding> bindings = Collections.unmodifiableList(decode(NativeAgent.acls(handle)));
            decoded = new SoftReference<Decoded>(new Decoded(serial, bindings));
            return bindings;
        }
    }

    private List<AclBinding> keptFor(long serial) {
        Decoded kept = decoded.get();
        return kept != null && kept.serial == serial ? kept.bindings : null;
    }

    /**
     * Every row, decoded (layout and golden bytes: {@code crates/grantforge-jni/src/acl_view.rs}); none if
     * {@code view} is null (a closed agent).
     *
     * <p>The payload holds each distinct name once and rows index them, so every row of a principal shares its
     * string, and a row of the same resource as the row before it (the rows are sorted, so a resource's rows
     * follow each other) shares its {@link ResourcePattern}: a name is on the heap once however many rows
     * name it. The decoded view is kept (see {@link #all}).
     */
    static List<AclBinding> decode(byte[] view) {
        if (view == null || view.length < 8) {
            return Collections.emptyList();
        }
        int at = 0;
        String[] names = new String[Wire.readInt(view, at)];
        at += 4;
        for (int i = 0; i < names.length; i++) {
            int length = Wire.readInt(view, at);
            names[i] = new String(view, at + 4, length, StandardCharsets.UTF_8);
            at += 4 + length;
        }
        int count = Wire.readInt(view, at);
        at += 4;
        List<AclBinding> bindings = new ArrayList<AclBinding>(count);
        Rows rows = new Rows(view, names);
        for (int i = 0; i < count; i++, at += ROW_BYTES) {
            AclBinding binding = rows.binding(at);
            if (binding != null) {
                bindings.add(binding);
            }
        }
        return bindings;
    }

    /**
     * Decodes one row at a time. A row is a call of its own, not the body of one long loop: the JIT compiles a
     * method after a few hundred calls, a loop only after tens of thousands of turns, and a first listing of a few
     * thousand rows would otherwise run interpreted to its end.
     */
    private static final class Rows {
        private final byte[] view;
        private final String[] names;
        /** The pattern of the row before, shared by the rows of its resource. */
        private ResourcePattern pattern;
        private int patternKey = -1;
        private int patternName = -1;

        Rows(byte[] view, String[] names) {
            this.view = view;
            this.names = names;
        }

        /** The binding of the row at {@code at}; null for an operation this Kafka does not have. */
        AclBinding binding(int at) {
            AclOperation operation = OPERATIONS[view[at + 10] & 0xff];
            if (operation == AclOperation.UNKNOWN) {
                return null; // an operation of a newer Kafka release than the one running, which cannot show it
            }
            int key = (view[at] & 0xff) << 8 | (view[at + 1] & 0xff);
            int name = Wire.readInt(view, at + 2);
            if (pattern == null || key != patternKey || name != patternName) {
                pattern = new ResourcePattern(RESOURCE_TYPES[key >>> 8], names[name], PATTERN_TYPES[key & 0xff]);
                patternKey = key;
                patternName = name;
            }
            String principal = names[Wire.readInt(view, at + 6)];
            AclPermissionType permission = PERMISSIONS[view[at + 11] & 0xff];
            return new AclBinding(pattern, new AccessControlEntry(principal, "*", operation, permission));
        }
    }

    /** The bytes of one row after the names. */
    private static final int ROW_BYTES = 12;

    // Kafka's codes are bytes: each enum's values by code, looked up once here rather than in a map a row.
    private static final AclOperation[] OPERATIONS = byCode(AclOperation::fromCode, AclOperation[]::new);
    private static final AclPermissionType[] PERMISSIONS = byCode(AclPermissionType::fromCode, AclPermissionType[]::new);
    private static final ResourceType[] RESOURCE_TYPES = byCode(ResourceType::fromCode, ResourceType[]::new);
    private static final PatternType[] PATTERN_TYPES = byCode(PatternType::fromCode, PatternType[]::new);

    /** The operation codes this Kafka has, bit {@code code} each: the rows {@link #count} counts. */
    private static final long SHOWN_OPERATIONS = shownOperations();

    private static long shownOperations() {
        long shown = 0;
        for (int code = 0; code < Long.SIZE; code++) {
            if (OPERATIONS[code] != AclOperation.UNKNOWN) {
                shown |= 1L << code;
            }
        }
        return shown;
    }

    private static <T> T[] byCode(Function<Byte, T> fromCode, IntFunction<T[]> array) {
        T[] byCode = array.apply(256);
        for (int code = 0; code < 256; code++) {
            byCode[code] = fromCode.apply((byte) code);
        }
        return byCode;
    }
}
