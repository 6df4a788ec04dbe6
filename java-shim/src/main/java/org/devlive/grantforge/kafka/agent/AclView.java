package org.devlive.grantforge.kafka.agent;

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
 * {@code ACL_VIEW_MAX_ROWS} of {@code crates/grantforge-kafka/src/acl.rs}). They are fetched for each
 * {@code acls(filter)} call, decoded one at a time, and only the matching ones are kept: the broker's
 * heap never holds the whole view between calls, and {@code aclCount()} asks the native library
 * for the number without fetching any row.
 */
final class AclView {
    private final long handle;

    AclView(long handle) {
        this.handle = handle;
    }

    List<AclBinding> matching(AclBindingFilter filter) {
        return decode(NativeAgent.acls(handle), filter);
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
