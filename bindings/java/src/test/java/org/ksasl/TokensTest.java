package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Delegation tokens from Java: HMACs and SCRAM passwords checked against javax.crypto, the
 * authority's rules and error codes, records, token logins through the drivers, the Kafka
 * codec of the token APIs, and use after close.
 */
class TokensTest {
    static final long T0 = Wire.T0;

    static byte[] hmacSha512(String key, String message) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA512");
        mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA512"));
        return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    }

    static <E extends KsaslException> E assertCode(Class<E> type, String codeName, Use use) {
        E e = assertThrows(type, use::run);
        assertEquals(codeName, e.codeName(), e.toString());
        return e;
    }

    interface Use {
        void run() throws Exception;
    }

    /** The frame inside one length-prefixed frame. */
    static byte[] unframe(byte[] framed) {
        List<byte[]> f = Wire.frames(framed);
        assertEquals(1, f.size());
        return f.get(0);
    }

    @Test
    void hmacAndPasswordMatchAnIndependentComputation() throws Exception {
        try (TokenAuthority a = new TokenAuthority("a-secret-key")) {
            DelegationToken t = a.create("alice", T0);
            byte[] expected = hmacSha512("a-secret-key", t.tokenId());
            assertEquals(64, expected.length);
            assertArrayEquals(expected, t.hmac());
            assertArrayEquals(expected, a.hmac(t.tokenId()));
            assertEquals(Base64.getEncoder().encodeToString(expected), t.hmacBase64());
            assertEquals(88, t.hmacBase64().length());
            assertEquals(22, t.tokenId().length());
            assertFalse(t.tokenId().startsWith("-"));
            assertTrue(t.tokenId().matches("[A-Za-z0-9_-]{22}"), t.tokenId());
            // hmac() is a copy.
            t.hmac()[0] ^= 1;
            assertArrayEquals(expected, t.hmac());
            // Two tokens never share an id.
            assertNotEquals(t.tokenId(), a.create("alice", T0).tokenId());
            // The secrets never show in toString().
            String s = t.toString();
            assertTrue(s.contains("<redacted>") && s.contains(t.tokenId()) && s.contains("User:alice"), s);
            assertFalse(s.contains(t.hmacBase64()), s);
            assertFalse(s.contains(Base64.getEncoder().withoutPadding().encodeToString(expected).substring(0, 20)), s);
        }
        // The reference vector (behaviour reference, section 7.2).
        String id = "AAECAwQFBgcICQoLDA0ODw";
        assertEquals(id, Base64.getUrlEncoder().withoutPadding().encodeToString(
                new byte[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
        String reference = "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==";
        byte[] ref = hmacSha512("secret", id);
        assertEquals(reference, Base64.getEncoder().encodeToString(ref));
        try (TokenAuthority a = new TokenAuthority("secret")) {
            assertArrayEquals(ref, a.hmac(id));
        }
        DelegationToken received = DelegationToken.of(id, ref, "alice", null, List.of(), T0, T0 + 1, T0 + 2);
        assertEquals(reference, received.hmacBase64());
        assertEquals("User:alice", received.owner());
        assertEquals("User:alice", received.requester());
    }

    @Test
    void authorityRulesAndErrorCodes() throws Exception {
        try (TokenAuthority a = new TokenAuthority("k", 100_000, 10_000, TokenAuthority.DEFAULT_EXPIRY_CHECK_INTERVAL_MS)) {
            DelegationToken t = a.create("User:alice", null, List.of("bob"), -1, T0);
            assertEquals("User:alice", t.owner());
            assertEquals("User:alice", t.requester());
            assertEquals(List.of("User:bob"), t.renewers());
            assertEquals(T0, t.issueMs());
            assertEquals(T0 + 10_000, t.expiryMs());
            assertEquals(T0 + 100_000, t.maxMs());

            // Renew: the owner or a renewer, by the expiry time or a shorter period, capped by the max.
            assertEquals(T0 + 10_001, a.renew(t.hmac(), "bob", -1, T0 + 1));
            assertEquals(T0 + 2 + 500, a.renew(t.hmac(), "User:alice", 500, T0 + 2));
            assertEquals(T0 + 3 + 10_000, a.renew(t.hmac(), "alice", 50_000, T0 + 3));
            assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_OWNER_MISMATCH",
                    () -> a.renew(t.hmac(), "carol", -1, T0 + 4));
            assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_NOT_FOUND",
                    () -> a.renew(new byte[64], "alice", -1, T0 + 4));
            // A shorter requested lifetime caps both timestamps; renewing stops at the max.
            DelegationToken shortLived = a.create("alice", "User:admin", null, 5_000, T0);
            assertEquals("User:admin", shortLived.requester());
            assertEquals(T0 + 5_000, shortLived.maxMs());
            assertEquals(T0 + 5_000, shortLived.expiryMs());
            assertEquals(T0 + 5_000, a.renew(shortLived.hmac(), "alice", -1, T0 + 1_000));

            // Only User principals own or renew tokens.
            assertCode(KsaslCredentialException.class, "INVALID_PRINCIPAL_TYPE",
                    () -> a.create("alice", null, List.of("Group:ops"), -1, T0));
            assertCode(KsaslCredentialException.class, "INVALID_PRINCIPAL_TYPE", () -> a.create("Group:ops", T0));
            assertThrows(KsaslArgumentException.class, () -> a.create("User:", T0));
            assertThrows(KsaslArgumentException.class, () -> a.create("", T0));

            // Expired: renew and expire fail; the sweep removes it.
            KsaslCredentialException expired = assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_EXPIRED",
                    () -> a.renew(t.hmac(), "alice", -1, T0 + 50_000));
            assertFalse(expired.getMessage().contains(t.hmacBase64()));
            assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_EXPIRED",
                    () -> a.expire(t.hmac(), "alice", -1, T0 + 50_000));
            assertEquals(Long.MIN_VALUE, a.nextSweepMs());
            assertEquals(List.of(shortLived.tokenId(), t.tokenId()).stream().sorted().toList(),
                    a.sweep(T0 + 50_000).stream().sorted().toList());
            assertEquals(T0 + 50_000 + TokenAuthority.DEFAULT_EXPIRY_CHECK_INTERVAL_MS, a.nextSweepMs());
            assertEquals(List.of(), a.describe(null));

            // Expire: with a period it moves the expiry; negative removes it, and twice is not found.
            DelegationToken t2 = a.create("alice", null, List.of("bob"), -1, T0);
            assertEquals(T0 + 10 + 700, a.expire(t2.hmac(), "bob", 700, T0 + 10));
            assertEquals(T0 + 10 + 700, a.describe(List.of("alice")).get(0).expiryMs());
            assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_OWNER_MISMATCH",
                    () -> a.expire(t2.hmac(), "carol", -1, T0 + 20));
            assertEquals(T0 + 20, a.expire(t2.hmac(), "alice", -1, T0 + 20));
            assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_NOT_FOUND",
                    () -> a.expire(t2.hmac(), "alice", -1, T0 + 21));
            assertEquals(List.of(), a.describe(null));

            // Describe filters by owner.
            DelegationToken ta = a.create("alice", T0);
            DelegationToken tb = a.create("bob", T0);
            assertEquals(List.of(tb), a.describe(List.of("User:bob")));
            assertEquals(2, a.describe(null).size());
            assertEquals(List.of(ta), a.describe(List.of("alice", "carol")));
        }
        // The configuration is validated: misuse, unchecked.
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class, () -> new TokenAuthority(""));
        assertEquals("INVALID_CONFIG", e.codeName());
        assertThrows(KsaslArgumentException.class, () -> new TokenAuthority("k", 1000, 0, 1000));
        assertThrows(NullPointerException.class, () -> new TokenAuthority(null));
    }

    @Test
    void recordsRoundTripWithoutSecretsAndMalformedRecordsAreRefused() throws Exception {
        try (TokenAuthority a = new TokenAuthority("k"); TokenAuthority b = new TokenAuthority("k")) {
            DelegationToken t = a.create("alice", null, List.of("bob"), -1, T0);
            String records = a.exportRecords();
            assertTrue(records.contains(t.tokenId()), records);
            assertFalse(records.contains(t.hmacBase64()), records);
            assertEquals(1, b.importRecords(records));
            assertEquals(List.of(t), b.describe(List.of("alice")));
            assertEquals(b.describe(null), a.describe(null));

            String good = "{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:a\",\"requester\":\"User:a\","
                    + "\"renewers\":[],\"issueTimestamp\":1,\"maxTimestamp\":2,\"expirationTimestamp\":2}";
            List<String> bad = List.of(
                    "nope",
                    "{}",
                    "[{}]",
                    "[{\"tokenId\":\"short\"}]",
                    "[" + good.replace("AAECAwQFBgcICQoLDA0ODw", "x") + "]",
                    "[" + good.replace("\"owner\":\"User:a\"", "\"owner\":\"alice\"") + "]",
                    "[" + good.replace("\"expirationTimestamp\":2", "\"expirationTimestamp\":3") + "]",
                    // One good record and one bad: nothing is loaded.
                    "[" + good + "," + good.replace("\"renewers\":[]", "\"renewers\":[\"nobody\"]") + "]");
            for (String r : bad) {
                KsaslCredentialException e = assertCode(KsaslCredentialException.class, "INVALID_CREDENTIAL_FORMAT",
                        () -> b.importRecords(r));
                assertEquals(ErrorKind.CREDENTIAL, e.kind());
            }
            assertEquals(1, b.describe(null).size());
            assertEquals(1, b.importRecords("[" + good + "]"));
            assertEquals(2, b.describe(null).size());

            // Many tokens cross the boundary at once (each in its own JNI local frame).
            for (int i = 0; i < 200; i++) {
                a.create("user" + i, null, List.of("bob", "carol"), -1, T0);
            }
            assertEquals(201, b.importRecords(a.exportRecords()));
            List<DelegationToken> everything = b.describe(null);
            assertEquals(202, everything.size());
            assertEquals(a.describe(null), everything.stream().filter(x -> !x.owner().equals("User:a")).toList());
            assertEquals(201, a.sweep(T0 + TokenAuthority.DEFAULT_MAX_LIFETIME_MS + 1).size());
        }
    }

    @Test
    void tokenLoginThroughTheDriversIsCappedByTheTokenAndRenewedThroughTheRefresher() throws Exception {
        try (TokenAuthority a = new TokenAuthority("k", TokenAuthority.DEFAULT_MAX_LIFETIME_MS, 10_000,
                        TokenAuthority.DEFAULT_EXPIRY_CHECK_INTERVAL_MS);
                CredentialStore store = new CredentialStore();
                MechanismRegistry servers = new MechanismRegistry();
                Refresher refresher = new Refresher();
                MechanismRegistry clients = new MechanismRegistry()) {
            store.addUser("alice", "alice-secret");
            servers.addPasswordServers(store, a);
            DelegationToken t = a.create("alice", T0);
            assertTrue(refresher.poll(T0));
            assertEquals(1, refresher.setDelegationToken(t, T0));
            clients.addRefreshingPasswordClients(refresher);
            assertEquals(List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
                    clients.clientMechanisms().stream().sorted().toList());
            try (ServerConfig sc = ServerConfig.builder(servers).setMaxReauthMs(60_000).build();
                    ClientConfig cc = ClientConfig.builder(clients, "SCRAM-SHA-512").build()) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                p.pump(T0);
                assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
                ServerSession s = p.server.session();
                assertEquals("User:alice", s.principal());
                assertEquals("alice", s.outcome().principalName());
                assertTrue(s.outcome().tokenAuthenticated());
                assertEquals(OptionalLong.of(T0 + 10_000), s.outcome().credentialExpiryMs());
                assertEquals(10_000, s.lifetimeMs()); // capped by the token, not 60 s
                assertEquals(OptionalLong.of(T0 + 10_000), s.expiryMs());
                assertEquals(10_000, p.client.session().lifetimeMs());

                // The refresher wants a renewed token before the expiry; the host renews it.
                long due = refresher.nextDeadline().getAsLong();
                assertTrue(due < T0 + 10_000, "refresh at " + (due - T0));
                long now = Math.max(due, T0 + 1);
                assertTrue(refresher.poll(now));
                long renewed = a.renew(t.hmac(), t.owner(), -1, now);
                assertEquals(now + 10_000, renewed);
                assertEquals(2, refresher.setDelegationToken(t.renewed(renewed), now));

                // The client re-authenticates within the session and gets the renewed lifetime.
                long reauthAt = p.client.nextDeadline().getAsLong();
                assertTrue(reauthAt >= now && reauthAt < T0 + 10_000, "re-authentication at " + (reauthAt - T0));
                assertTrue(p.client.handleTimeout(reauthAt));
                p.pump(reauthAt);
                assertEquals(ClientEvent.Kind.REAUTHENTICATED, p.events.get(p.events.size() - 1));
                ServerSession s2 = p.server.session();
                assertEquals(OptionalLong.of(renewed), s2.outcome().credentialExpiryMs());
                assertEquals(renewed - reauthAt, s2.lifetimeMs());
                assertTrue(s2.outcome().tokenAuthenticated());

                // A token login with a wrong password (another authority's HMAC) fails.
                try (TokenAuthority other = new TokenAuthority("other-key");
                        MechanismRegistry wrong = new MechanismRegistry().addTokenClients(t.tokenId(),
                                DelegationToken.of(t.tokenId(), other.hmac(t.tokenId()), "alice", null, null, T0,
                                        T0, T0).hmacBase64());
                        ClientConfig wc = ClientConfig.builder(wrong, "SCRAM-SHA-256").build()) {
                    Wire.Pair w = new Wire.Pair(wc, sc);
                    w.client.start(T0);
                    assertThrows(KsaslAuthenticationException.class, () -> w.pump(T0));
                    assertEquals(ServerAction.FAIL_AT, w.serverOutputs.get(w.serverOutputs.size() - 1).action());
                    w.client.close();
                    w.server.close();
                }
                p.client.close();
                p.server.close();
            }
        }
    }

    @Test
    void tokensWithALookupOrThePullFormForUsers() throws Exception {
        try (TokenAuthority a = new TokenAuthority("k")) {
            DelegationToken t = a.create("alice", T0);
            AtomicInteger lookups = new AtomicInteger();
            CredentialLookup users = r -> {
                lookups.incrementAndGet();
                assertFalse(r.tokenAuthenticated());
                return r.username().equals("bob") ? CredentialAnswer.password("bob-secret") : null;
            };
            try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(users, a);
                    MechanismRegistry tokenClient = new MechanismRegistry().addTokenClients(t.tokenId(), t.hmacBase64());
                    MechanismRegistry bobClient = new MechanismRegistry().addPasswordClients("bob", "bob-secret")) {
                AuthOutcome o = Wire.run(new ClientExchange(tokenClient, "SCRAM-SHA-256"),
                        new ServerExchange(servers, "SCRAM-SHA-256"), T0);
                assertEquals("User:alice", o.principal());
                assertTrue(o.tokenAuthenticated());
                assertEquals(OptionalLong.of(t.expiryMs()), o.credentialExpiryMs());
                assertEquals(0, lookups.get());
                AuthOutcome bob = Wire.run(new ClientExchange(bobClient, "SCRAM-SHA-512"),
                        new ServerExchange(servers, "SCRAM-SHA-512"), T0);
                assertEquals("User:bob", bob.principal());
                assertFalse(bob.tokenAuthenticated());
                assertEquals(1, lookups.get());
            }
            // The pull form: tokens answered at once, users asked of the host.
            try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(a);
                    MechanismRegistry tokenClient = new MechanismRegistry().addTokenClients(t.tokenId(), t.hmacBase64());
                    MechanismRegistry bobClient = new MechanismRegistry().addPasswordClients("bob", "bob-secret")) {
                AuthOutcome o = Wire.run(new ClientExchange(tokenClient, "SCRAM-SHA-512"),
                        new ServerExchange(servers, "SCRAM-SHA-512"), T0);
                assertEquals("User:alice", o.principal());
                ClientExchange c = new ClientExchange(bobClient, "PLAIN");
                ServerExchange s = new ServerExchange(servers, "PLAIN");
                ServerStep step = s.step(c.start(T0).message(), T0);
                assertEquals(ServerStep.Kind.NEED_CREDENTIAL, step.kind());
                assertEquals(new CredentialRequest("PLAIN", "bob", false), s.credentialRequest());
                assertEquals(ServerStep.Kind.DONE,
                        s.provideCredential(CredentialAnswer.password("bob-secret"), T0).kind());
                assertEquals("User:bob", s.outcome().principal());
                c.close();
                s.close();
            }
        }
    }

    @Test
    void codecRoundTripThroughTheAuthority() throws Exception {
        try (TokenAuthority a = new TokenAuthority("k")) {
            byte[] req = DelegationTokenCodec.createRequest(3, 5, List.of("bob"), -1, null, "java");
            DelegationToken t = DelegationTokenCodec.parseCreateResponse(3, unframe(a.handleRequest(unframe(req), "alice",
                    false, T0)));
            assertEquals("User:alice", t.owner());
            assertEquals("User:alice", t.requester());
            assertArrayEquals(a.hmac(t.tokenId()), t.hmac());
            assertEquals(T0, t.issueMs());
            assertEquals(T0 + TokenAuthority.DEFAULT_EXPIRY_TIME_MS, t.expiryMs());

            byte[] renew = DelegationTokenCodec.renewRequest(2, 6, t.hmac(), 1000, null);
            assertEquals(T0 + 1000, DelegationTokenCodec.parseExpiryResponse(2, unframe(a.handleRequest(unframe(renew),
                    "User:bob", false, T0))));

            byte[] describe = DelegationTokenCodec.describeRequest(3, 7, List.of("alice"), "java");
            List<DelegationToken> tokens = DelegationTokenCodec.parseDescribeResponse(3, unframe(a.handleRequest(
                    unframe(describe), "alice", false, T0)));
            assertEquals(1, tokens.size());
            assertEquals(t.tokenId(), tokens.get(0).tokenId());
            assertEquals(List.of("User:bob"), tokens.get(0).renewers());
            assertEquals(T0 + 1000, tokens.get(0).expiryMs());
            assertEquals(t.hmacBase64(), tokens.get(0).hmacBase64());
            // Version 0 of describe has no requester: it reads as the owner. null owners: all.
            List<DelegationToken> all = DelegationTokenCodec.parseDescribeResponse(0, unframe(a.handleRequest(
                    unframe(DelegationTokenCodec.describeRequest(0, 8, null, null)), "alice", false, T0)));
            assertEquals(List.of(t.tokenId()), all.stream().map(DelegationToken::tokenId).toList());
            assertEquals("User:alice", all.get(0).requester());

            // On someone's behalf (version 3): the owner is carol, the requester alice.
            DelegationToken forCarol = DelegationTokenCodec.parseCreateResponse(3, unframe(a.handleRequest(unframe(
                    DelegationTokenCodec.createRequest(3, 9, null, 60_000, "User:carol", null)), "alice", false, T0)));
            assertEquals("User:carol", forCarol.owner());
            assertEquals("User:alice", forCarol.requester());
            assertEquals(T0 + 60_000, forCarol.maxMs());

            // Expire now, then again: DELEGATION_TOKEN_NOT_FOUND (62) from the broker's answer.
            byte[] expire = DelegationTokenCodec.expireRequest(1, 10, t.hmac(), -1, "java");
            assertEquals(T0, DelegationTokenCodec.parseExpiryResponse(1, unframe(a.handleRequest(unframe(expire), "alice",
                    false, T0))));
            KsaslCredentialException gone = assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_NOT_FOUND",
                    () -> DelegationTokenCodec.parseExpiryResponse(1, unframe(a.handleRequest(unframe(expire), "alice",
                            false, T0))));
            assertEquals("62", gone.details().get("kafka_error_code"));
            // Renewing someone else's token: 63.
            KsaslCredentialException mismatch = assertCode(KsaslCredentialException.class,
                    "DELEGATION_TOKEN_OWNER_MISMATCH", () -> DelegationTokenCodec.parseExpiryResponse(2, unframe(
                            a.handleRequest(unframe(DelegationTokenCodec.renewRequest(2, 11, forCarol.hmac(), -1, null)),
                                    "bob", false, T0))));
            assertEquals("63", mismatch.details().get("kafka_error_code"));
            // A Group renewer: 67.
            assertCode(KsaslCredentialException.class, "INVALID_PRINCIPAL_TYPE",
                    () -> DelegationTokenCodec.parseCreateResponse(2, unframe(a.handleRequest(unframe(
                            DelegationTokenCodec.createRequest(2, 12, List.of("Group:ops"), -1, null, null)), "alice", false,
                            T0))));
            // A connection that logged in with a token may not ask: 64, for every token API.
            KsaslCredentialException refused = assertCode(KsaslCredentialException.class,
                    "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", () -> DelegationTokenCodec.parseCreateResponse(1, unframe(
                            a.handleRequest(unframe(DelegationTokenCodec.createRequest(1, 13, null, -1, null, null)), "alice",
                                    true, T0))));
            assertEquals("64", refused.details().get("kafka_error_code"));
            assertFalse(refused.getMessage().isEmpty());
            assertCode(KsaslCredentialException.class, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
                    () -> DelegationTokenCodec.parseDescribeResponse(3, unframe(a.handleRequest(unframe(
                            DelegationTokenCodec.describeRequest(3, 14, null, null)), "alice", true, T0))));

            // Versions: every one Kafka defines; an unknown one is refused, a malformed frame too.
            assertCode(KsaslProtocolException.class, "UNSUPPORTED_VERSION",
                    () -> DelegationTokenCodec.createRequest(4, 15, null, -1, null, null));
            assertThrows(KsaslException.class, () -> a.handleRequest(new byte[] {0, 38, 0, 3}, "alice", false, T0));
            byte[] cut = unframe(describe);
            assertThrows(KsaslException.class, () -> a.handleRequest(java.util.Arrays.copyOf(cut, cut.length - 2),
                    "alice", false, T0));
            assertThrows(KsaslException.class, () -> DelegationTokenCodec.parseCreateResponse(3, new byte[] {0, 0, 0, 1}));
            // An owner field before version 3 cannot be written.
            assertCode(KsaslProtocolException.class, "UNSUPPORTED_VERSION",
                    () -> DelegationTokenCodec.createRequest(2, 16, null, -1, "User:carol", null));
        }
        List<DelegationTokenCodec.ApiRange> kafka4 = List.of(
                new DelegationTokenCodec.ApiRange((short) 38, (short) 1, (short) 3),
                new DelegationTokenCodec.ApiRange((short) 39, (short) 1, (short) 2),
                new DelegationTokenCodec.ApiRange((short) 40, (short) 1, (short) 2),
                new DelegationTokenCodec.ApiRange((short) 41, (short) 1, (short) 3));
        assertEquals(kafka4, DelegationTokenCodec.apiVersions(true));
        List<DelegationTokenCodec.ApiRange> all = new ArrayList<>();
        for (DelegationTokenCodec.ApiRange r : kafka4) {
            all.add(new DelegationTokenCodec.ApiRange(r.apiKey(), (short) 0, r.maxVersion()));
        }
        assertEquals(all, DelegationTokenCodec.apiVersions(false));
        assertTrue(DelegationTokenCodec.isTokenApi((short) 38) && DelegationTokenCodec.isTokenApi((short) 41));
        assertFalse(DelegationTokenCodec.isTokenApi((short) 37) || DelegationTokenCodec.isTokenApi((short) 42));
    }

    @Test
    void anAuthorityIsSafeToShareBetweenThreads() throws Exception {
        try (TokenAuthority a = new TokenAuthority("k")) {
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
            try {
                List<java.util.concurrent.Future<List<DelegationToken>>> futures = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    String owner = "user" + w;
                    futures.add(pool.submit(() -> {
                        List<DelegationToken> mine = new ArrayList<>();
                        for (int i = 0; i < 50; i++) {
                            DelegationToken t = a.create(owner, T0);
                            assertEquals(T0 + 1 + TokenAuthority.DEFAULT_EXPIRY_TIME_MS,
                                    a.renew(t.hmac(), owner, -1, T0 + 1));
                            mine.add(t.renewed(T0 + 1 + TokenAuthority.DEFAULT_EXPIRY_TIME_MS));
                            a.describe(List.of(owner));
                        }
                        return mine;
                    }));
                }
                for (int w = 0; w < 4; w++) {
                    List<DelegationToken> mine = futures.get(w).get(30, java.util.concurrent.TimeUnit.SECONDS);
                    List<DelegationToken> described = a.describe(List.of("user" + w));
                    assertEquals(mine.stream().sorted(java.util.Comparator.comparing(DelegationToken::tokenId)).toList(),
                            described);
                }
                assertEquals(200, a.describe(null).size());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void useAfterClose() throws Exception {
        TokenAuthority a = new TokenAuthority("k");
        DelegationToken t = a.create("alice", T0);
        CredentialStore store = new CredentialStore();
        MechanismRegistry servers = new MechanismRegistry().addPasswordServers(store, a);
        a.close();
        a.close(); // idempotent
        assertTrue(a.isClosed());
        for (Use use : List.<Use>of(
                () -> a.create("alice", T0),
                () -> a.renew(t.hmac(), "alice", -1, T0),
                () -> a.expire(t.hmac(), "alice", -1, T0),
                () -> a.describe(null),
                () -> a.sweep(T0),
                a::nextSweepMs,
                () -> a.hmac(t.tokenId()),
                a::exportRecords,
                () -> a.importRecords("[]"),
                () -> a.handleRequest(new byte[10], "alice", false, T0),
                () -> new MechanismRegistry().addPasswordServers(store, a),
                () -> new MechanismRegistry().addPasswordServers(a))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, use::run);
            assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
        }
        // A registry made with the authority keeps serving its tokens after the authority is closed.
        try (MechanismRegistry client = new MechanismRegistry().addTokenClients(t.tokenId(), t.hmacBase64())) {
            AuthOutcome o = Wire.run(new ClientExchange(client, "SCRAM-SHA-512"),
                    new ServerExchange(servers, "SCRAM-SHA-512"), T0);
            assertEquals("User:alice", o.principal());
        }
        Refresher refresher = new Refresher();
        refresher.close();
        assertThrows(IllegalStateException.class, () -> refresher.setDelegationToken(t, T0));
        assertThrows(IllegalStateException.class, () -> new MechanismRegistry().addRefreshingPasswordClients(refresher));
        store.close();
        assertThrows(IllegalStateException.class, () -> servers.addPasswordServers(store, new TokenAuthority("k")));
        servers.close();
    }
}
