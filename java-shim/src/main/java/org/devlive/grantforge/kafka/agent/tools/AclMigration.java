package org.devlive.grantforge.kafka.agent.tools;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.Wire;

/**
 * Kafka's ACL bindings as GrantForge policies, as the native library maps them
 * ({@code grantforge_kafka::migrate_acls}); this class only carries the payloads of
 * {@code NativeAgent.migrateAcls}, whose layout is at the top of {@code crates/grantforge-jni/src/acl_migration.rs}.
 */
final class AclMigration {
    /** Left out: no policy expresses the ACL exactly. */
    static final int NOT_MIGRATED = 1;
    /** Migrated as a deny, which in GrantForge also denies what the operation implies. */
    static final int DENY_COVERS_IMPLIED = 2;
    /** Migrated as a policy of a GrantForge group, which applies to the group's users. */
    static final int GROUP_MEMBERS = 3;

    /** One line of the report about the ACL at index {@code acl} of the migrated list. */
    static final class Entry {
        final int acl;
        final int finding;
        /** The operations the agent refuses, where Kafka allowed them, because of this finding. */
        final Set<AclOperation> narrowed;
        final String message;

        Entry(int acl, int finding, Set<AclOperation> narrowed, String message) {
            this.acl = acl;
            this.finding = finding;
            this.narrowed = narrowed;
            this.message = message;
        }
    }

    /** The native library could not migrate (a malformed request, or a snapshot that would not load). */
    static final class MigrationException extends Exception {
        private static final long serialVersionUID = 1L;

        MigrationException(String message) {
            super(message);
        }
    }

    /** The setting that runs an agent on {@link #snapshotJson} written to a file (the native side's key). */
    final String policyFileKey;
    final String snapshotJson;
    final String policyRequestsJson;
    final String reportText;
    final List<Entry> report;

    private AclMigration(String policyFileKey, String snapshotJson, String policyRequestsJson, String reportText,
                         List<Entry> report) {
        this.policyFileKey = policyFileKey;
        this.snapshotJson = snapshotJson;
        this.policyRequestsJson = policyRequestsJson;
        this.reportText = reportText;
        this.report = report;
    }

    /**
     * The report's entries whose ACL, as migrated, can allow more than Kafka did: a DENY left out,
     * and any ACL of a {@code Group:} principal (migrated to a GrantForge group, whose members are
     * users, not Kafka's {@code Group:} principals: its ALLOW reaches those users, its DENY misses
     * the principal).
     */
    List<Entry> widening(List<AclBinding> acls) {
        List<Entry> widening = new ArrayList<>();
        for (Entry entry : report) {
            boolean deny = acls.get(entry.acl).entry().permissionType() == AclPermissionType.DENY;
            if (entry.finding == GROUP_MEMBERS || (entry.finding == NOT_MIGRATED && deny)) {
                widening.add(entry);
            }
        }
        return widening;
    }

    /** Maps {@code acls} to policies of the service {@code service}; the report's indexes are into {@code acls}. */
    static AclMigration migrate(String service, List<AclBinding> acls) throws MigrationException {
        byte[] answer = NativeAgent.migrateAcls(encodeRequest(service, acls));
        if (answer == null || answer.length == 0) {
            throw new MigrationException("the native library failed; nothing was migrated");
        }
        return decodeAnswer(answer);
    }

    static byte[] encodeRequest(String service, List<AclBinding> acls) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Wire.writeString(out, service);
        Wire.writeInt(out, acls.size());
        for (AclBinding acl : acls) {
            out.write(acl.pattern().resourceType().code());
            out.write(acl.pattern().patternType().code());
            Wire.writeString(out, acl.pattern().name());
            Wire.writeString(out, acl.entry().principal());
            Wire.writeString(out, acl.entry().host());
            out.write(acl.entry().operation().code());
            out.write(acl.entry().permissionType().code());
        }
        return out.toByteArray();
    }

    static AclMigration decodeAnswer(byte[] answer) throws MigrationException {
        ByteBuffer in = ByteBuffer.wrap(answer).order(ByteOrder.LITTLE_ENDIAN);
        if (in.get() != 0) {
            throw new MigrationException(Wire.readString(in));
        }
        String policyFileKey = Wire.readString(in);
        String snapshot = Wire.readString(in);
        String requests = Wire.readString(in);
        String text = Wire.readString(in);
        int count = in.getInt();
        List<Entry> entries = new ArrayList<Entry>(count);
        for (int i = 0; i < count; i++) {
            int acl = in.getInt();
            int finding = in.get();
            int n = in.get() & 0xff;
            Set<AclOperation> narrowed = EnumSet.noneOf(AclOperation.class);
            for (int k = 0; k < n; k++) {
                narrowed.add(AclOperation.fromCode(in.get()));
            }
            entries.add(new Entry(acl, finding, narrowed, Wire.readString(in)));
        }
        return new AclMigration(policyFileKey, snapshot, requests, text, Collections.unmodifiableList(entries));
    }
}
