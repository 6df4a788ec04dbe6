package org.devlive.grantforge.kafka.it;

import java.util.Map;

/**
 * {@link ClientKinds} on Kafka 4.1.2, where the streams rebalance protocol is early access and share groups a
 * preview: the node enables both (the protocols, the unstable API versions and feature levels in its settings, then
 * {@code streams.version} and {@code share.version} raised to 1).
 */
class ClientKindsKafka412Test extends ClientKinds {
    ClientKindsKafka412Test() {
        super("4.1.2");
    }

    @Override
    Map<String, String> previewSettings() {
        return Map.of("group.coordinator.rebalance.protocols", "classic,consumer,streams",
                "group.share.enable", "true",
                // the streams group's requests are unstable API versions in 4.1
                "unstable.api.versions.enable", "true",
                "unstable.feature.versions.enable", "true");
    }

    @Override
    Map<String, Short> previewFeatures() {
        return Map.of("streams.version", (short) 1, "share.version", (short) 1);
    }
}
