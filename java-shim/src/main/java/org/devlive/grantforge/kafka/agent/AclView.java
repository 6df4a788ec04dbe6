package org.devlive.grantforge.kafka.agent;

import java.lang.ref.SoftReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

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
     * One thread decodes a new view while the others wait for it (a view of 1,000,000 rows is about 150 MiB
     * decoded: decoded once, not once per concurrent caller).
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
     * {@code rows} is null (a closed agent).
     *
     * <p>Strings are made straight from {@code rows}, and shared where the rows repeat them: a row of the same
     * resource as the row before it (the rows are sorted, so a resource's rows follow each other) shares its
     * {@link ResourcePattern}, and principals come through a small cache. The decoded view is kept (see
     * {@link #all}), and sharing makes it smaller: 153 instead of 221 MiB of heap for 1,000,000 rows, and its
     * first listing faster at 200k resources (92–125 instead of 166–181 ms; {@code docs/benchmarks.md}).
     */
    static List<AclBinding> decode(byte[] rows) {
        if (rows == null || rows.length < 4) {
            return Collections.emptyList();
        }
        ByteBuffer in = ByteBuffer.wrap(rows).order(ByteOrder.LITTLE_ENDIAN);
        int count = in.getInt();
        List<AclBinding> bindings = new ArrayList<AclBinding>();
        Principals principals = new Principals(rows);
        ResourcePattern pattern = null;
        int patternAt = 0;
        int patternLength = 0;
        for (int i = 0; i < count; i++) {
            int at = in.position();
            in.position(at + 2);
            int nameLength = in.getInt();
            int nameAt = in.position();
            in.position(nameAt + nameLength);
            // type, pattern type and name: the same bytes as the previous row's, the same pattern
            if (pattern == null || !sameBytes(rows, patternAt, patternLength, at, nameAt + nameLength - at)) {
                pattern = new ResourcePattern(ResourceType.fromCode(rows[at]),
                    new String(rows, nameAt, nameLength, StandardCharsets.UTF_8), PatternType.fromCode(rows[at + 1]));
                patternAt = at;
                patternLength = nameAt + nameLength - at;
            }
            String principal = principals.read(in);
            AclOperation operation = AclOperation.fromCode(in.get());
            AclPermissionType permission = AclPermissionType.fromCode(in.get());
            bindings.add(new AclBinding(pattern, new AccessControlEntry(principal, "*", operation, permission)));
        }
        return bindings;
    }

    private static boolean sameBytes(byte[] bytes, int a, int aLength, int b, int bLength) {
        if (aLength != bLength) {
            return false;
        }
        for (int i = 0; i < aLength; i++) {
            if (bytes[a + i] != bytes[b + i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Principal strings of one call, shared: a direct-mapped cache of the last principal seen per slot (a view
     * has few distinct principals, each on many rows), checked byte for byte, so a collision only costs a new
     * string.
     */
    private static final class Principals {
        private static final int SLOTS = 64;
        private final byte[] rows;
        private final String[] strings = new String[SLOTS];
        private final int[] offsets = new int[SLOTS];
        private final int[] lengths = new int[SLOTS];

        Principals(byte[] rows) {
            this.rows = rows;
        }

        String read(ByteBuffer in) {
            int length = in.getInt();
            int at = in.position();
            in.position(at + length);
            int slot = length == 0 ? 0 : (length * 31 + rows[at] * 7 + rows[at + length - 1]) & (SLOTS - 1);
            String cached = strings[slot];
            if (cached != null && sameBytes(rows, offsets[slot], lengths[slot], at, length)) {
                return cached;
            }
            String principal = new String(rows, at, length, StandardCharsets.UTF_8);
            strings[slot] = principal;
            offsets[slot] = at;
            lengths[slot] = length;
            return principal;
        }
    }
}
