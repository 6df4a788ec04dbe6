package org.devlive.grantforge.kafka.agent;

import java.lang.ref.SoftReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
        List<AclBinding> all = all();
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
     */
    private List<AclBinding> all() {
        long serial = NativeAgent.aclViewSerial(handle);
        Decoded kept = decoded.get();
        if (kept != null && serial != 0 && kept.serial == serial) {
            return kept.bindings;
        }
        List<AclBinding> bindings = Collections.unmodifiableList(decode(NativeAgent.acls(handle), AclBindingFilter.ANY));
        if (serial != 0) {
            decoded = new SoftReference<Decoded>(new Decoded(serial, bindings));
        }
        return bindings;
    }

    /**
     * The rows {@code filter} matches, decoded one at a time (layout and golden bytes:
     * {@code crates/grantforge-jni/src/acl_view.rs}); none if {@code rows} is null (a closed agent).
     */
    static List<AclBinding> decode(byte[] rows, AclBindingFilter filter) {
        if (rows == null || rows.length < 4) {
            return Collections.emptyList();
        }
        ByteBuffer in = ByteBuffer.wrap(rows).order(ByteOrder.LITTLE_ENDIAN);
        int count = in.getInt();
        List<AclBinding> matching = new ArrayList<AclBinding>();
        for (int i = 0; i < count; i++) {
            ResourceType type = ResourceType.fromCode(in.get());
            PatternType patternType = PatternType.fromCode(in.get());
            String name = Wire.readString(in);
            String principal = Wire.readString(in);
            AclOperation operation = AclOperation.fromCode(in.get());
            AclPermissionType permission = AclPermissionType.fromCode(in.get());
            AclBinding binding = new AclBinding(new ResourcePattern(type, name, patternType),
                new AccessControlEntry(principal, "*", operation, permission));
            if (filter.matches(binding)) {
                matching.add(binding);
            }
        }
        return matching;
    }
}
