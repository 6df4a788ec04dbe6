package org.devlive.grantforge.kafka.plugin;

import java.security.Provider;
import java.security.Security;

import org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslClientProvider;

/**
 * Kafka's OAUTHBEARER client finds its SASL client through a JVM-wide security provider that the first class loader to
 * log in registers, under a fixed name; a later registration under that name is ignored. GrantForge loads the plugin
 * again in a new class loader when it rescans its plugins folder, and that loader's login would then be handed the
 * old loader's classes (a {@code ClassCastException} of Kafka's callback handler). So before each OAuth login the
 * provider under that name is made this loader's.
 */
final class OAuthProviderOfThisLoader {
    private OAuthProviderOfThisLoader() {
    }

    static void install() {
        // Security's own lock: two plugin loaders calling at once take turns
        synchronized (Security.class) {
            for (Provider installed : Security.getProviders()) {
                boolean kafkas = installed.getClass().getName().equals(OAuthBearerSaslClientProvider.class.getName());
                if (kafkas && installed.getClass() == OAuthBearerSaslClientProvider.class) {
                    return;
                }
                if (kafkas) {
                    Security.removeProvider(installed.getName());
                }
            }
            OAuthBearerSaslClientProvider.initialize();
        }
    }
}
