package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link ServerConfig#fromProperties} and {@link Config#saslListeners}: the core builds a
 * listener of {@code server.properties}; the connections it configures authenticate (in
 * memory, on a virtual clock) as the file says.
 */
class ServerSetupTest {
    static final long T0 = Wire.T0;
    static final String SECRET = "jaas-secret-XYZ";

    static final String BROKER = String.join("\n",
            "listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9093,CONTROLLER://127.0.0.1:9094",
            "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_SSL,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
            "listener.name.external.sasl.enabled.mechanisms=OAUTHBEARER",
            "connections.max.reauth.ms=5000",
            "listener.name.internal.plain.connections.max.reauth.ms=2000",
            "listener.name.internal.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule"
                    + " required user_alice=\"" + SECRET + "\";",
            "listener.name.internal.scram-sha-512.sasl.jaas.config="
                    + "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "listener.name.external.oauthbearer.sasl.jaas.config="
                    + "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            "listener.name.external.sasl.login.connect.timeout.ms=4000",
            "sasl.login.read.timeout.ms=6000",
            "listener.name.external.oauthbearer.sasl.server.callback.handler.class="
                    + "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
            "listener.name.external.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=https://idp.example/jwks",
            "sasl.oauthbearer.expected.issuer=https://idp.example",
            "");

    /** The client's session lifetime after authenticating with {@code mech}, or the failure's code. */
    static Object login(ServerConfig sc, String user, String password, String mech) throws Exception {
        try (ClientConfig cc = ConnectionTest.clientConfig(user, password, mech, ReauthTiming.KAFKA)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            try {
                p.client.start(T0);
                p.pump(T0);
                return p.client.isReady() ? (Object) p.client.session().lifetimeMs() : p.closed;
            } catch (KsaslException e) {
                return e.codeName();
            } finally {
                p.client.close();
                p.server.close();
            }
        }
    }

    @Test
    void listsTheSaslListeners() throws Exception {
        assertEquals(List.of("INTERNAL", "EXTERNAL"), Config.saslListeners(BROKER));
        assertEquals(List.of(), Config.saslListeners("sasl.enabled.mechanisms=PLAIN\n"));
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                () -> Config.saslListeners("listeners=OTHER://:1\nlistener.security.protocol.map=A:SASL_SSL\n"));
        assertEquals("INVALID_CONFIG", e.codeName());
    }

    @Test
    void choosesTheListenerToServe() throws Exception {
        assertEquals("external", Config.chooseListener(BROKER, "external"));
        assertEquals("L", Config.chooseListener("sasl.enabled.mechanisms=PLAIN\n", "L"));
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class, () -> Config.chooseListener(BROKER, null));
        assertEquals("INVALID_CONFIG", e.codeName());
        assertTrue(e.getMessage().contains("INTERNAL, EXTERNAL"), e.getMessage());
    }

    @Test
    void aListenerAuthenticatesAsTheFileSays() throws Exception {
        try (CredentialStore scram = new CredentialStore();
                ServerSetup setup = ServerConfig.fromProperties(BROKER, "internal", scram)) {
            scram.addUser("bob", "bob-secret"); // the store is live: added after the build
            assertEquals("internal", setup.listener());
            assertEquals(List.of(), setup.jwks());
            ServerConfig sc = setup.config();
            assertEquals(2000L, login(sc, "alice", SECRET, "PLAIN"));
            assertEquals(5000L, login(sc, "bob", "bob-secret", "SCRAM-SHA-512"));
            // PLAIN users come from JAAS only, SCRAM users from the store only.
            assertFalse(login(sc, "bob", "bob-secret", "PLAIN") instanceof Long);
            assertFalse(login(sc, "alice", SECRET, "SCRAM-SHA-512") instanceof Long);
            assertFalse(login(sc, "alice", "wrong", "PLAIN") instanceof Long);
            // Not enabled on this listener.
            assertFalse(login(sc, "bob", "bob-secret", "SCRAM-SHA-256") instanceof Long);
        }
    }

    @Test
    void withoutAStoreNoScramUserExists() throws Exception {
        try (ServerSetup setup = ServerConfig.fromProperties(BROKER, "INTERNAL", null)) {
            assertEquals(2000L, login(setup.config(), "alice", SECRET, "PLAIN"));
            assertFalse(login(setup.config(), "alice", SECRET, "SCRAM-SHA-512") instanceof Long);
        }
    }

    @Test
    void jwksValidatorsComeWithTheirEndpoints() throws Exception {
        ServerSetup setup = ServerConfig.fromProperties(BROKER, "EXTERNAL", null);
        try {
            assertEquals(1, setup.jwks().size());
            ServerSetup.Jwks j = setup.jwks().get(0);
            assertEquals("https://idp.example/jwks", j.url());
            assertEquals(Map.of("sasl.login.connect.timeout.ms", "4000", "sasl.login.read.timeout.ms", "6000"),
                    j.settings());
            // No key yet: the host fetches them (a past time says "now").
            assertEquals(Long.MIN_VALUE, j.validator().nextRefreshMs());
            try (JwksEndpoint endpoint = j.endpoint()) {
                assertFalse(endpoint.isClosed());
            }
            setup.close();
            assertTrue(j.validator().isClosed());
            assertTrue(setup.config().isClosed());
        } finally {
            setup.close();
        }
    }

    @Test
    void gssapiNamesWhatIsMissing() {
        String text = String.join("\n",
                "sasl.enabled.mechanisms=GSSAPI",
                "listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule"
                        + " required useKeyTab=true keyTab=\"/etc/kafka.keytab\" principal=\"kafka/h@R\";",
                "sasl.kerberos.service.name=kafka", "");
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> ServerConfig.fromProperties(text, "SASL_PLAINTEXT", null));
        assertTrue(e.getMessage().contains("GSSAPI") && e.getMessage().contains("principal.to.local.rules"),
                e.getMessage());
    }

    @Test
    void badSettingsAreNamedWithoutTheirSecrets() {
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                () -> ServerConfig.fromProperties(BROKER.replace("=5000", "=soon"), "INTERNAL", null));
        assertEquals("INVALID_CONFIG", e.codeName());
        assertTrue(e.getMessage().contains("connections.max.reauth.ms"), e.getMessage());
        assertFalse(e.toString().contains(SECRET));
        e = assertThrows(KsaslArgumentException.class,
                () -> ServerConfig.fromProperties(BROKER.replace("required user_alice", "requird user_alice"), "INTERNAL", null)
                        .close());
        assertFalse(e.toString().contains(SECRET), e.toString());
        assertThrows(NullPointerException.class, () -> ServerConfig.fromProperties(BROKER, null, null));
    }
}
