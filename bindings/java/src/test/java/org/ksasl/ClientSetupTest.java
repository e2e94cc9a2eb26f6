package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * {@link ClientSetup}: the core builds a client from Kafka's or librdkafka's property names; the
 * connections it configures authenticate (in memory, on a virtual clock) against a broker.
 */
class ClientSetupTest {
    static final long T0 = Wire.T0;
    static final String SECRET = "client-secret-Q7Z";

    static final String PLAIN_KAFKA = String.join("\n",
            "security.protocol=SASL_PLAINTEXT",
            "sasl.mechanism=PLAIN",
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
                    + " username=\"alice\" password=\"" + SECRET + "\";",
            "");

    static final String OAUTH_UNSECURED = String.join("\n",
            "security.protocol=SASL_PLAINTEXT",
            "sasl.mechanism=OAUTHBEARER",
            "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
                    + " unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"60\";",
            "sasl.login.refresh.window.factor=0.5",
            "sasl.login.refresh.window.jitter=0",
            "sasl.login.refresh.min.period.seconds=0",
            "sasl.login.refresh.buffer.seconds=0",
            "");

    /** A broker with PLAIN, SCRAM (alice / SECRET in a store) and unsecured OAUTHBEARER. */
    static ServerConfig broker(CredentialStore store) throws KsaslException {
        store.addUser("alice", SECRET);
        try (MechanismRegistry r = new MechanismRegistry().addPasswordServers(store).addOAuthBearerServer()) {
            return ServerConfig.builder(r).build();
        }
    }

    /** The principal the server authenticated with {@code client}, or how it failed. */
    static String authenticate(ClientConfig client, long now) throws KsaslException {
        try (CredentialStore store = new CredentialStore(); ServerConfig server = broker(store)) {
            Wire.Pair p = new Wire.Pair(client, server);
            try {
                p.client.start(now);
                p.pump(now);
                if (p.closed != null || !p.client.isReady() || !p.server.isReady()) {
                    return "failed: " + p.closed;
                }
                return p.server.session().outcome().principalName();
            } catch (KsaslAuthenticationException e) {
                return "failed: " + e.codeName();
            } finally {
                p.client.close();
                p.server.close();
            }
        }
    }

    @Test
    void kafkaPlainAuthenticates() throws Exception {
        try (ClientSetup s = ClientSetup.fromProperties(PLAIN_KAFKA)) {
            assertEquals("PLAIN", s.mechanism());
            assertEquals("SASL_PLAINTEXT", s.securityProtocol());
            assertEquals(ClientSetup.Login.READY, s.login());
            assertNull(s.refresher());
            assertNull(s.kerberosServiceName());
            assertEquals(List.of(), s.unknown());
            assertEquals("alice", s.effective().get("username"));
            assertEquals("[hidden]", s.effective().get("password"));
            assertEquals(List.of("security.protocol", "sasl.mechanism"),
                    s.effective().keySet().stream().limit(2).toList());
            assertEquals("alice", authenticate(s.config(), T0));
        }
    }

    @Test
    void librdkafkaScramAuthenticates() throws Exception {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("security.protocol", "SASL_SSL");
        props.put("sasl.mechanisms", "SCRAM-SHA-256");
        props.put("sasl.username", "alice");
        props.put("sasl.password", SECRET);
        props.put("sasl.bogus", "1");
        try (ClientSetup s = ClientSetup.fromMap(props)) {
            assertEquals("SCRAM-SHA-256", s.mechanism());
            assertEquals("SASL_SSL", s.securityProtocol());
            assertEquals(ClientSetup.Login.READY, s.login());
            assertEquals(List.of("sasl.bogus"), s.unknown());
            assertEquals("alice", authenticate(s.config(), T0));
            // A wrong password: the broker refuses it.
            props.put("sasl.password", "wrong");
            try (ClientSetup w = ClientSetup.fromMap(props)) {
                assertTrue(authenticate(w.config(), T0).startsWith("failed: "));
            }
        }
    }

    @Test
    void unsecuredOAuthBearerRefreshesOnKafkasSchedule() throws Exception {
        ClientSetup s = ClientSetup.fromProperties(OAUTH_UNSECURED);
        try {
            assertEquals(ClientSetup.Login.READY, s.login());
            Refresher r = s.refresher();
            assertNotNull(r);
            assertEquals(OptionalLong.of(0), r.nextDeadline()); // nothing held yet: due at once
            assertTrue(r.runDue(T0)); // the refresher's own login makes the first token
            OAuthBearerToken t = r.current(T0);
            assertEquals("alice", t.principal());
            assertEquals(T0 + 60_000, t.expiryMs());
            assertEquals(1, r.generation());
            // Window factor 0.5, no jitter, no minimum period, no buffer: half the lifetime.
            assertEquals(OptionalLong.of(T0 + 30_000), r.nextDeadline());
            assertFalse(r.runDue(T0 + 29_999));
            assertEquals("0.5", s.effective().get("sasl.login.refresh.window.factor"));
            // The configuration's client presents the refresher's token: the same refresher.
            assertEquals("alice", authenticate(s.config(), T0 + 1));
            assertTrue(r.runDue(T0 + 30_000));
            assertEquals(2, r.generation());
            assertEquals(T0 + 90_000, r.current(T0 + 30_000).expiryMs());
            s.close();
            assertTrue(r.isClosed());
            assertTrue(s.config().isClosed());
        } finally {
            s.close();
        }
    }

