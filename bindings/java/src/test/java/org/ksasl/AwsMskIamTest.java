package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * AWS_MSK_IAM and MSK's OAUTHBEARER tokens from Java: logins through exchanges and
 * connections, temporary credentials capping the session, refusals with MSK's text, key
 * rotation through a refresher, the signer's token vector, argument errors and secrets kept
 * out of toString().
 */
class AwsMskIamTest {
    /** The time of the vectors (2026-12-03T12:34:56Z). */
    static final long NOW = 1_796_301_296_000L;
    static final String HOST = "b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com";
    static final String REGION = "us-east-1";
    static final String ARN = "arn:aws:iam::123456789012:user/alice";

    static AwsCredentials alice() {
        return new AwsCredentials("AKIAALICE", "alice-secret/+=");
    }

    static MechanismRegistry server(AwsKeyStore keys, List<String> hosts) {
        return new MechanismRegistry().addAwsMskIamServer(keys, REGION, hosts);
    }

    /** One AWS_MSK_IAM exchange; the server's exchange (closed by the caller) after success. */
    static AuthOutcome login(MechanismRegistry client, MechanismRegistry server, long now) throws KsaslException {
        try (ClientExchange c = new ClientExchange(client, "AWS_MSK_IAM");
                ServerExchange s = new ServerExchange(server, "AWS_MSK_IAM")) {
            ClientStep first = c.start(now);
            assertFalse(first.done());
            String payload = new String(first.message(), StandardCharsets.UTF_8);
            assertTrue(payload.startsWith("{") && payload.contains("\"action\":\"kafka-cluster:Connect\""), payload);
            ServerStep r = s.step(first.message(), now);
            assertEquals(ServerStep.Kind.DONE, r.kind());
            String answer = new String(r.message(), StandardCharsets.UTF_8);
            assertTrue(answer.startsWith("{\"version\":\"2020_10_22\",\"request-id\":\""), answer);
            assertTrue(c.step(r.message(), now).done());
            assertTrue(c.isComplete());
            return s.outcome();
        }
    }

