package org.devlive.grantforge.kafka.it;

import java.util.Map;

/** {@link ClientKinds} on Kafka 4.4.0, where streams and share groups are served by default. */
class ClientKindsKafka440Test extends ClientKinds {
    ClientKindsKafka440Test() {
        super("4.4.0");
    }

    @Override
    Map<String, String> previewSettings() {
        return Map.of();
    }

    @Override
    Map<String, Short> previewFeatures() {
        return Map.of();
    }
}
