package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A mechanism written in Java (an HMAC challenge-response) registered next to the built-ins:
 * negotiated by the server driver, authenticates, re-authenticates with its credential expiry
 * bounding the session, refused on a principal change.
 */
class HostMechanismTest {
    static final long T0 = Wire.T0;
    static final String NAME = "X-HMAC-CHALLENGE";
    static final Map<String, byte[]> KEYS = Map.of(
            "alice", "alice-key".getBytes(StandardCharsets.UTF_8),
            "mallory", "mallory-key".getBytes(StandardCharsets.UTF_8));
    static final Map<String, Long> EXPIRY = Map.of("alice", T0 + 5_000, "mallory", T0 + 60_000);

    /** Who the next client logs in as (the tests switch principals through it). */
    static volatile String user = "alice";

    static byte[] hmac(byte[] key, byte[] data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Client: sends the user name, answers the server's challenge with its HMAC. */
    static class HmacClient implements HostClientMechanism {
        private final String me = user;
        private boolean answered;

        @Override
        public byte[] start(long nowMs) {
            return me.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public byte[] step(byte[] challenge, long nowMs) {
            answered = true;
            byte[] key = KEYS.getOrDefault(me, new byte[1]);
            return hmac(key, challenge);
        }

        @Override
        public boolean isComplete() {
            return answered;
        }
    }

    /** Server: challenges with the time, checks the HMAC; the user's key has an expiry. */
    static class HmacServer implements HostServerMechanism {
        private String who;
        private byte[] challenge;

        @Override
        public HostServerStep step(byte[] response, long nowMs) throws KsaslException {
            if (who == null) {
                who = new String(response, StandardCharsets.UTF_8);
                if (!KEYS.containsKey(who)) {
                    throw KsaslException.of(301, "unknown user");
                }
                challenge = ByteBuffer.allocate(8).putLong(nowMs).array();
                return HostServerStep.challenge(challenge);
            }
            if (!MessageDigest.isEqual(hmac(KEYS.get(who), challenge), response)) {
                throw KsaslException.of(300, "wrong HMAC");
            }
            return HostServerStep.done(new byte[0], who, OptionalLong.of(EXPIRY.get(who)));
        }
    }

    @BeforeEach
    void reset() {
        user = "alice";
    }

    static ServerConfig serverConfig(long maxReauthMs, String name, Supplier<? extends HostServerMechanism> server)
            throws KsaslException {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry()) {
            store.addUser("bob", "bob-secret");
            r.addPasswordServers(store).addServerMechanism(name, server);
            assertTrue(r.serverMechanisms().containsAll(List.of(name, "PLAIN", "SCRAM-SHA-256")),
                    r.serverMechanisms().toString());
            return ServerConfig.builder(r).setMaxReauthMs(maxReauthMs).setFailedAuthenticationDelayMs(100).build();
        }
    }

    static ClientConfig clientConfig(String name, Supplier<? extends HostClientMechanism> client)
            throws KsaslException {
        try (MechanismRegistry r = new MechanismRegistry().addClientMechanism(name, client)) {
            assertEquals(List.of(name), r.clientMechanisms());
            return ClientConfig.builder(r, name).setClientId("host-mech-test").build();
        }
    }

    @Test
    void javaMechanismAuthenticatesAndReauthenticates() throws Exception {
        try (ServerConfig sc = serverConfig(0, NAME, HmacServer::new);
                ClientConfig cc = clientConfig(NAME, HmacClient::new)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            ServerSession ss = p.server.session();
            assertEquals("User:alice", ss.principal());
            assertEquals(NAME, ss.mechanism());
            assertEquals(5_000, ss.lifetimeMs());
            assertEquals(OptionalLong.of(T0 + 5_000), ss.expiryMs());
            assertEquals(OptionalLong.of(T0 + 5_000), ss.outcome().credentialExpiryMs());
            assertEquals(5_000, p.client.session().lifetimeMs());
            long due = p.client.nextDeadline().getAsLong();
            assertTrue(due >= T0 + 4_250 && due <= T0 + 4_750, "85-95 %: " + due);

            p.pump(T0 + 10, Wire.metadataRequest(1));
            assertEquals(List.of(1), p.responses);
            assertTrue(p.client.handleTimeout(due));
            p.pump(due);
            assertEquals(ClientEvent.Kind.REAUTHENTICATED, p.events.get(p.events.size() - 1));
            assertNull(p.closed);
            assertEquals("User:alice", p.server.session().principal());
            // The same key expiry still bounds the new session.
            assertEquals(T0 + 5_000 - due, p.server.session().lifetimeMs());
            assertEquals(1.0, sc.metrics(due).get("successful-reauthentication-total"));
            p.client.close();
            p.server.close();
        }
    }

    @Test
    void builtInsStillWorkNextToTheJavaMechanism() throws Exception {
        try (ServerConfig sc = serverConfig(0, NAME, HmacServer::new);
                ClientConfig cc = ConnectionTest.clientConfig("bob", "bob-secret", "SCRAM-SHA-256",
                        ReauthTiming.KAFKA)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            assertEquals("SCRAM-SHA-256", p.server.session().mechanism());
        }
    }

    @Test
    void aServerWithoutTheMechanismRefusesItByName() throws Exception {
        try (ServerConfig sc = ConnectionTest.serverConfig(0); ClientConfig cc = clientConfig(NAME, HmacClient::new)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            KsaslException e = assertThrows(KsaslException.class, () -> p.pump(T0));
            assertEquals("UNSUPPORTED_SASL_MECHANISM", e.codeName());
            assertTrue(e.getMessage().contains(NAME), e.getMessage());
        }
    }

    @Test
    void principalChangeOnReauthenticationIsRefusedWithKafkasText() throws Exception {
        try (ServerConfig sc = serverConfig(3_000, NAME, HmacServer::new);
                ClientConfig cc = clientConfig(NAME, HmacClient::new)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(3_000, p.server.session().lifetimeMs());
            user = "mallory";
            long due = p.client.nextDeadline().getAsLong();
            assertTrue(p.client.handleTimeout(due));
            KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(due));
            assertTrue(e.getMessage().contains(
                    "Cannot change principals during re-authentication from User.alice: User.mallory"),
                    e.getMessage());
            ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
            assertEquals(ServerAction.FAIL_AT, last.action());
            assertEquals("PRINCIPAL_CHANGED", last.error().codeName());
            assertEquals(1.0, sc.metrics(due).get("failed-reauthentication-total"));
        }
    }

