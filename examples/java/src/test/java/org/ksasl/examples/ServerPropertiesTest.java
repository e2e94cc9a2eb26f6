package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedSaslMechanismException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.ksasl.ServerConfig;

/**
 * The example server configured from a broker's {@code server.properties} with two SASL
 * listeners ({@link KsaslKafkaServer.Builder#config}, {@code --config}), one server per
 * listener, with Kafka's own Java client: INTERNAL enables PLAIN (users from its JAAS
 * {@code user_} options) with a 2-second PLAIN session
 * ({@code listener.name.internal.plain.connections.max.reauth.ms}); EXTERNAL enables only
 * SCRAM-SHA-256 (users from the server's store) with the file's 3-second
 * {@code connections.max.reauth.ms}. On each listener the enabled mechanism logs in and keeps
 * re-authenticating with the file's session lifetime, while a mechanism the listener does not
 * enable and a wrong password are refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerPropertiesTest {
    static final long INTERNAL_PLAIN_MS = 2000;
    static final long DEFAULT_MS = 3000;
    static final long RUN_MS = 5000;
    static final long PERIOD_MS = 200;

    @TempDir
    static Path dir;
    static String properties;

    @BeforeAll
    static void writeServerProperties() throws Exception {
        Path file = dir.resolve("server.properties");
        Files.writeString(file, String.join("\n",
                "process.roles=broker",
                "node.id=0",
                "listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9093",
                "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
                "sasl.enabled.mechanisms=PLAIN",
                "listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-256",
                "connections.max.reauth.ms=" + DEFAULT_MS,
                "listener.name.internal.plain.connections.max.reauth.ms=" + INTERNAL_PLAIN_MS,
                "listener.name.internal.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule"
                        + " required username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" \\",
                "    user_alice=\"alice-plain-secret\";",
                "listener.name.external.scram-sha-256.sasl.jaas.config="
                        + "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                ""));
        properties = Files.readString(file);
    }

    @Test
    void theListenerIsNamedWhenTheFileHasSeveral() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KsaslKafkaServer.listener(properties, null));
        assertTrue(e.getMessage().contains("INTERNAL, EXTERNAL"), e.getMessage());
        assertEquals("external", KsaslKafkaServer.listener(properties, "external"));
        e = assertThrows(IllegalArgumentException.class, () -> KsaslKafkaServer.listener(properties, "CONTROLLER"));
        assertTrue(e.getMessage().contains("INTERNAL, EXTERNAL"), e.getMessage());
        // The file replaces the SASL settings: they cannot be combined.
        assertThrows(IllegalStateException.class,
                () -> KsaslKafkaServer.builder().config(properties, "INTERNAL").maxReauthMs(1000).build());
    }

    @Test
    void internalTakesPlainFromJaasWithItsOwnSessionLifetime() throws Exception {
        // alice's store password (the SCRAM one) is not her PLAIN password.
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().config(properties, "INTERNAL")
                .user("alice", "alice-scram-secret").topic("orders", 1).build()) {
            server.start();
            assertEquals("INTERNAL", server.serverSetup().listener());
            refused(server, "SCRAM-SHA-256", "alice", "alice-scram-secret", UnsupportedSaslMechanismException.class);
            refused(server, "PLAIN", "alice", "alice-scram-secret", SaslAuthenticationException.class);
            keepsReauthenticating(server, "PLAIN", "alice", "alice-plain-secret", INTERNAL_PLAIN_MS);
        }
    }

    @Test
    void externalTakesOnlyScramFromTheStore() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().config(properties, "EXTERNAL")
                .user("carol", "carol-secret").topic("orders", 1).build()) {
            server.start();
            refused(server, "PLAIN", "alice", "alice-plain-secret", UnsupportedSaslMechanismException.class);
            refused(server, "SCRAM-SHA-512", "carol", "carol-secret", UnsupportedSaslMechanismException.class);
            refused(server, "SCRAM-SHA-256", "carol", "not-the-password", SaslAuthenticationException.class);
            keepsReauthenticating(server, "SCRAM-SHA-256", "carol", "carol-secret", DEFAULT_MS);
        }
    }

    /**
     * With {@code delegation.token.secret.key}, the listener built from the file has a token
     * authority: the server serves the token APIs (listed in ApiVersions: 38-41) with it, so
     * Kafka's Admin creates a token, and a login with that token ({@code tokenauth}) is its
     * owner's.
     */
    @Test
    void theFilesTokenSecretServesDelegationTokens() throws Exception {
        String text = properties + String.join("\n",
                "delegation.token.secret.key=file-token-secret",
                "delegation.token.expiry.time.ms=600000",
                "");
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().config(text, "EXTERNAL")
                .user("carol", "carol-secret").topic("orders", 1).build()) {
            server.start();
            assertNotNull(server.serverSetup().tokens());
            assertSame(server.serverSetup().tokens(), server.tokens());
            Set<Short> keys = apiKeys(server.serverSetup().config());
            assertTrue(keys.containsAll(Set.of((short) 38, (short) 39, (short) 40, (short) 41)), keys.toString());
            org.apache.kafka.common.security.token.delegation.DelegationToken created;
            try (Admin carol = Admin.create(Clients.admin(server, "carol", "SCRAM-SHA-256",
                    Clients.jaas("SCRAM-SHA-256", "carol", "carol-secret")))) {
                created = carol.createDelegationToken().delegationToken().get(10, TimeUnit.SECONDS);
                assertEquals("carol", created.tokenInfo().owner().getName());
                assertEquals(List.of(created), carol.describeDelegationToken().delegationTokens()
                        .get(10, TimeUnit.SECONDS));
            }
            try (Admin viaToken = Admin.create(Clients.admin(server, "via-token", "SCRAM-SHA-256",
                    Clients.tokenJaas(created.tokenInfo().tokenId(), created.hmacAsBase64String())))) {
                assertEquals(Set.of("orders"), viaToken.listTopics().names().get(10, TimeUnit.SECONDS));
            }
            ConnectionStats last = server.connections().get(server.connections().size() - 1);
            assertEquals("User:carol", last.principal());
            assertTrue(last.tokenAuthenticated());
        }
        // Without the key: no authority, no token APIs.
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().config(properties, "EXTERNAL").build()) {
            assertNull(server.tokens());
            assertNull(server.serverSetup().tokens());
            assertFalse(apiKeys(server.serverSetup().config()).contains((short) 38));
        }
    }

    /** The api keys of {@code config}'s answer to an ApiVersions v0 request. */
    static Set<Short> apiKeys(ServerConfig config) throws Exception {
        // ApiVersions v0, correlation id 9, null client id.
        byte[] request = ByteBuffer.allocate(10).putShort((short) 18).putShort((short) 0).putInt(9)
                .putShort((short) -1).array();
        ByteBuffer b = ByteBuffer.wrap(config.apiVersionsResponse(request));
        b.getInt(); // length
        assertEquals(9, b.getInt());
        assertEquals(0, b.getShort());
        Set<Short> keys = new TreeSet<>();
        for (int n = b.getInt(); n > 0; n--) {
            keys.add(b.getShort());
            b.getShort();
            b.getShort();
        }
        return keys;
    }

    /** An Admin logging in with {@code mechanism} fails with {@code expected}, and the server counts no login. */
    static void refused(KsaslKafkaServer server, String mechanism, String user, String password,
            Class<? extends Throwable> expected) throws Exception {
        try (Admin admin = Admin.create(Clients.admin(server, "refused-" + mechanism, mechanism,
                Clients.jaas(mechanism, user, password)))) {
            ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> admin.listTopics().names().get(10, TimeUnit.SECONDS));
            assertInstanceOf(expected, failure.getCause(), String.valueOf(failure.getCause()));
        }
        LifecycleTest.waitFor(() -> server.connections().stream().noneMatch(ConnectionStats::isOpen));
        for (ConnectionStats c : server.connections()) {
            assertEquals(List.of(), c.authentications(), c.toString());
        }
    }

    /**
     * An Admin listing topics every 200 ms for 5 s: every call succeeds, every session has the
     * configured lifetime, and the connection that carried the requests re-authenticated.
     */
    static void keepsReauthenticating(KsaslKafkaServer server, String mechanism, String user, String password,
            long lifetimeMs) throws Exception {
        int before = server.connections().size();
        List<String> failures = new ArrayList<>();
        try (Admin admin = Admin.create(Clients.admin(server, "admin-" + mechanism, mechanism,
                Clients.jaas(mechanism, user, password)))) {
            long end = System.currentTimeMillis() + RUN_MS;
            while (System.currentTimeMillis() < end) {
                try {
                    assertEquals(Set.of("orders"), admin.listTopics().names().get(10, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    failures.add(String.valueOf(e.getCause()));
                }
                Thread.sleep(PERIOD_MS);
            }
        }
        List<ConnectionStats> mine = server.connections().subList(before, server.connections().size());
        String summary = mine.stream().map(String::valueOf).collect(Collectors.joining("\n"));
        assertEquals(List.of(), failures, summary);
        assertFalse(mine.isEmpty(), summary);
        int reauthentications = 0;
        for (ConnectionStats c : mine) {
            assertEquals(mechanism, c.mechanism(), summary);
            assertEquals("User:" + user, c.principal(), summary);
            assertFalse(c.closedForExpiry(), summary);
            for (ConnectionStats.Authentication a : c.authentications()) {
                assertEquals(lifetimeMs, a.lifetimeMs(), summary);
            }
            reauthentications += c.reauthentications();
        }
        // Kafka's client re-authenticates at 85-95 % of the lifetime before its next request.
        int expected = (int) (RUN_MS / lifetimeMs) - 1;
        int most = mine.stream().mapToInt(ConnectionStats::reauthentications).max().getAsInt();
        assertTrue(most >= Math.max(1, expected), "re-authentications: " + most + "\n" + summary);
        Map<String, Double> metrics = server.metrics();
        assertEquals(reauthentications, metrics.get("successful-reauthentication-total"), 0.0, metrics.toString());
        assertEquals(0.0, metrics.get("expired-connections-killed-count"), metrics.toString());
    }
}