    /** A refused AWS_MSK_IAM login: the server's exception, after checking the client's text. */
    static KsaslAuthenticationException refused(MechanismRegistry client, MechanismRegistry server, long now)
            throws KsaslException {
        try (ClientExchange c = new ClientExchange(client, "AWS_MSK_IAM");
                ServerExchange s = new ServerExchange(server, "AWS_MSK_IAM")) {
            byte[] payload = c.start(now).message();
            KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class,
                    () -> s.step(payload, now));
            assertEquals("INVALID_CREDENTIALS", e.codeName());
            String shown = s.clientMessage();
            assertTrue(shown.startsWith("[") && shown.endsWith("]: Access denied"), shown);
            assertEquals(shown, e.clientMessage());
            return e;
        }
    }

    @Test
    void aSignedPayloadAuthenticatesAsTheKeysPrincipal() throws Exception {
        try (AwsCredentials creds = alice(); AwsKeyStore keys = new AwsKeyStore();
                MechanismRegistry sr = server(keys, List.of(HOST));
                MechanismRegistry cr = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, creds, null, null)) {
            keys.add(creds, ARN);
            assertTrue(cr.clientMechanisms().contains("AWS_MSK_IAM"));
            assertTrue(sr.serverMechanisms().contains("AWS_MSK_IAM"));
            AuthOutcome o = login(cr, sr, NOW);
            assertEquals("User:" + ARN, o.principal());
            assertEquals("AWS_MSK_IAM", o.mechanism());
            assertEquals(OptionalLong.empty(), o.credentialExpiryMs());
            // The other key order and a user agent of the host's verify just as well.
            try (MechanismRegistry py = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, creds,
                    "kafka-python", "kafka-python")) {
                assertEquals("User:" + ARN, login(py, sr, NOW).principal());
            }
            // A host the server does not list.
            try (MechanismRegistry other = new MechanismRegistry().addAwsMskIamClient("b-2.example", REGION, creds,
                    null, null)) {
                assertTrue(refused(other, sr, NOW).getMessage().contains("host"));
            }
        }
    }

    @Test
    void theLoginRunsThroughConnectionsAndTemporaryCredentialsCapTheSession() throws Exception {
        long expiry = NOW + 3_600_000;
        try (AwsCredentials temp = new AwsCredentials("ASIATEMP", "temp-secret", "session-token",
                OptionalLong.of(expiry)); AwsKeyStore keys = new AwsKeyStore();
                MechanismRegistry sr = server(keys, List.of());
                MechanismRegistry cr = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, temp, null, null);
                ServerConfig sc = ServerConfig.builder(sr).setMaxReauthMs(86_400_000).build();
                ClientConfig cc = ClientConfig.builder(cr, "AWS_MSK_IAM").build()) {
            keys.add(temp, "temp");
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(NOW);
            p.pump(NOW);
            ServerSession session = p.server.session();
            assertEquals("User:temp", session.principal());
            assertEquals(OptionalLong.of(expiry), session.outcome().credentialExpiryMs());
            assertEquals(3_600_000, session.lifetimeMs());
            assertEquals(OptionalLong.of(expiry), session.expiryMs());
            p.client.close();
            p.server.close();
            // The same key without its session token is refused.
            try (AwsCredentials bare = new AwsCredentials("ASIATEMP", "temp-secret");
                    MechanismRegistry br = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, bare, null, null)) {
                assertTrue(refused(br, sr, NOW).getMessage().contains("session token"));
            }
            // Past their expiry the client does not sign at all.
            try (ClientExchange c = new ClientExchange(cr, "AWS_MSK_IAM")) {
                KsaslException e = assertThrows(KsaslException.class, () -> c.start(expiry));
                assertEquals("NO_VALID_CREDENTIAL", e.codeName());
            }
        }
    }

    @Test
    void aWrongSecretOrAnUnknownKeyIsAccessDenied() throws Exception {
        try (AwsCredentials creds = alice(); AwsCredentials wrong = new AwsCredentials("AKIAALICE", "not-the-secret");
                AwsCredentials unknown = new AwsCredentials("AKIAMALLORY", "x"); AwsKeyStore keys = new AwsKeyStore();
                MechanismRegistry sr = server(keys, List.of(HOST))) {
            keys.add(creds, "alice");
            try (MechanismRegistry cr = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, wrong, null, null)) {
                KsaslAuthenticationException e = refused(cr, sr, NOW);
                assertFalse(e.clientMessage().contains("signature"), e.clientMessage());
                assertTrue(e.getMessage().contains("does not verify"), e.getMessage());
                assertFalse(e.getMessage().contains("not-the-secret"), e.getMessage());
            }
            try (MechanismRegistry cr = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, unknown, null, null)) {
                assertTrue(refused(cr, sr, NOW).getMessage().contains("unknown"));
            }
            // Signed 15 minutes and a second before the server's clock.
            try (MechanismRegistry cr = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, creds, null, null)) {
                try (ClientExchange c = new ClientExchange(cr, "AWS_MSK_IAM");
                        ServerExchange s = new ServerExchange(sr, "AWS_MSK_IAM")) {
                    byte[] old = c.start(NOW - 901_000).message();
                    assertThrows(KsaslAuthenticationException.class, () -> s.step(old, NOW));
                    assertTrue(s.clientMessage().endsWith("]: Access denied"), s.clientMessage());
                }
            }
        }
    }

    @Test
    void aRefresherRotatesTheKey() throws Exception {
        try (AwsCredentials first = new AwsCredentials("AKIAALICE", "first", null, OptionalLong.of(NOW + 3_600_000));
                AwsCredentials second = new AwsCredentials("AKIAALICE2", "second", null,
                        OptionalLong.of(NOW + 7_200_000));
                AwsKeyStore keys = new AwsKeyStore(); Refresher refresher = new Refresher();
                MechanismRegistry sr = server(keys, List.of(HOST));
                MechanismRegistry cr = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, refresher, null, null)) {
            keys.add(first, "alice");
            // Nothing installed yet: the client cannot sign.
            try (ClientExchange c = new ClientExchange(cr, "AWS_MSK_IAM")) {
                assertThrows(KsaslException.class, () -> c.start(NOW));
            }
            long g1 = refresher.setAwsCredentials(first, "alice", NOW);
            assertEquals("User:alice", login(cr, sr, NOW).principal());
            assertTrue(refresher.nextDeadline().isPresent());
            keys.add(second, "alice");
            long g2 = refresher.setAwsCredentials(second, "alice", NOW + 1000);
            assertNotEquals(g1, g2);
            assertTrue(keys.remove("AKIAALICE"));
            assertFalse(keys.remove("AKIAALICE"));
            AuthOutcome o = login(cr, sr, NOW + 2000);
            assertEquals("User:alice", o.principal());
            assertEquals(OptionalLong.of(NOW + 7_200_000), o.credentialExpiryMs());
            // The old key no longer works.
            try (MechanismRegistry old = new MechanismRegistry().addAwsMskIamClient(HOST, REGION, first, null, null)) {
                assertTrue(refused(old, sr, NOW + 2000).getMessage().contains("unknown"));
            }
            // MSK tokens from the refresher's current credentials.
            assertEquals("AKIAALICE2", refresher.mskToken(REGION, null, NOW + 3000).principal());
        }
    }

    @Test
    void mskTokensEqualTheSignersAndLogIn() throws Exception {
        JsonNode vector = null;
        Path dir = Path.of(System.getProperty("ksasl.vectors", "../../tests/vectors"));
        for (JsonNode t : new ObjectMapper().readTree(dir.resolve("aws_msk_iam.json").toFile()).get("tokens")) {
            if (t.get("region").asText().equals("us-east-1") && t.get("access_key_id").asText().equals("AKIDEXAMPLE")
                    && t.get("now_ms").asLong() == NOW && t.get("session_token").isNull()) {
                vector = t;
            }
        }
        assertTrue(vector != null, "the us-east-1 token vector");
        String ua = "aws-msk-iam-sasl-signer-python/1.0.2";
        assertEquals(ua, vector.get("user_agent").asText());
        try (AwsCredentials creds = new AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")) {
            OAuthBearerToken t = creds.mskToken(REGION, ua, NOW);
            assertEquals(vector.get("token").asText(), t.value());
            assertEquals(vector.get("expiry_ms").asLong(), t.expiryMs());
            assertEquals("AKIDEXAMPLE", t.principal());
            assertFalse(t.toString().contains(t.value()), t.toString());
            // The same from a refresher holding the same keys (with an expiry of their own).
            try (AwsCredentials timed = new AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                    null, OptionalLong.of(NOW + 3_600_000)); Refresher r = new Refresher()) {
                r.setAwsCredentials(timed, "AKIDEXAMPLE", NOW);
                assertEquals(t.value(), r.mskToken(REGION, ua, NOW).value());
            }
            // ksasl's own user agent when none is given.
            assertNotEquals(t.value(), creds.mskToken(REGION, null, NOW).value());
        }
        // An OAUTHBEARER login with MSK's tokens.
        try (AwsCredentials creds = alice(); AwsKeyStore keys = new AwsKeyStore();
                MechanismRegistry sr = new MechanismRegistry().addMskOAuthBearerServer(keys, REGION);
                MechanismRegistry cr = new MechanismRegistry().addMskOAuthBearerClient(REGION, creds, null)) {
            keys.add(creds, ARN);
            try (ClientExchange c = new ClientExchange(cr, "OAUTHBEARER");
                    ServerExchange s = new ServerExchange(sr, "OAUTHBEARER")) {
                AuthOutcome o = Wire.run(c, s, NOW);
                assertEquals("User:" + ARN, o.principal());
            }
            // Signed for another region: refused.
            try (MechanismRegistry eu = new MechanismRegistry().addMskOAuthBearerClient("eu-west-3", creds, null);
                    ClientExchange c = new ClientExchange(eu, "OAUTHBEARER");
                    ServerExchange s = new ServerExchange(sr, "OAUTHBEARER")) {
                assertThrows(KsaslAuthenticationException.class, () -> Wire.run(c, s, NOW));
            }
        }
    }

    @Test
    void badArgumentsAreTheBindingsExceptionsWithCodes() throws Exception {
        for (String[] bad : new String[][] {{"", "secret"}, {"AKIA/SLASH", "secret"}, {"AKIAOK", ""}}) {
            KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                    () -> new AwsCredentials(bad[0], bad[1]));
            assertEquals("INVALID_ARGUMENT", e.codeName());
        }
        assertEquals("INVALID_ARGUMENT", assertThrows(KsaslArgumentException.class,
                () -> new AwsCredentials("AKIAOK", "s", "", OptionalLong.empty())).codeName());
        assertThrows(NullPointerException.class, () -> new AwsCredentials(null, "s"));
        try (AwsCredentials creds = alice(); AwsKeyStore keys = new AwsKeyStore();
                MechanismRegistry r = new MechanismRegistry(); Refresher refresher = new Refresher()) {
            assertEquals("INVALID_ARGUMENT", assertThrows(KsaslArgumentException.class,
                    () -> r.addAwsMskIamClient(HOST, REGION, creds, null, "python")).codeName());
            assertEquals("INVALID_ARGUMENT", assertThrows(KsaslArgumentException.class,
                    () -> keys.add(creds, "")).codeName());
            // A refresher needs credentials that carry their expiry.
            KsaslException e = assertThrows(KsaslException.class, () -> refresher.setAwsCredentials(creds, "a", NOW));
            assertEquals("INVALID_CREDENTIAL_EXPIRY", e.codeName());
            try (AwsCredentials expired = new AwsCredentials("AKIAOLD", "s", null, OptionalLong.of(NOW))) {
                assertEquals("NO_VALID_CREDENTIAL",
                        assertThrows(KsaslException.class, () -> expired.mskToken(REGION, null, NOW)).codeName());
            }
            AwsCredentials closed = alice();
            closed.close();
            assertThrows(IllegalStateException.class, () -> keys.add(closed, "alice"));
            assertThrows(IllegalStateException.class, () -> closed.mskToken(REGION, null, NOW));
        }
    }

    @Test
    void toStringHidesTheSecretAndTheToken() {
        try (AwsCredentials c = new AwsCredentials("ASIATEMP", "very-secret-key", "very-secret-token",
                OptionalLong.of(NOW))) {
            String s = c.toString();
            assertTrue(s.contains("ASIATEMP") && s.contains("<redacted>") && s.contains(Long.toString(NOW)), s);
            assertFalse(s.contains("very-secret"), s);
            assertEquals("ASIATEMP", c.accessKeyId());
            assertTrue(c.hasSessionToken());
            assertEquals(OptionalLong.of(NOW), c.expiresAtMs());
        }
        try (AwsCredentials c = alice()) {
            assertFalse(c.hasSessionToken());
            assertEquals(OptionalLong.empty(), c.expiresAtMs());
            assertFalse(c.toString().contains("alice-secret"), c.toString());
        }
    }
}