    @Test
    void aKsaslExceptionFromTheServerMechanismKeepsItsCode() throws Exception {
        user = "eve"; // no key: the server mechanism throws UNKNOWN_USER
        try (ServerConfig sc = serverConfig(0, NAME, HmacServer::new);
                ClientConfig cc = clientConfig(NAME, HmacClient::new)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
            ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
            assertEquals(ServerAction.FAIL_AT, last.action());
            assertEquals("UNKNOWN_USER", last.error().codeName());
            assertEquals(301, last.error().code());
            assertEquals("the X-HMAC-CHALLENGE mechanism's step failed: unknown user", last.error().getMessage());
            assertNull(p.server.session());
            assertFalse(p.server.isReady());
        }
    }

    @Test
    void mechanismLevelAuthenticatorsDriveJavaMechanisms() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry()
                .addClientMechanism(NAME, HmacClient::new)
                .addServerMechanism(NAME, HmacServer::new);
                ClientExchange c = new ClientExchange(r, NAME);
                ServerExchange s = new ServerExchange(r, NAME)) {
            AuthOutcome o = Wire.run(c, s, T0);
            assertEquals("User:alice", o.principal());
            assertEquals(NAME, o.mechanism());
            assertTrue(c.isComplete());
            // After completion ksasl refuses further steps without calling the mechanisms.
            assertThrows(KsaslStateException.class, () -> c.step(new byte[1], T0));
            KsaslStateException e = assertThrows(KsaslStateException.class, () -> s.step(new byte[1], T0));
            assertEquals("STEP_AFTER_DONE", e.codeName());
        }
    }

    @Test
    void invalidNamesAndNullsAreRefused() {
        try (MechanismRegistry r = new MechanismRegistry()) {
            assertThrows(KsaslArgumentException.class, () -> r.addClientMechanism("bad name!", HmacClient::new));
            assertThrows(KsaslArgumentException.class, () -> r.addServerMechanism("", HmacServer::new));
            assertThrows(NullPointerException.class, () -> r.addServerMechanism(NAME, null));
            assertThrows(NullPointerException.class, () -> HostServerStep.challenge(null));
            assertThrows(IllegalArgumentException.class, () -> HostServerStep.done(""));
            assertEquals(List.of(), r.serverMechanisms());
        }
    }

    @Test
    void ksaslExceptionOfBuildsTheClassOfTheCode() {
        KsaslException e = KsaslException.of(300, "nope");
        assertInstanceOf(KsaslAuthenticationException.class, e);
        assertEquals("INVALID_CREDENTIALS", e.codeName());
        assertEquals("nope", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KsaslException.of(99_999, "x"));
        assertThrows(IllegalArgumentException.class, () -> KsaslException.of(100, "a misuse code"));
    }

    @Test
    void hostServerStepAccessors() {
        HostServerStep c = HostServerStep.challenge(new byte[] {1, 2});
        assertFalse(c.isDone());
        assertArrayEquals(new byte[] {1, 2}, c.challenge());
        assertNull(c.authorizationId());
        HostServerStep d = HostServerStep.done(null, "alice", OptionalLong.of(5));
        assertTrue(d.isDone());
        assertNull(d.message());
        assertEquals("alice", d.authorizationId());
        assertEquals(OptionalLong.of(5), d.credentialExpiryMs());
        assertEquals(d, HostServerStep.done(null, "alice", OptionalLong.of(5)));
        assertNotNull(d.toString());
        assertSame(OptionalLong.empty(), HostServerStep.done("x").credentialExpiryMs());
    }

    @Test
    void eachExchangeGetsANewMechanism() throws Exception {
        AtomicInteger made = new AtomicInteger();
        try (ServerConfig sc = serverConfig(0, NAME, () -> {
            made.incrementAndGet();
            return new HmacServer();
        }); ClientConfig cc = clientConfig(NAME, HmacClient::new)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            long due = p.client.nextDeadline().getAsLong();
            p.client.handleTimeout(due);
            p.pump(due);
            assertEquals(2, made.get());
        }
    }
}
