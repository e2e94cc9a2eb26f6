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

    @Test
    void everyKindMapsToItsClass() {
        record Case(int code, String name, String kind, Class<?> type) {}
        for (Case c : List.of(
                new Case(100, "INVALID_ARGUMENT", "misuse", KsaslArgumentException.class),
                new Case(103, "WRONG_STATE", "misuse", KsaslStateException.class),
                new Case(101, "STEP_AFTER_DONE", "misuse", KsaslStateException.class),
                new Case(215, "ILLEGAL_SASL_STATE", "protocol", KsaslProtocolException.class),
                new Case(301, "UNKNOWN_USER", "authentication", KsaslAuthenticationException.class),
                new Case(404, "NO_VALID_CREDENTIAL", "credential", KsaslCredentialException.class),
                new Case(501, "PANIC", "internal", KsaslInternalException.class))) {
            Throwable t = Errors.create(c.code(), c.name(), c.kind(), "message", new String[] {"status", "x"});
            assertInstanceOf(c.type(), t);
            KsaslError e = (KsaslError) t;
            assertEquals(c.code(), e.code());
            assertEquals(c.name(), e.codeName());
            assertEquals(ErrorKind.fromName(c.kind()), e.kind());
            assertEquals(Map.of("status", "x"), e.details());
            assertEquals("message", t.getMessage());
        }
    }

    @Test
    void lookupMayAnswerWithAKafkaScramCredential() throws Exception {
        String cred = new ObjectMapper().readTree(new File(System.getProperty("ksasl.vectors", "../../tests/vectors"),
                "scram.json")).get("vectors").get(0).get("kafka_credential").asText();
        try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(
                req -> CredentialAnswer.scram(cred).withExpiryMs(T0 + 1000));
                MechanismRegistry clients = new MechanismRegistry().addPasswordClients("user", "pencil");
                ClientAuthenticator c = new ClientAuthenticator(clients, "SCRAM-SHA-256");
                ServerAuthenticator s = new ServerAuthenticator(servers, "SCRAM-SHA-256")) {
            assertEquals("User:user", Wire.run(c, s, T0).principal());
        }
        // A malformed credential from the lookup fails the exchange; the message names no secret.
        try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(
                req -> CredentialAnswer.scram("salt=nope"));
                MechanismRegistry clients = new MechanismRegistry().addPasswordClients("user", "pencil");
                ClientAuthenticator c = new ClientAuthenticator(clients, "SCRAM-SHA-256");
                ServerAuthenticator s = new ServerAuthenticator(servers, "SCRAM-SHA-256")) {
            KsaslException e = org.junit.jupiter.api.Assertions.assertThrows(KsaslException.class,
                    () -> Wire.run(c, s, T0));
            assertFalse(e.getMessage().contains("pencil"));
        }
    }

    @Test
    void failedReauthenticationKeepsTheSessionUnderTheRetryPolicy() throws Exception {
        try (Refresher refresher = new Refresher(); MechanismRegistry cr = new MechanismRegistry();
                MechanismRegistry sr = new MechanismRegistry().addOAuthBearerServer();
                ServerConfig sc = ServerConfig.builder(sr).maxReauthMs(3000).reauthRetryMs(200).build()) {
            refresher.poll(T0);
            refresher.setToken(OAuthToken.unsecured("alice", 3600, null, T0), T0);
            cr.addOAuthBearerClient(refresher);
            // librdkafka's fixed 90 %: the retry (due + 200 ms) must land before the 3 s session
            // ends, which Kafka's random 85-95 % does not always leave room for.
            try (ClientConfig cc = ClientConfig.builder(cr, "OAUTHBEARER").reauthRetryMs(200)
                    .reauthTiming(ReauthTiming.LIBRDKAFKA).build()) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                p.pump(T0);
                long due = p.client.nextDeadline().getAsLong();
                refresher.poll(due);
                refresher.setToken(OAuthToken.unsecured("mallory", 3600, null, due), due);
                assertTrue(p.client.handleTimeout(due));
                // Collect the client's events by hand to see the REAUTH_FAILED details.
                ClientEvent failed = null;
                byte[] toServer = p.client.transmit();
                while (toServer.length > 0 && failed == null) {
                    byte[] toClient = new byte[0];
                    for (byte[] f : Wire.frames(toServer)) {
                        ServerOutput o = p.server.handleFrame(f, due);
                        toClient = Wire.concat(toClient, o.frames());
                        if (o.action() == ServerOutput.Action.REAUTH_FAILED) {
                            assertEquals("PRINCIPAL_CHANGED", o.error().codeName());
                        } else {
                            assertEquals(ServerOutput.Action.CONTINUE, o.action(), o.toString());
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
