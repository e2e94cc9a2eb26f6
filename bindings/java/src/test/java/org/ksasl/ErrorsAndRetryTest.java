package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The exception mapping for every kind, SCRAM answers from a lookup, and the retry policy. */
class ErrorsAndRetryTest {
    static final long T0 = Wire.T0;

    /** A record as the native side writes it for {@link Fields}: strings (null allowed) and counts (ints). */
    static byte[] fields(Object... items) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.nio.ByteBuffer n = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (Object o : items) {
            byte[] b = o == null ? null : o instanceof Integer ? null : o.toString().getBytes(
                    java.nio.charset.StandardCharsets.UTF_8);
            out.writeBytes(n.putInt(0, o instanceof Integer ? (Integer) o : b == null ? -1 : b.length).array());
            if (b != null) {
                out.writeBytes(b);
            }
        }
        return out.toByteArray();
    }

    @Test
    void everyKindMapsToItsClass() {
        record Case(int code, String name, ErrorKind kind, Class<?> type) {}
        for (Case c : List.of(
                new Case(100, "INVALID_ARGUMENT", ErrorKind.MISUSE, KsaslArgumentException.class),
                new Case(103, "WRONG_STATE", ErrorKind.MISUSE, KsaslStateException.class),
                new Case(101, "STEP_AFTER_DONE", ErrorKind.MISUSE, KsaslStateException.class),
                new Case(215, "ILLEGAL_SASL_STATE", ErrorKind.PROTOCOL, KsaslProtocolException.class),
                new Case(301, "UNKNOWN_USER", ErrorKind.AUTHENTICATION, KsaslAuthenticationException.class),
                new Case(404, "NO_VALID_CREDENTIAL", ErrorKind.CREDENTIAL, KsaslCredentialException.class),
                new Case(501, "PANIC", ErrorKind.INTERNAL, KsaslInternalException.class))) {
            Native.init();
            Throwable t = Native.errorNew(c.code(), "message");
            assertInstanceOf(c.type(), t);
            KsaslError e = (KsaslError) t;
            assertEquals(c.code(), e.code());
            assertEquals(c.name(), e.codeName());
            assertEquals(c.kind(), e.kind());
            assertEquals(Map.of(), e.details());
            assertEquals("message", t.getMessage());
        }
        Throwable t = Errors.create(301, false, fields("UNKNOWN_USER", "authentication", "m", "shown", 2, "status", "x"),
                null);
        assertEquals(Map.of("status", "x"), ((KsaslError) t).details());
        assertEquals("shown", ((KsaslException) t).clientMessage());
    }

    /** The GSSAPI codes, through the core's table: the class of their kind. */
    @Test
    void kerberosCodesMapToTheirKinds() {
        record Case(int code, String name, Class<?> type) {}
        for (Case c : List.of(
                new Case(326, "KERBEROS_TICKET_EXPIRED", KsaslAuthenticationException.class),
                new Case(327, "KERBEROS_REPLAY", KsaslAuthenticationException.class),
                new Case(328, "KERBEROS_WRONG_SERVICE", KsaslAuthenticationException.class),
                new Case(329, "KERBEROS_KEY_MISMATCH", KsaslAuthenticationException.class),
                new Case(330, "GSS_FAILED", KsaslAuthenticationException.class),
                new Case(331, "SECURITY_LAYER_REFUSED", KsaslAuthenticationException.class),
                new Case(412, "KERBEROS_NAME_UNMAPPED", KsaslCredentialException.class),
                new Case(413, "GSSAPI_UNAVAILABLE", KsaslCredentialException.class),
                new Case(414, "KERBEROS_LOGIN_FAILED", KsaslCredentialException.class))) {
            Native.init();
            Throwable t = Native.errorNew(c.code(), "m");
            assertInstanceOf(c.type(), t, c.name());
            assertEquals(c.name(), ((KsaslError) t).codeName());
            assertEquals(c.code(), ((KsaslError) t).code());
        }
    }

    /**
     * Regression (Errors.java:11-14 kept its own list of state-misuse code names): which misuse
     * is about state is the core's classification ({@code ErrorCode::is_state_misuse}), passed
     * by the native side; the Java side never looks at a code's name.
     */
    @Test
    void stateMisuseIsTheCoresClassification() {
        Native.init();
        for (int code = 100; code <= 106; code++) {
            Throwable t = Native.errorNew(code, "m");
            boolean state = code == 101 || code == 102 || code == 103;
            Class<?> expected = state ? KsaslStateException.class : KsaslArgumentException.class;
            assertEquals(expected, t.getClass(), "code " + code);
        }
        // The names alone decide nothing: WRONG_STATE without the core's flag is an argument misuse.
        assertInstanceOf(KsaslArgumentException.class,
                Errors.create(103, false, fields("WRONG_STATE", "misuse", "m", null, 0), null));
        assertInstanceOf(KsaslStateException.class,
                Errors.create(100, true, fields("INVALID_ARGUMENT", "misuse", "m", null, 0), null));
    }

    @Test
    void lookupMayAnswerWithAKafkaScramCredential() throws Exception {
        String cred = new ObjectMapper().readTree(new File(System.getProperty("ksasl.vectors", "../../tests/vectors"),
                "scram.json")).get("vectors").get(0).get("kafka_credential").asText();
        try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(
                req -> CredentialAnswer.scram(cred).withExpiryMs(T0 + 1000));
                MechanismRegistry clients = new MechanismRegistry().addPasswordClients("user", "pencil");
                ClientExchange c = new ClientExchange(clients, "SCRAM-SHA-256");
                ServerExchange s = new ServerExchange(servers, "SCRAM-SHA-256")) {
            assertEquals("User:user", Wire.run(c, s, T0).principal());
        }
        // A malformed credential from the lookup fails the exchange; the message names no secret.
        try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(
                req -> CredentialAnswer.scram("salt=nope"));
                MechanismRegistry clients = new MechanismRegistry().addPasswordClients("user", "pencil");
                ClientExchange c = new ClientExchange(clients, "SCRAM-SHA-256");
                ServerExchange s = new ServerExchange(servers, "SCRAM-SHA-256")) {
            KsaslException e = org.junit.jupiter.api.Assertions.assertThrows(KsaslException.class,
                    () -> Wire.run(c, s, T0));
            assertFalse(e.getMessage().contains("pencil"));
        }
    }

    @Test
    void failedReauthenticationKeepsTheSessionUnderTheRetryPolicy() throws Exception {
        try (Refresher refresher = new Refresher(); MechanismRegistry cr = new MechanismRegistry();
                MechanismRegistry sr = new MechanismRegistry().addOAuthBearerServer();
                ServerConfig sc = ServerConfig.builder(sr).setMaxReauthMs(3000).setReauthRetryMs(200).build()) {
            refresher.poll(T0);
            refresher.setToken(OAuthBearerToken.unsecured("alice", 3600, null, T0), T0);
            cr.addOAuthBearerClient(refresher);
            // librdkafka's fixed 90 %: the retry (due + 200 ms) must land before the 3 s session
            // ends, which Kafka's random 85-95 % does not always leave room for.
            try (ClientConfig cc = ClientConfig.builder(cr, "OAUTHBEARER").setReauthRetryMs(200)
                    .setReauthTiming(ReauthTiming.LIBRDKAFKA).build()) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                p.pump(T0);
                long due = p.client.nextDeadline().getAsLong();
                refresher.poll(due);
                refresher.setToken(OAuthBearerToken.unsecured("mallory", 3600, null, due), due);
                assertTrue(p.client.handleTimeout(due));
                // Collect the client's events by hand to see the REAUTH_FAILED details.
                ClientEvent failed = null;
                byte[] toServer = p.client.transmit();
                while (toServer.length > 0 && failed == null) {
                    byte[] toClient = new byte[0];
                    for (byte[] f : Wire.frames(toServer)) {
                        ServerOutput o = p.server.handleFrame(f, due);
                        toClient = Wire.concat(toClient, o.frames());
                        if (o.action() == ServerAction.REAUTH_FAILED) {
                            assertEquals("PRINCIPAL_CHANGED", o.error().codeName());
                        } else {
                            assertEquals(ServerAction.CONTINUE, o.action(), o.toString());
                        }
                    }
                    for (byte[] f : Wire.frames(toClient)) {
                        ClientEvent ev = p.client.handleFrame(f, due);
                        if (ev.kind() == ClientEvent.Kind.REAUTH_FAILED) {
                            failed = ev;
                        }
                    }
                    toServer = p.client.transmit();
                }
                assertNotNull(failed);
                assertNotNull(failed.error());
                assertTrue(failed.retryAtMs().isPresent());
                // The old session still holds on both sides.
                assertEquals("User:alice", p.server.session().principal());
                assertEquals(Gate.PROCESS, p.server.gate((short) 3, due + 1));
                assertTrue(p.client.beforeRequest(due + 1));
                assertTrue(failed.toString().contains("REAUTH_FAILED"));
                p.client.close();
                p.server.close();
            }
        }
    }
}
