package org.devlive.grantforge.kafka.bench;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.devlive.grantforge.kafka.it.KafkaAclSet;

/** Kafka's benchmark ACL set ({@link KafkaAclSet}) loaded into StandardAuthorizer as Kafka's benchmark does. */
final class StandardAcls {
    private StandardAcls() {
    }

    /** Adds every entry through {@code addAcl} (not yet {@code completeInitialLoad}); returns how many. */
    static long load(StandardAuthorizer target, int resourceCount, int aclCount, double denyPercentage) {
        long count = 0;
        for (AclBinding binding : KafkaAclSet.bindings(resourceCount, aclCount, denyPercentage)) {
            // Kafka's benchmark uses Uuid.randomUuid(); sequential ids keep SecureRandom out of the load time.
            target.addAcl(new Uuid(1L, ++count), StandardAcl.fromAclBinding(binding));
        }
        return count;
    }
}
