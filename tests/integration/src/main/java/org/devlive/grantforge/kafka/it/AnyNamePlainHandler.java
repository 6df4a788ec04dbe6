package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.plain.PlainAuthenticateCallback;
import org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler;

/**
 * A node's SASL/PLAIN server callback for principals whose names a JAAS file cannot hold ({@code ,}, {@code =},
 * {@code *}, spaces, non-ASCII, as TLS distinguished names have them): any name with the password
 * {@link #PASSWORD} is accepted; every other login is checked by Kafka's own handler against the listener's JAAS
 * users. Named in {@code listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class}, with the harness's
 * classes on the node's class path.
 */
public class AnyNamePlainHandler implements AuthenticateCallbackHandler {
    /** The password of every name this handler accepts on its own. */
    public static final String PASSWORD = "any-name-secret";
    /** The server property that names this class. */
    public static final String PROPERTY = "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class";

    private final PlainServerCallbackHandler jaasUsers = new PlainServerCallbackHandler();

    @Override
    public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
        jaasUsers.configure(configs, saslMechanism, jaasConfigEntries);
    }

    @Override
    public void handle(Callback[] callbacks) throws IOException, UnsupportedCallbackException {
        for (Callback callback : callbacks) {
            if (callback instanceof PlainAuthenticateCallback plain && PASSWORD.equals(new String(plain.password()))) {
                plain.authenticated(nameIn(callbacks) != null);
                return;
            }
        }
        jaasUsers.handle(callbacks);
    }

    private static String nameIn(Callback[] callbacks) {
        for (Callback callback : callbacks) {
            if (callback instanceof NameCallback name) {
                return name.getDefaultName();
            }
        }
        return null;
    }

    @Override
    public void close() {
        jaasUsers.close();
    }
}
