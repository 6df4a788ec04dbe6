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
 * The policies in force as Kafka {@link AclBinding}s, decoded once per snapshot (the native
 * library computes the rows when it applies a snapshot) and filtered with Kafka's own
 * {@link AclBindingFilter#matches}, so {@code kafka-acls --list} behaves as with any authorizer.
 */
final class AclView {
    private final long handle;
    private long generation = Long.MIN_VALUE;
    private List<AclBinding> bindings = Collections.emptyList();

    AclView(long handle) {
        this.handle = handle;
    }

    synchronized List<AclBinding> bindings() {
        long now = NativeAgent.generation(handle);
        if (now != generation) {
            bindings = decode(NativeAgent.acls(handle));
            generation = now;
        }
        return bindings;
    }

    List<AclBinding> matching(AclBindingFilter filter) {
        List<AclBinding> all = bindings();
        List<AclBinding> matching = new ArrayList<AclBinding>();
        for (AclBinding binding : all) {
            if (filter.matches(binding)) {
                matching.add(binding);
            }
        }
        return matching;
    }

    private static List<AclBinding> decode(byte[] rows) {
        if (rows == null) {
            return Collections.emptyList();
        }
        ByteBuffer in = ByteBuffer.wrap(rows).order(ByteOrder.LITTLE_ENDIAN);
        int count = in.getInt();
        List<AclBinding> bindings = new ArrayList<AclBinding>(count);
        for (int i = 0; i < count; i++) {
            ResourceType type = ResourceType.fromCode(in.get());
            PatternType patternType = PatternType.fromCode(in.get());
            String name = Wire.readString(in);
            String principal = Wire.readString(in);
            AclOperation operation = AclOperation.fromCode(in.get());
            AclPermissionType permission = AclPermissionType.fromCode(in.get());
            bindings.add(new AclBinding(new ResourcePattern(type, name, patternType),
                new AccessControlEntry(principal, "*", operation, permission)));
        }
        return Collections.unmodifiableList(bindings);
    }
}
