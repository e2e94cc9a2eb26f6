package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The Java defects of issue 16, each with the test that shows it fixed. */
class RegressionTest {
    static final long T0 = Wire.T0;

    /** Occurrences of {@code what} in {@code s}. */
    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /**
     * CredentialAnswer.java:14 sent the enum's ordinal over JNI (UNKNOWN was 0 in Java, 3 in
     * C). The kinds now cross as the core's stable numbers, the C constants'.
     */
    @Test
    void credentialAnswerKindsCrossAsTheCoresStableNumbers() throws Exception {
        Map<CredentialAnswer.Kind, Integer> c = Map.of(CredentialAnswer.Kind.PASSWORD, 1,
                CredentialAnswer.Kind.SCRAM, 2, CredentialAnswer.Kind.UNKNOWN, 3, CredentialAnswer.Kind.UNAVAILABLE, 4,
                CredentialAnswer.Kind.LATER, 5);
        for (CredentialAnswer.Kind k : CredentialAnswer.Kind.values()) {
            assertEquals(c.get(k), k.number(), k.toString());
        }
        // Each answer means what it says through the pull form.
        try (MechanismRegistry s = new MechanismRegistry().addPasswordServers();
                MechanismRegistry cl = new MechanismRegistry().addPasswordClients("bob", "bob-pw")) {
            Map<CredentialAnswer, String> failures = Map.of(CredentialAnswer.unknown(), "UNKNOWN_USER",
                    CredentialAnswer.unavailable("db down"), "CREDENTIAL_LOOKUP_FAILED");
            for (Map.Entry<CredentialAnswer, String> a : failures.entrySet()) {
                try (ClientExchange client = new ClientExchange(cl, "PLAIN");
                        ServerExchange server = new ServerExchange(s, "PLAIN")) {
                    assertEquals(ServerStep.Kind.NEED_CREDENTIAL, server.step(client.start(T0).message(), T0).kind());
                    KsaslException e = assertThrows(KsaslException.class,
                            () -> server.provideCredential(a.getKey(), T0));
                    assertEquals(a.getValue(), e.codeName(), a.getKey().toString());
                }
            }
            try (ClientExchange client = new ClientExchange(cl, "PLAIN");
                    ServerExchange server = new ServerExchange(s, "PLAIN")) {
                server.step(client.start(T0).message(), T0);
                KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                        () -> server.provideCredential(CredentialAnswer.later(), T0));
                assertEquals("INVALID_ARGUMENT", e.codeName());
                assertEquals(ServerStep.Kind.DONE, server.provideCredential(CredentialAnswer.password("bob-pw"), T0).kind());
            }
        }
        // "later" from a lookup leaves the answer to the host (the pull form).
        try (MechanismRegistry s = new MechanismRegistry().addPasswordServers(req -> CredentialAnswer.later());
                MechanismRegistry cl = new MechanismRegistry().addPasswordClients("bob", "bob-pw");
                ClientExchange client = new ClientExchange(cl, "SCRAM-SHA-256");
                ServerExchange server = new ServerExchange(s, "SCRAM-SHA-256")) {
            assertEquals(ServerStep.Kind.NEED_CREDENTIAL, server.step(client.start(T0).message(), T0).kind());
            assertEquals(new CredentialRequest("SCRAM-SHA-256", "bob", false), server.credentialRequest());
        }
    }

    /**
     * The single-exchange server did not report the KIP-368 session lifetime: a host framing
     * the exchange itself had to re-implement Kafka's formula.
     */
    @Test
    void theSingleExchangeServerReportsTheSessionLifetime() throws Exception {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry s = new MechanismRegistry().addPasswordServers(store);
                MechanismRegistry cl = new MechanismRegistry().addPasswordClients("alice", "alice-secret")) {
            store.addUser("alice", "alice-secret");
            try (ClientExchange client = new ClientExchange(cl, "SCRAM-SHA-256");
                    ServerExchange server = new ServerExchange(s, "SCRAM-SHA-256")) {
                server.setMaxReauthMs(60_000);
                assertNull(server.session());
                Wire.run(client, server, T0);
                ServerSession session = server.session();
                assertEquals(60_000, session.lifetimeMs());
                assertEquals(OptionalLong.of(T0 + 60_000), session.expiryMs());
                assertEquals("User:alice", session.principal());
                assertEquals("SCRAM-SHA-256", session.mechanism());
            }
            // The credential's expiry bounds it; without either, no lifetime.
            store.setUserExpiry("alice", OptionalLong.of(T0 + 5_000));
            try (ClientExchange client = new ClientExchange(cl, "PLAIN");
                    ServerExchange server = new ServerExchange(s, "PLAIN")) {
                server.setMaxReauthMs(60_000);
                Wire.run(client, server, T0);
                assertEquals(5_000, server.session().lifetimeMs());
            }
            store.setUserExpiry("alice", OptionalLong.empty());
            try (ClientExchange client = new ClientExchange(cl, "PLAIN");
                    ServerExchange server = new ServerExchange(s, "PLAIN")) {
                Wire.run(client, server, T0);
                assertEquals(0, server.session().lifetimeMs());
                assertEquals(OptionalLong.empty(), server.session().expiryMs());
            }
        }
    }

    /**
     * The reason a connection ends (the error of FAIL_AT, CLOSE_NOW and REAUTH_FAILED) reaches
     * the host with Kafka's client-facing text ({@link KsaslException#clientMessage()}): the text
     * the client was sent.
     */
    @Test
    void theReasonAConnectionEndsCarriesTheClientsText() throws Exception {
        for (String mech : List.of("PLAIN", "SCRAM-SHA-256")) {
            try (ServerConfig sc = ConnectionTest.serverConfig(0);
                    ClientConfig cc = ConnectionTest.clientConfig("alice", "wrong", mech, ReauthTiming.KAFKA)) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                KsaslException seen = assertThrows(KsaslException.class, () -> p.pump(T0));
                ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
                assertEquals(ServerAction.FAIL_AT, last.action());
                String text = last.error().clientMessage();
                assertEquals(mech.equals("PLAIN") ? "Authentication failed: Invalid username or password"
                        : "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                                + mech, text);
                assertEquals(text, seen.details().get("server_message"));
            }
        }
        // A re-authentication as someone else under the retry policy: REAUTH_FAILED with Kafka's text.
        try (Refresher refresher = new Refresher(); MechanismRegistry cr = new MechanismRegistry();
                MechanismRegistry sr = new MechanismRegistry().addOAuthBearerServer();
                ServerConfig sc = ServerConfig.builder(sr).setMaxReauthMs(3000).setReauthRetryMs(200).build()) {
            refresher.poll(T0);
            refresher.setToken(OAuthBearerToken.unsecured("alice", 3600, null, T0), T0);
            cr.addOAuthBearerClient(refresher);
            try (ClientConfig cc = ClientConfig.builder(cr, "OAUTHBEARER").setReauthRetryMs(200)
                    .setReauthTiming(ReauthTiming.LIBRDKAFKA).build()) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                p.pump(T0);
                long due = p.client.nextDeadline().getAsLong();
                refresher.poll(due);
                refresher.setToken(OAuthBearerToken.unsecured("mallory", 3600, null, due), due);
                assertTrue(p.client.handleTimeout(due));
                p.pump(due);
                ServerOutput failed = p.serverOutputs.stream().filter(o -> o.action() == ServerAction.REAUTH_FAILED)
                        .findFirst().orElseThrow();
                assertEquals("Cannot change principals during re-authentication from User.alice: User.mallory",
                        failed.error().clientMessage());
            }
        }
        // Closed without an answer: the reason reaches the host; nothing was sent to the client.
        try (ServerConfig sc = ConnectionTest.serverConfig(0); ServerConnection s = new ServerConnection(sc)) {
            byte[] apiVersions = {0, 18, 0, 0, 0, 0, 0, 1, -1, -1};
            assertEquals(ServerAction.CONTINUE, s.handleFrame(apiVersions, T0).action());
            ServerOutput o = s.handleFrame(apiVersions, T0);
            assertEquals(ServerAction.CLOSE_NOW, o.action());
            assertEquals("ILLEGAL_SASL_STATE", o.error().codeName());
            assertNull(o.error().clientMessage());
        }
        // A failed single exchange: the exception has the same text as clientMessage().
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry s = new MechanismRegistry().addPasswordServers(store);
                MechanismRegistry cl = new MechanismRegistry().addPasswordClients("alice", "wrong");
                ClientExchange client = new ClientExchange(cl, "PLAIN");
                ServerExchange server = new ServerExchange(s, "PLAIN")) {
            store.addUser("alice", "alice-secret");
            KsaslException e = assertThrows(KsaslException.class, () -> Wire.run(client, server, T0));
            assertEquals("Authentication failed: Invalid username or password", e.clientMessage());
            assertEquals(server.clientMessage(), e.clientMessage());
        }
    }

    /**
     * The display of an error named its code twice ("SERVER_REJECTED_AUTHENTICATION (307,
     * authentication): SERVER_REJECTED_AUTHENTICATION: ..."): it names it once, whichever way
     * the error came (a server's rejection, a host mechanism's KsaslException, a stage's).
     */
    @Test
    void anErrorNamesItsCodeOnce() throws Exception {
        try (ServerConfig sc = ConnectionTest.serverConfig(0);
                ClientConfig cc = ConnectionTest.clientConfig("alice", "wrong", "SCRAM-SHA-512", ReauthTiming.KAFKA)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            KsaslException e = assertThrows(KsaslException.class, () -> p.pump(T0));
            assertEquals("SERVER_REJECTED_AUTHENTICATION", e.codeName());
            assertEquals(1, count(e.toString(), "SERVER_REJECTED_AUTHENTICATION"), e.toString());
            assertEquals(0, count(e.getMessage(), "SERVER_REJECTED_AUTHENTICATION"), e.getMessage());
        }
        KsaslException thrown = KsaslException.of(301, "no such user");
        try (MechanismRegistry r = new MechanismRegistry()
                .addServerMechanism("X-THROWS", () -> (response, now) -> {
                    throw thrown;
                })
                .addClientMechanism("X-THROWS", () -> new HostClientMechanism() {
                    @Override
                    public byte[] start(long nowMs) throws KsaslException {
                        throw KsaslException.of(307, "refused");
                    }

                    @Override
                    public byte[] step(byte[] challenge, long nowMs) {
                        return null;
                    }

                    @Override
                    public boolean isComplete() {
                        return false;
                    }
                });
                ServerExchange s = new ServerExchange(r, "X-THROWS");
                ClientExchange c = new ClientExchange(r, "X-THROWS")) {
            KsaslException e = assertThrows(KsaslException.class, () -> s.step(new byte[0], T0));
            assertEquals(1, count(e.toString(), "UNKNOWN_USER"), e.toString());
            assertEquals(thrown, e.getCause());
            e = assertThrows(KsaslException.class, () -> c.start(T0));
            assertEquals(1, count(e.toString(), "SERVER_REJECTED_AUTHENTICATION"), e.toString());
        }
        try (MechanismRegistry r = new MechanismRegistry().addServerMechanism("X-LATER",
                () -> (response, now) -> HostServerStep.later(new CompletableFuture<>()));
                ServerExchange s = new ServerExchange(r, "X-LATER")) {
            assertEquals(ServerStep.Kind.PENDING, s.step(new byte[0], T0).kind());
            KsaslException e = assertThrows(KsaslException.class, () -> s.resumeWithError(
                    new CompletionException(KsaslException.of(300, "wrong proof")), T0));
            assertEquals(1, count(e.toString(), "INVALID_CREDENTIALS"), e.toString());
        }
    }

    /** The JSON vectors of signed tokens (tests/vectors/jwt.json). */
    static JsonNode jwt() throws Exception {
        return new ObjectMapper().readTree(new File(System.getProperty("ksasl.vectors", "../../tests/vectors"),
                "jwt.json"));
    }

    static String token(JsonNode v, String name) {
        for (JsonNode t : v.get("tokens")) {
            if (t.get("name").asText().equals(name)) {
                return t.get("token").asText();
            }
        }
        throw new AssertionError("no token " + name);
    }

    static String code(JwksValidator j, String token, long now) {
        try {
            j.validate(token, now);
            return "ok";
        } catch (KsaslException e) {
            return e.codeName();
        }
    }

    /**
     * JwksValidator took only an issuer, one audience and the skew: every option of the core's
     * JwtValidatorConfig is now a builder setter.
     */
    @Test
    void jwksValidatorExposesEveryOptionOfTheCore() throws Exception {
        JsonNode v = jwt();
        long now = v.get("now_ms").asLong();
        String jwks = v.get("jwks").toString();
        String issuer = v.get("issuer").asText();
        String audience = v.get("audience").asText();
        byte[] secret = v.get("hmac_secret").asText().getBytes(StandardCharsets.UTF_8);
        // Audience list.
        try (JwksValidator j = JwksValidator.builder().setIssuer(issuer).setAudiences(List.of("other", audience))
                .build(); JwksValidator k = JwksValidator.builder().setAudiences(List.of("other")).build()) {
            j.setJwks(jwks, now);
            k.setJwks(jwks, now);
            assertEquals("alice", j.validate(token(v, "rs256"), now).principal());
            assertEquals("TOKEN_INVALID_AUDIENCE", code(k, token(v, "rs256"), now));
        }
        // Subject and scope claim names.
        try (JwksValidator j = JwksValidator.builder().setAudiences(List.of(audience)).setSubjectClaimName("iss")
                .setScopeClaimName("aud").build()) {
            j.setJwks(jwks, now);
            ValidatedToken t = j.validate(token(v, "rs256"), now);
            assertEquals(issuer, t.principal());
            assertEquals(List.of(audience), t.scope());
        }
        // The iat check, off by default.
        try (JwksValidator j = JwksValidator.builder().setAudiences(List.of(audience)).setValidateIat(true).build();
                JwksValidator k = JwksValidator.builder().setAudiences(List.of(audience)).build()) {
            j.setJwks(jwks, now);
            k.setJwks(jwks, now);
            assertEquals("TOKEN_NOT_YET_VALID", code(j, token(v, "iat-in-future"), now));
            assertEquals("ok", code(k, token(v, "iat-in-future"), now));
        }
        // Algorithms by name and the HMAC secret.
        try (JwksValidator j = JwksValidator.builder().setAudiences(List.of(audience)).setAlgorithms(List.of("HS256"))
                .setHmacSecret(secret).build();
                JwksValidator k = JwksValidator.builder().setAudiences(List.of(audience)).build()) {
            assertEquals("ok", code(j, token(v, "hs256-shared-secret"), now));
            assertEquals("TOKEN_ALGORITHM_REFUSED", code(j, token(v, "rs256"), now));
            k.setJwks(jwks, now);
            assertEquals("TOKEN_ALGORITHM_REFUSED", code(k, token(v, "hs256-shared-secret"), now));
        }
        KsaslArgumentException bad = assertThrows(KsaslArgumentException.class,
                () -> JwksValidator.builder().setAlgorithms(List.of("XS999")).build());
        assertEquals("INVALID_CONFIG", bad.codeName());
        assertThrows(KsaslArgumentException.class, () -> JwksValidator.builder().setAlgorithms(List.of("HS256")).build());
        // The largest token.
        try (JwksValidator j = JwksValidator.builder().setAudiences(List.of(audience)).setMaxTokenSize(100).build()) {
            j.setJwks(jwks, now);
            assertEquals("TOKEN_TOO_LARGE", code(j, token(v, "rs256"), now));
        }
        assertThrows(KsaslArgumentException.class, () -> JwksValidator.builder().setMaxTokenSize(-1).build());
        // The refresh period and the unknown-kid interval.
        try (JwksValidator j = JwksValidator.builder().setRefreshPeriodMs(5_000).setUnknownKidIntervalMs(0).build();
                JwksValidator k = JwksValidator.builder().setRefreshPeriodMs(5_000).setUnknownKidIntervalMs(60_000)
                        .build()) {
            for (JwksValidator x : List.of(j, k)) {
                x.setJwks(jwks, now);
                assertEquals(now + 5_000, x.nextRefreshMs());
                assertEquals("TOKEN_UNKNOWN_KEY", code(x, token(v, "unknown-kid"), now));
                assertEquals(now, x.nextRefreshMs());
                x.setJwks(jwks, now + 10);
                assertEquals("TOKEN_UNKNOWN_KEY", code(x, token(v, "unknown-kid"), now + 20));
            }
            // The same unknown kid asks again at once with no interval, not within a minute.
            assertEquals(now + 20, j.nextRefreshMs());
            assertEquals(now + 10 + 5_000, k.nextRefreshMs());
        }
        // The clock skew.
        try (JwksValidator j = JwksValidator.builder().setAudiences(List.of(audience)).setClockSkewMs(0).build();
                JwksValidator k = JwksValidator.builder().setAudiences(List.of(audience)).build()) {
            j.setJwks(jwks, now);
            k.setJwks(jwks, now);
            assertEquals("TOKEN_EXPIRED", code(j, token(v, "expired-within-skew"), now));
            assertEquals("ok", code(k, token(v, "expired-within-skew"), now));
        }
    }

    /** The ApiVersions range check moved from ServerConfig.Builder.apiVersion to the core. */
    @Test
    void apiVersionRangesAreCheckedByTheCore() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry().addPasswordServers()) {
            ServerConfig.Builder b = ServerConfig.builder(r).setApiVersion(3, 0, 70_000);
            KsaslArgumentException e = assertThrows(KsaslArgumentException.class, b::build);
            assertEquals("INVALID_CONFIG", e.codeName());
            assertTrue(e.getMessage().contains("API keys and versions are 0 to 32767"), e.getMessage());
            assertNotEquals(null, ServerConfig.builder(r).setApiVersion(3, 0, 12).build());
        }
    }

    /** Defaults are the core's: the Java side passes only what the caller set. */
    @Test
    void defaultsComeFromTheCore() throws Exception {
        assertEquals(7L * 24 * 3600 * 1000, TokenAuthority.DEFAULT_MAX_LIFETIME_MS);
        assertEquals(24L * 3600 * 1000, TokenAuthority.DEFAULT_EXPIRY_TIME_MS);
        assertEquals(3600L * 1000, TokenAuthority.DEFAULT_EXPIRY_CHECK_INTERVAL_MS);
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry().addPasswordServers(store);
                ServerConfig sc = ServerConfig.builder(r).build();
                ClientConfig cc = ConnectionTest.clientConfig("alice", "wrong", "PLAIN", ReauthTiming.KAFKA)) {
            store.addUser("alice", "alice-secret");
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            assertThrows(KsaslException.class, () -> p.pump(T0));
            // The core's KIP-306 delay (100 ms) applies when the caller set none.
            ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
            assertEquals(T0 + 100, last.deadlineMs());
            assertFalse(p.server.isReady());
        }
        try (Refresher r = new Refresher()) {
            assertTrue(r.poll(T0));
            r.setToken(OAuthBearerToken.unsecured("u", 3600, null, T0), T0);
            // Kafka's window: refresh between 80 % and 85 % of the hour.
            long due = r.nextDeadline().getAsLong() - T0;
            assertTrue(due >= 2_880_000 && due <= 3_060_000, "refresh after " + due + " ms");
        }
        assertNotNull(new JwksValidator());
    }

    /**
     * Strings cross JNI unchanged whatever they hold: non-ASCII letters, characters beyond
     * U+FFFF (surrogate pairs), NUL, long strings (Java's modified UTF-8 differs from UTF-8 for
     * the last two kinds, which take the slower conversion).
     */
    @Test
    void stringsCrossUnchanged() throws Exception {
        String longText = "é".repeat(5000);
        for (String name : List.of("alice", "ü-ß-ø", "€".repeat(4000), "emoji-\uD83D\uDE00", "nul-\u0000-end", longText)) {
            OAuthBearerToken t = OAuthBearerToken.unsecured(name, 3600, null, T0);
            assertEquals(name, t.principal());
        }
        String user = "ü\uD83D\uDE00";
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry servers = new MechanismRegistry().addPasswordServers(store);
                MechanismRegistry clients = new MechanismRegistry().addPasswordClients(user, "pä\uD83D\uDE00ss");
                ClientExchange c = new ClientExchange(clients, "PLAIN");
                ServerExchange s = new ServerExchange(servers, "PLAIN")) {
            store.addUser(user, "pä\uD83D\uDE00ss");
            ServerStep done = s.step(c.start(T0).message(), T0);
            assertEquals(ServerStep.Kind.DONE, done.kind());
            assertEquals("User:" + user, s.outcome().principal());
            KsaslArgumentException e = assertThrows(KsaslArgumentException.class, () -> new ServerExchange(servers, "X-\uD83D\uDE00"));
            assertTrue(e.getMessage().contains("\"X-\uD83D\uDE00\""), e.getMessage());
        }
    }
}
