package org.devlive.grantforge.kafka.bench;

import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;

/** Kafka's benchmark ACL set ({@link KafkaAclSet}) loaded into StandardAuthorizer as Kafka's benchmark does. */
final class StandardAcls {
    private StandardAcls() {
    }

    /** Adds every entry through {@code addAcl} (not yet {@code completeInitialLoad}); returns how many. */
    static long load(StandardAuthorizer target, int resourceCount, int aclCount, double denyPercentage) {
        final long[] count = {0};
        KafkaAclSet.generate(resourceCount, aclCount, denyPercentage, new KafkaAclSet.Sink() {
            @Override
            public void pattern(ResourceType type, String name, PatternType patternType, List<String> allowUsers,
                                List<String> denyUsers, List<String> allowHosts, List<String> denyHosts) {
                ResourcePattern pattern = new ResourcePattern(type, name, patternType);
                if (allowHosts == null) {
                    for (String user : allowUsers) {
                        add(pattern, user, "*", AclPermissionType.ALLOW);
                    }
                    for (String user : denyUsers) {
                        add(pattern, user, "*", AclPermissionType.DENY);
                    }
                } else {
                    for (String host : allowHosts) {
                        add(pattern, allowUsers.get(0), host, AclPermissionType.ALLOW);
                    }
                    for (String host : denyHosts) {
                        add(pattern, denyUsers.get(0), host, AclPermissionType.DENY);
                    }
                }
            }

            private void add(ResourcePattern pattern, String user, String host, AclPermissionType permission) {
                AccessControlEntry entry = new AccessControlEntry("User:" + user, host, AclOperation.READ,
                    permission);
                // Kafka's benchmark uses Uuid.randomUuid(); sequential ids keep SecureRandom out of the load time.
                target.addAcl(new Uuid(1L, ++count[0]), StandardAcl.fromAclBinding(new AclBinding(pattern, entry)));
            }
        });
        return count[0];
    }
}