    @Test
    void aRefresherWithoutItsOwnLoginDoesNotRunOne() throws Exception {
        try (Refresher r = new Refresher()) {
            assertFalse(r.runDue(T0)); // due, but no callback: answered as a failure
            assertThrows(KsaslCredentialException.class, () -> r.current(T0));
        }
    }

    @Test
    void invalidTextNamesTheKeyWithoutSecrets() throws Exception {
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                () -> ClientSetup.fromProperties(OAUTH_UNSECURED.replace("window.factor=0.5", "window.factor=2")));
        assertEquals("INVALID_CONFIG", e.codeName());
        assertTrue(e.getMessage().contains("sasl.login.refresh.window.factor"), e.getMessage());
        e = assertThrows(KsaslArgumentException.class,
                () -> ClientSetup.fromProperties(PLAIN_KAFKA.replace("required", "requird")));
        assertEquals("INVALID_CONFIG", e.codeName());
        assertTrue(e.getMessage().contains("sasl.jaas.config"), e.getMessage());
        assertFalse(e.toString().contains(SECRET), e.toString());
        e = assertThrows(KsaslArgumentException.class,
                () -> ClientSetup.fromMap(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
                        "sasl.username", "alice", "sasl.password", SECRET, "sasl.login.refresh.buffer.seconds", "x")));
        assertFalse(e.toString().contains(SECRET), e.toString());
        // No SASL client for a protocol without SASL.
        e = assertThrows(KsaslArgumentException.class, () -> ClientSetup.fromProperties("security.protocol=SSL\n"));
        assertTrue(e.getMessage().contains("security.protocol"), e.getMessage());
        assertThrows(NullPointerException.class, () -> ClientSetup.fromProperties(null));
        assertThrows(NullPointerException.class, () -> ClientSetup.fromMap(null));
    }

    @Test
    void secretsNeverShow() throws Exception {
        try (ClientSetup s = ClientSetup.fromProperties(PLAIN_KAFKA)) {
            assertEquals("ClientSetup[mechanism=PLAIN, securityProtocol=SASL_PLAINTEXT, login=READY]", s.toString());
            assertFalse(s.effective().toString().contains(SECRET), s.effective().toString());
            assertFalse(String.join(" ", s.warnings()).contains(SECRET));
            assertThrows(UnsupportedOperationException.class, () -> s.effective().put("x", "y"));
        }
    }

    @Test
    void gssapiIsLeftToTheHost() throws Exception {
        String text = String.join("\n",
                "security.protocol=SASL_PLAINTEXT",
                "sasl.mechanism=GSSAPI",
                "sasl.kerberos.service.name=kafka",
                "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true"
                        + " keyTab=\"/etc/alice.keytab\" principal=\"alice@KSASL.TEST\";",
                "");
        try (ClientSetup s = ClientSetup.fromProperties(text)) {
            assertEquals(ClientSetup.Login.KERBEROS, s.login());
            assertNull(s.config());
            assertNull(s.refresher());
            assertEquals("GSSAPI", s.mechanism());
            assertEquals("kafka", s.kerberosServiceName());
            assertEquals("alice@KSASL.TEST", s.kerberosPrincipal());
            assertEquals("/etc/alice.keytab", s.kerberosKeytab());
            assertTrue(s.toString().contains("login=KERBEROS"), s.toString());
            // A registry without a GSSAPI client: the core refuses to build the configuration.
            try (MechanismRegistry r = new MechanismRegistry().addPasswordClients("alice", SECRET)) {
                KsaslArgumentException e = assertThrows(KsaslArgumentException.class, () -> s.withRegistry(r));
                assertEquals("UNKNOWN_MECHANISM", e.codeName());
            }
            assertNull(s.config());
        }
    }

    @Test
    void withRegistryRebuildsTheConfiguration() throws Exception {
        ClientSetup s = ClientSetup.fromProperties(PLAIN_KAFKA);
        try {
            ClientConfig first = s.config();
            try (MechanismRegistry r = new MechanismRegistry().addPasswordClients("alice", SECRET)) {
                s.withRegistry(r);
            }
            assertNotSame(first, s.config());
            assertFalse(first.isClosed()); // still usable until the setup is closed
            assertEquals("alice", authenticate(s.config(), T0));
            s.close();
            assertTrue(first.isClosed() && s.config().isClosed());
            try (MechanismRegistry r = new MechanismRegistry()) {
                assertThrows(IllegalStateException.class, () -> s.withRegistry(r));
            }
        } finally {
            s.close();
        }
    }
}
