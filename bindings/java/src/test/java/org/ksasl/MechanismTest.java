package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Mechanism-level clients and servers, stores, lookups, validators and the exception mapping. */
class MechanismTest {
    static final long NOW = Wire.T0;

    static MechanismRegistry servers(CredentialStore store) {
        return new MechanismRegistry().addPasswordServers(store);
    }

    static CredentialStore aliceStore() throws KsaslException {
        CredentialStore s = new CredentialStore();
        s.addUser("alice", "alice-secret");
        return s;
    }

    @ParameterizedTest
    @ValueSource(strings = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})
    void passwordMechanismsAuthenticate(String mech) throws Exception {
        try (CredentialStore store = aliceStore(); MechanismRegistry s = servers(store);
                MechanismRegistry c = new MechanismRegistry().addPasswordClients("alice", "alice-secret");
                ClientExchange client = new ClientExchange(c, mech);
                ServerExchange server = new ServerExchange(s, mech)) {
            assertEquals(mech, client.mechanism());
            AuthOutcome o = Wire.run(client, server, NOW);
            assertEquals("User:alice", o.principal());
            assertEquals("alice", o.principalName());
            assertEquals(mech, o.mechanism());
            assertEquals(OptionalLong.empty(), o.credentialExpiryMs());
            assertTrue(client.isComplete());
            assertEquals(List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"), s.serverMechanisms());
            assertTrue(c.clientMechanisms().contains(mech));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})
    void wrongPasswordIsAnAuthenticationException(String mech) throws Exception {
        try (CredentialStore store = aliceStore(); MechanismRegistry s = servers(store);
                MechanismRegistry c = new MechanismRegistry().addPasswordClients("alice", "nope-not-it");
                ClientExchange client = new ClientExchange(c, mech);
                ServerExchange server = new ServerExchange(s, mech)) {
            KsaslException e = assertThrows(KsaslAuthenticationException.class, () -> Wire.run(client, server, NOW));
            assertEquals(300, e.code());
            assertEquals("INVALID_CREDENTIALS", e.codeName());
            assertEquals(ErrorKind.AUTHENTICATION, e.kind());
            assertFalse(e.getMessage().contains("nope-not-it"));
            assertFalse(e.toString().contains("nope-not-it"));
            if (mech.equals("PLAIN")) {
                assertEquals("Authentication failed: Invalid username or password", server.clientMessage());
            } else {
                assertTrue(server.clientMessage().endsWith("invalid credentials with SASL mechanism " + mech),
                        server.clientMessage());
            }
            // The failed server is in a defined state: further steps are misuse.
            KsaslStateException after = assertThrows(KsaslStateException.class, () -> server.step(new byte[1], NOW));
            assertEquals("STEP_AFTER_FAILURE", after.codeName());
        }
    }

    @Test
    void exceptionClassesFollowTheCodeKind() throws Exception {
        try (MechanismRegistry empty = new MechanismRegistry()) {
            KsaslArgumentException unknown = assertThrows(KsaslArgumentException.class,
                    () -> new ClientExchange(empty, "GSSAPI"));
            assertEquals(104, unknown.code());
            assertEquals(ErrorKind.MISUSE, unknown.kind());
            assertTrue(unknown instanceof IllegalArgumentException);
        }
        try (CredentialStore store = new CredentialStore()) {
            KsaslCredentialException low = assertThrows(KsaslCredentialException.class,
                    () -> store.addUser("a", "b", 100));
            assertEquals("CREDENTIAL_ITERATIONS_TOO_LOW", low.codeName());
            assertEquals(ErrorKind.CREDENTIAL, low.kind());
            assertThrows(KsaslException.class, () -> store.setScram("a", "SCRAM-SHA-256", "salt=%%%"));
            assertThrows(KsaslArgumentException.class, () -> store.setScram("a", "PLAIN", "x"));
        }
        try (CredentialStore store = aliceStore(); MechanismRegistry s = servers(store);
                ServerExchange server = new ServerExchange(s, "SCRAM-SHA-256")) {
            KsaslProtocolException p = assertThrows(KsaslProtocolException.class,
                    () -> server.step("garbage".getBytes(StandardCharsets.UTF_8), NOW));
            assertEquals(ErrorKind.PROTOCOL, p.kind());
            assertTrue(p.code() >= 200 && p.code() < 300);
        }
        try (MechanismRegistry c = new MechanismRegistry().addPasswordClients("alice", "pw");
                ClientExchange client = new ClientExchange(c, "PLAIN")) {
            client.start(NOW);
            KsaslException e = assertThrows(KsaslException.class, () -> client.serverFailed("denied by policy"));
            assertEquals("SERVER_REJECTED_AUTHENTICATION", e.codeName());
            KsaslStateException again = assertThrows(KsaslStateException.class, () -> client.start(NOW));
            assertTrue(again instanceof IllegalStateException);
        }
        // Java null checks come before the native call.
        try (CredentialStore store = new CredentialStore()) {
            assertThrows(NullPointerException.class, () -> store.addUser(null, "x"));
        }
    }

    @Test
    void storeManagesUsersExpiryAndTokens() throws Exception {
        try (CredentialStore store = aliceStore(); MechanismRegistry s = servers(store);
                MechanismRegistry c = new MechanismRegistry().addPasswordClients("alice", "alice-secret")) {
            store.setUserExpiry("alice", OptionalLong.of(NOW + 5_000));
            try (ClientExchange client = new ClientExchange(c, "SCRAM-SHA-512");
                    ServerExchange server = new ServerExchange(s, "SCRAM-SHA-512")) {
                assertEquals(OptionalLong.of(NOW + 5_000), Wire.run(client, server, NOW).credentialExpiryMs());
            }
            store.setUserExpiry("alice", OptionalLong.empty());
            assertTrue(store.removeUser("alice"));
            assertFalse(store.removeUser("alice"));
            try (ClientExchange client = new ClientExchange(c, "PLAIN");
                    ServerExchange server = new ServerExchange(s, "PLAIN")) {
                KsaslException e = assertThrows(KsaslException.class, () -> Wire.run(client, server, NOW));
                assertEquals(ErrorKind.AUTHENTICATION, e.kind());
            }
        }
    }

    @Test
    void pullFormAsksTheHost() throws Exception {
        try (MechanismRegistry s = new MechanismRegistry().addPasswordServers();
                MechanismRegistry c = new MechanismRegistry().addPasswordClients("bob", "bob-pw");
                ClientExchange client = new ClientExchange(c, "SCRAM-SHA-256");
                ServerExchange server = new ServerExchange(s, "SCRAM-SHA-256")) {
            assertThrows(KsaslStateException.class,
                    () -> server.provideCredential(CredentialAnswer.password("bob-pw"), NOW));
            ServerStep first = server.step(client.start(NOW).message(), NOW);
            assertEquals(ServerStep.Kind.NEED_CREDENTIAL, first.kind());
            assertNull(first.message());
            assertEquals(new CredentialRequest("SCRAM-SHA-256", "bob", false), server.credentialRequest());
            ServerStep challenge = server.provideCredential(
                    CredentialAnswer.password("bob-pw").withExpiryMs(NOW + 9_000), NOW);
            assertEquals(ServerStep.Kind.CHALLENGE, challenge.kind());
            assertNull(server.credentialRequest());
            ServerStep done = server.step(client.step(challenge.message(), NOW).message(), NOW);
            assertEquals(ServerStep.Kind.DONE, done.kind());
            assertTrue(client.step(done.message(), NOW).done());
            assertEquals(OptionalLong.of(NOW + 9_000), server.outcome().credentialExpiryMs());
        }
    }

    @Test
    void callbackLookupAnswersAndItsExceptionReachesTheCallerUnchanged() throws Exception {
        RuntimeException boom = new IllegalStateException("directory down");
        List<CredentialRequest> seen = new ArrayList<>();
        CredentialLookup lookup = req -> {
            seen.add(req);
            switch (req.username()) {
                case "carol": return CredentialAnswer.password("carol-pw");
                case "ghost": return null;
                case "down": return CredentialAnswer.unavailable("ldap timeout");
                default: throw boom;
            }
        };
        try (MechanismRegistry s = new MechanismRegistry().addPasswordServers(lookup)) {
            for (String user : List.of("carol", "ghost", "down", "explode")) {
                try (MechanismRegistry c = new MechanismRegistry().addPasswordClients(user, "carol-pw");
                        ClientExchange client = new ClientExchange(c, "SCRAM-SHA-256");
                        ServerExchange server = new ServerExchange(s, "SCRAM-SHA-256")) {
                    if (user.equals("carol")) {
                        assertEquals("User:carol", Wire.run(client, server, NOW).principal());
                    } else if (user.equals("explode")) {
                        byte[] first = client.start(NOW).message();
                        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                                () -> server.step(first, NOW));
                        assertSame(boom, thrown);
                        // The exchange failed; the authenticator is in a defined failed state.
                        assertThrows(KsaslStateException.class, () -> server.step(first, NOW));
                    } else {
                        KsaslException e = assertThrows(KsaslException.class, () -> Wire.run(client, server, NOW));
                        assertFalse(e.getMessage().contains("carol-pw"));
                    }
                }
            }
        }
        assertEquals(4, seen.size());
        assertTrue(seen.get(0).mechanism().equals("SCRAM-SHA-256") && !seen.get(0).tokenAuthenticated());
    }

    @Test
    void checkedExceptionFromALookupIsRethrownAsIs() throws Exception {
        Exception checked = new java.io.IOException("vault sealed");
        try (MechanismRegistry s = new MechanismRegistry().addPasswordServers(req -> {
                throw checked;
            });
                MechanismRegistry c = new MechanismRegistry().addPasswordClients("dave", "pw");
                ClientExchange client = new ClientExchange(c, "PLAIN");
                ServerExchange server = new ServerExchange(s, "PLAIN")) {
            Throwable t = assertThrows(Throwable.class, () -> server.step(client.start(NOW).message(), NOW));
            assertSame(checked, t);
        }
    }

    @Test
    void tokenClientsLogInWithTokenauth() throws Exception {
        try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(req -> {
                assertTrue(req.tokenAuthenticated());
                assertEquals("tok1", req.username());
                return CredentialAnswer.password("hmac-value").withTokenOwner("erin").withExpiryMs(NOW + 86_400_000);
            });
                MechanismRegistry c = new MechanismRegistry().addTokenClients("tok1", "hmac-value");
                ClientExchange client = new ClientExchange(c, "SCRAM-SHA-512");
                ServerExchange server = new ServerExchange(servers, "SCRAM-SHA-512")) {
            AuthOutcome o = Wire.run(client, server, NOW);
            assertEquals("User:erin", o.principal());
            assertTrue(o.tokenAuthenticated());
            assertEquals(OptionalLong.of(NOW + 86_400_000), o.credentialExpiryMs());
        }
    }

    @Test
    void oauthBearerWithUnsecuredTokensAndTheRefresher() throws Exception {
        OAuthBearerToken t = OAuthBearerToken.unsecured("frank", 3600, List.of("kafka"), NOW);
        assertEquals("frank", t.principal());
        assertEquals(NOW + 3_600_000, t.expiryMs());
        assertFalse(t.toString().contains(t.value()));
        try (Refresher r = new Refresher(); MechanismRegistry c = new MechanismRegistry();
                MechanismRegistry s = new MechanismRegistry().addOAuthBearerServer(List.of("kafka"), 0)) {
            assertThrows(KsaslCredentialException.class, () -> r.current(NOW));
            assertTrue(r.poll(NOW));
            assertEquals(1, r.setToken(t.value(), t.expiryMs(), t.principal(), Map.of("traceId", "abc"), NOW));
            assertEquals(1, r.generation());
            OAuthBearerToken cur = r.current(NOW);
            assertEquals(Map.of("traceId", "abc"), cur.extensions());
            assertEquals(1, cur.generation());
            assertTrue(r.nextDeadline().isPresent());
            c.addOAuthBearerClient(r);
            try (ClientExchange client = new ClientExchange(c, "OAUTHBEARER");
                    ServerExchange server = new ServerExchange(s, "OAUTHBEARER")) {
                AuthOutcome o = Wire.run(client, server, NOW);
                assertEquals("User:frank", o.principal());
                assertEquals(Map.of("traceId", "abc"), o.extensions());
                assertEquals(OptionalLong.of(t.expiryMs()), o.credentialExpiryMs());
            }
            // A scope the server requires but the token lacks.
            try (MechanismRegistry strict = new MechanismRegistry().addOAuthBearerServer(List.of("admin"), 0);
                    ClientExchange client = new ClientExchange(c, "OAUTHBEARER");
                    ServerExchange server = new ServerExchange(strict, "OAUTHBEARER")) {
                ServerStep err = server.step(client.start(NOW).message(), NOW);
                assertEquals(ServerStep.Kind.CHALLENGE, err.kind());
                String json = new String(err.message(), StandardCharsets.UTF_8);
                assertTrue(json.contains("\"status\":\"insufficient_scope\""), json);
                assertThrows(KsaslAuthenticationException.class, () -> server.step(new byte[] {1}, NOW));
            }
            r.setTokenFailure("idp unreachable", NOW + 1);
            assertEquals("frank", r.current(NOW + 2).principal());
            assertThrows(KsaslCredentialException.class, () -> r.current(t.expiryMs() + 1));
        }
    }

    @Test
    void hostTokenValidatorAcceptsRejectsAndThrows() throws Exception {
        RuntimeException down = new UnsupportedOperationException("introspection endpoint down");
        TokenValidator v = (token, now) -> {
            switch (token) {
                case "good": return new ValidatedToken("svc", now + 60_000);
                case "bad": return null;
                default: throw down;
            }
        };
        try (MechanismRegistry s = new MechanismRegistry().addOAuthBearerServer(v)) {
            for (String token : List.of("good", "bad", "raise")) {
                try (Refresher r = new Refresher(); MechanismRegistry c = new MechanismRegistry()) {
                    r.poll(NOW);
                    r.setToken(token, NOW + 60_000, "svc", null, NOW);
                    c.addOAuthBearerClient(r);
                    try (ClientExchange client = new ClientExchange(c, "OAUTHBEARER");
                            ServerExchange server = new ServerExchange(s, "OAUTHBEARER")) {
                        byte[] first = client.start(NOW).message();
                        if (token.equals("good")) {
                            assertEquals(ServerStep.Kind.DONE, server.step(first, NOW).kind());
                            assertEquals("User:svc", server.outcome().principal());
                        } else if (token.equals("bad")) {
                            ServerStep err = server.step(first, NOW);
                            assertTrue(new String(err.message(), StandardCharsets.UTF_8).contains("invalid_token"));
                        } else {
                            assertSame(down, assertThrows(UnsupportedOperationException.class,
                                    () -> server.step(first, NOW)));
                        }
                    }
                }
            }
        }
    }

    @Test
    void jwksValidatorBadInput() throws Exception {
        try (JwksValidator j = new JwksValidator()) {
            assertThrows(KsaslArgumentException.class, () -> j.setJwks("not json", NOW));
            KsaslException e = assertThrows(KsaslException.class, () -> j.validate("a.b", NOW));
            assertEquals("TOKEN_MALFORMED", e.codeName());
            assertNotNull(e.details().get("status"));
            // No key set yet: fetch at once.
            assertTrue(j.nextRefreshMs() <= NOW);
        }
    }

    @Test
    void secretsStayOutOfToStrings() {
        CredentialAnswer a = CredentialAnswer.password("hunter2").withTokenOwner("o").withExpiryMs(5);
        assertFalse(a.toString().contains("hunter2"));
        assertEquals(CredentialAnswer.Kind.PASSWORD, a.kind());
        ClientStep s = new ClientStep("n,,n=u,r=x".getBytes(StandardCharsets.UTF_8), false);
        assertFalse(s.toString().contains("n=u"));
        assertArrayEquals("n,,n=u,r=x".getBytes(StandardCharsets.UTF_8), s.message());
    }
}
