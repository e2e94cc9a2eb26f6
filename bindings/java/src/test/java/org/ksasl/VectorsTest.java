package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The shared vector files, replayed through the Java binding. */
class VectorsTest {
    private static JsonNode load(String name) throws IOException {
        String dir = System.getProperty("ksasl.vectors", "../../tests/vectors");
        return new ObjectMapper().readTree(new File(dir, name));
    }

    @Test
    void scramVectorsAuthenticateAgainstTheirStoredKeys() throws Exception {
        JsonNode vectors = load("scram.json").get("vectors");
        assertTrue(vectors.size() >= 3);
        for (JsonNode v : vectors) {
            String mech = v.get("mechanism").asText();
            String user = v.get("username").asText();
            String password = v.get("password").asText();
            String cred = v.has("kafka_credential") ? v.get("kafka_credential").asText()
                    : "salt=" + v.get("salt_b64").asText() + ",stored_key=" + v.get("stored_key_b64").asText()
                            + ",server_key=" + v.get("server_key_b64").asText() + ",iterations="
                            + v.get("iterations").asInt();
            boolean token = v.get("token_auth").asBoolean();
            try (CredentialStore store = new CredentialStore();
                    MechanismRegistry clients = new MechanismRegistry();
                    MechanismRegistry servers = new MechanismRegistry()) {
                if (token) {
                    store.setToken(user, mech, cred, "owner", OptionalLong.of(Wire.T0 + 60_000));
                    clients.addTokenClients(user, password);
                } else {
                    store.setScram(user, mech, cred);
                    clients.addPasswordClients(user, password);
                }
                servers.addPasswordServers(store);
                try (ClientExchange c = new ClientExchange(clients, mech);
                        ServerExchange s = new ServerExchange(servers, mech)) {
                    AuthOutcome o = Wire.run(c, s, Wire.T0);
                    assertTrue(c.isComplete(), v.get("name").asText());
                    if (token) {
                        assertEquals("User:owner", o.principal());
                        assertTrue(o.tokenAuthenticated());
                        assertEquals(OptionalLong.of(Wire.T0 + 60_000), o.credentialExpiryMs());
                        assertEquals(Map.of("tokenauth", "true"), o.extensions());
                    } else {
                        assertEquals("User:" + user, o.principal());
                        assertFalse(o.tokenAuthenticated());
                    }
                }
            }
        }
    }

    @Test
    void rfc7677StoredKeysGiveTheRfcSaltAndRefuseAForgedProof() throws Exception {
        // The RFC's client-final message, fed to a server holding the RFC's stored keys, must
        // be accepted, and the server's signature must be the RFC's.
        JsonNode v = load("scram.json").get("vectors").get(0);
        assertEquals("rfc7677-sha256", v.get("name").asText());
        try (CredentialStore store = new CredentialStore(); MechanismRegistry servers = new MechanismRegistry()) {
            store.setScram("user", "SCRAM-SHA-256", v.get("kafka_credential").asText());
            servers.addPasswordServers(store);
            try (ServerExchange s = new ServerExchange(servers, "SCRAM-SHA-256")) {
                ServerStep first = s.step(v.get("client_first").asText().getBytes(), Wire.T0);
                assertEquals(ServerStep.Kind.CHALLENGE, first.kind());
                String serverFirst = new String(first.message());
                assertTrue(serverFirst.startsWith("r=" + v.get("client_nonce").asText()));
                assertTrue(serverFirst.endsWith(",s=" + v.get("salt_b64").asText() + ",i=4096"));
                // The server's nonce is random, so the RFC's proof does not apply: a proof over
                // another nonce must fail as invalid credentials, not as a protocol error.
                String nonce = serverFirst.substring(2, serverFirst.indexOf(','));
                String forged = "c=biws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
                KsaslException e = assertThrows(KsaslAuthenticationException.class,
                        () -> s.step(forged.getBytes(), Wire.T0));
                assertEquals("INVALID_CREDENTIALS", e.codeName());
            }
        }
    }

    @Test
    void jwtVectorsGiveTheExpectedVerdicts() throws Exception {
        JsonNode v = load("jwt.json");
        long now = v.get("now_ms").asLong();
        try (JwksValidator j = new JwksValidator(v.get("issuer").asText(), v.get("audience").asText(), 30_000)) {
            assertEquals(4, j.setJwks(v.get("jwks").toString(), now));
            int checked = 0;
            for (JsonNode t : v.get("tokens")) {
                String expect = t.get("expect").asText();
                String name = t.get("name").asText();
                if (expect.equals("ok")) {
                    assertEquals("alice", j.validate(t.get("token").asText(), now).principal(), name);
                    checked++;
                } else if (expect.startsWith("TOKEN")) {
                    KsaslException e = assertThrows(KsaslException.class, () -> j.validate(t.get("token").asText(), now),
                            name);
                    assertEquals(expect, e.codeName(), name);
                    assertEquals(ErrorKind.AUTHENTICATION, e.kind());
                    assertEquals("invalid_token", e.details().get("status"), name);
                    assertFalse(e.getMessage().contains(t.get("token").asText()), name);
                    checked++;
                }
            }
            assertTrue(checked > 30);
        }
    }

    @Test
    void unsecuredVectorsAreAcceptedByTheUnsecuredServer() throws Exception {
        JsonNode v = load("jwt.json");
        long now = v.get("now_ms").asLong();
        for (JsonNode t : v.get("unsecured")) {
            try (Refresher r = new Refresher(); MechanismRegistry clients = new MechanismRegistry();
                    MechanismRegistry servers = new MechanismRegistry()) {
                assertTrue(r.poll(now));
                r.setToken(t.get("token").asText(), now + 3_000_000, "ignored-by-server", Map.of(), now);
                clients.addOAuthBearerClient(r);
                servers.addOAuthBearerServer();
                try (ClientExchange c = new ClientExchange(clients, "OAUTHBEARER");
                        ServerExchange s = new ServerExchange(servers, "OAUTHBEARER")) {
                    AuthOutcome o = Wire.run(c, s, now);
                    assertTrue(o.principal().equals("User:alice") || o.principal().equals("User:bob"),
                            t.get("name").asText());
                    assertTrue(o.credentialExpiryMs().isPresent());
                }
            }
        }
    }
}
