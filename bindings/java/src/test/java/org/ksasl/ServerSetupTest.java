package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.File;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
    void jwksValidationComesWithItsEndpoints() throws Exception {
        ServerSetup setup = ServerConfig.fromProperties(BROKER, "EXTERNAL", null);
        try {
            assertEquals(1, setup.jwks().size());
            assertNull(setup.tokens());
            ServerSetup.Jwks j = setup.jwks().get(0);
            assertEquals("https://idp.example/jwks", j.url());
            JwksEndpoint endpoint = j.endpoint();
            assertFalse(endpoint.isClosed());
            setup.close();
            assertTrue(endpoint.isClosed());
            assertTrue(setup.config().isClosed());
        } finally {
            setup.close();
        }
    }

    /**
     * The file's JWKS endpoint (here a local HTTP server serving the vectors' key set) is the
     * configuration's validator: a token signed by a key not fetched yet is held for a fetch and
     * authenticates.
     */
    @Test
    void theFilesJwksEndpointValidatesTokens() throws Exception {
        JsonNode v = new ObjectMapper().readTree(
                new File(System.getProperty("ksasl.vectors", "../../tests/vectors"), "jwt.json"));
        long now = v.get("now_ms").asLong();
        String token = null;
        for (JsonNode t : v.get("tokens")) {
            if (t.get("name").asText().equals("rs256")) {
                token = t.get("token").asText();
            }
        }
        byte[] jwks = v.get("jwks").toString().getBytes(StandardCharsets.UTF_8);
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/jwks", x -> {
            x.getResponseHeaders().add("Content-Type", "application/json");
            x.sendResponseHeaders(200, jwks.length);
            try (OutputStream o = x.getResponseBody()) {
                o.write(jwks);
            }
        });
        http.start();
        String text = String.join("\n",
                "sasl.enabled.mechanisms=OAUTHBEARER",
                "listener.name.l.oauthbearer.sasl.jaas.config="
                        + "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
                "listener.name.l.oauthbearer.sasl.server.callback.handler.class="
                        + "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
                "sasl.oauthbearer.jwks.endpoint.url=http://127.0.0.1:" + http.getAddress().getPort() + "/jwks",
                "sasl.oauthbearer.expected.issuer=" + v.get("issuer").asText(),
                "sasl.oauthbearer.expected.audience=" + v.get("audience").asText(),
                "");
        try (ServerSetup setup = ServerConfig.fromProperties(text, "L", null);
                Refresher r = new Refresher();
                MechanismRegistry clients = new MechanismRegistry().addOAuthBearerClient(r)) {
            assertEquals(1, setup.jwks().size());
            r.setToken(token, now + 60_000, "alice", Map.of(), now);
            try (ClientConfig cc = ClientConfig.builder(clients, "OAUTHBEARER").build()) {
                // Nothing fetched yet: the endpoint fetches the key set for the token's unknown
                // key instead of refusing it (a bare validator without keys would refuse it).
                Wire.Pair p = new Wire.Pair(cc, setup.config());
                try {
                    p.client.start(now);
                    p.pump(now);
                    assertTrue(p.server.isReady(), String.valueOf(p.closed));
                    assertEquals("alice", p.server.session().outcome().principalName());
                } finally {
                    p.client.close();
                    p.server.close();
                }
            }
            assertEquals(4, setup.jwks().get(0).endpoint().fetch(now));
        } finally {
            http.stop(0);
        }
    }

    /** The api keys (with their ranges) of {@code sc}'s ApiVersions v0 answer. */
    static Map<Short, List<Short>> apiVersions(ServerConfig sc) throws KsaslException {
        // ApiVersions v0, correlation id 9, null client id.
        byte[] req = ByteBuffer.allocate(10).putShort((short) 18).putShort((short) 0).putInt(9).putShort((short) -1)
                .array();
        ByteBuffer b = ByteBuffer.wrap(sc.apiVersionsResponse(req));
        assertEquals(b.remaining() - 4, b.getInt());
        assertEquals(9, b.getInt());
        assertEquals(0, b.getShort());
        Map<Short, List<Short>> out = new TreeMap<>();
        for (int i = b.getInt(); i > 0; i--) {
            out.put(b.getShort(), List.of(b.getShort(), b.getShort()));
        }
        return out;
    }

    @Test
    void delegationTokensComeWithTheirAuthority() throws Exception {
        String text = BROKER + String.join("\n",
                "delegation.token.secret.key=token-key-" + SECRET,
                "delegation.token.max.lifetime.ms=600000",
                "delegation.token.expiry.time.ms=60000",
                "");
        ServerSetup setup = ServerConfig.fromProperties(text, "INTERNAL", null);
        try {
            TokenAuthority tokens = setup.tokens();
            assertNotNull(tokens);
            Map<Short, List<Short>> apis = apiVersions(setup.config());
            for (short key = 38; key <= 41; key++) {
                assertTrue(apis.containsKey(key), "api " + key + " in " + apis);
            }
            // A token of the authority logs in with SCRAM (tokenauth), for its owner.
            DelegationToken t = tokens.create("User:bob", T0);
            assertEquals(T0 + 60_000, t.expiryMs());
            try (MechanismRegistry r = new MechanismRegistry().addTokenClients(t.tokenId(), t.hmacBase64());
                    ClientConfig cc = ClientConfig.builder(r, "SCRAM-SHA-512").build()) {
                Wire.Pair p = new Wire.Pair(cc, setup.config());
                try {
                    p.client.start(T0);
                    p.pump(T0);
                    assertTrue(p.server.isReady(), String.valueOf(p.closed));
                    assertEquals("User:bob", p.server.session().principal());
                    assertTrue(p.server.session().outcome().tokenAuthenticated());
                } finally {
                    p.client.close();
                    p.server.close();
                }
            }
            setup.close();
            assertTrue(tokens.isClosed());
        } finally {
            setup.close();
        }
        // Without the key: no authority, no token APIs.
        try (ServerSetup plain = ServerConfig.fromProperties(BROKER, "INTERNAL", null)) {
            assertNull(plain.tokens());
            assertFalse(apiVersions(plain.config()).containsKey((short) 38));
        }
    }

    @Test
    void gssapiListenersReadTheirKeytabWhenBuilt() {
        String text = String.join("\n",
                "sasl.enabled.mechanisms=GSSAPI",
                "listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule"
                        + " required useKeyTab=true keyTab=\"/nonexistent/kafka.keytab\" principal=\"kafka/h@R\";",
                "sasl.kerberos.service.name=kafka", "");
        Exception e = assertThrows(Exception.class,
                () -> ServerConfig.fromProperties(text, "SASL_PLAINTEXT", null));
        assertEquals("INVALID_CONFIG", ((KsaslError) e).codeName());
        assertTrue(e.getMessage().contains("listener SASL_PLAINTEXT: GSSAPI: ")
                && e.getMessage().contains("/nonexistent/kafka.keytab"), e.getMessage());
    }

    @Test
    void theListenersAddressComesFromListeners() throws KsaslException {
        String text = "listeners=PLAIN://:9092,INTERNAL://127.0.0.1:9093,V6://[::1]:0\n";
        assertEquals(Optional.of(new Config.ListenerAddress("127.0.0.1", 9093)), Config.listenerAddress(text, "internal"));
        assertEquals(Optional.of(new Config.ListenerAddress("", 9092)), Config.listenerAddress(text, "PLAIN"));
        assertEquals(Optional.of(new Config.ListenerAddress("::1", 0)), Config.listenerAddress(text, "v6"));
        assertEquals(Optional.empty(), Config.listenerAddress(text, "OTHER"));
        assertEquals(Optional.empty(), Config.listenerAddress("sasl.enabled.mechanisms=PLAIN\n", "X"));
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                () -> Config.listenerAddress("listeners=L://h:x\n", "L"));
        assertTrue(e.getMessage().contains("listeners"), e.getMessage());
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
