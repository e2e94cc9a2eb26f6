package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * GSSAPI through the binding against a real MIT KDC: logins from keytabs (no {@code kinit}),
 * exchanges and the connection drivers with re-authentication, principal-to-local rules, the
 * background renewal, and each failure's own code. MIT Kerberos reads its configuration from
 * the process environment, so the JVM runs under {@code tests/kerberos/kdc.py --exec} (as
 * {@code make test-java} does), which also names the KDC's facts in {@code KSASL_KDC_INFO};
 * without it these tests are skipped (the codes' mapping is in ErrorsAndRetryTest).
 */
@EnabledIfEnvironmentVariable(named = "KSASL_KDC_INFO", matches = ".+", disabledReason = "KSASL_KDC_INFO is not"
        + " set: run Maven under tests/kerberos/kdc.py --principal other/localhost --principal brief:4s"
        + " --wrong-keytab kafka/localhost --wrong-keytab alice --exec -- mvn ... (make test-java does)")
class GssapiTest {
    static final String REALM = "@KSASL.TEST";
    static final String KAFKA = "kafka/localhost" + REALM;
    static JsonNode kdc;

    @BeforeAll
    static void kdc() throws Exception {
        kdc = new ObjectMapper().readTree(new File(System.getenv("KSASL_KDC_INFO")));
        assertTrue(Ksasl.gssapiAvailable(), "MIT's libgssapi_krb5 loads");
    }

    static String keytab(String name) {
        return kdc.get("keytabs").get(name).asText();
    }

    static String wrongKeytab(String name) {
        return kdc.get("wrong_keytabs").get(name).asText();
    }

    static long now() {
        return System.currentTimeMillis();
    }

    static KerberosLogin login(String name) throws KsaslException {
        KerberosLogin l = KerberosLogin.fromKeytab(name + REALM, keytab(name));
        l.login(now());
        return l;
    }

    static MechanismRegistry kafkaServer(String rules) throws KsaslException {
        return new MechanismRegistry().addGssapiServer(keytab("kafka/localhost"), KAFKA, null, rules, true);
    }

    static MechanismRegistry client(KerberosLogin login, String service, boolean mutual) throws KsaslException {
        return new MechanismRegistry().addGssapiClient(login, service, "localhost", mutual);
    }

    /** The outcome of one exchange, and how many messages crossed. */
    record Result(AuthOutcome outcome, int messages) {}

    static Result exchange(MechanismRegistry clients, MechanismRegistry servers) throws KsaslException {
        long now = now();
        try (ClientExchange c = new ClientExchange(clients, "GSSAPI");
                ServerExchange s = new ServerExchange(servers, "GSSAPI")) {
            ClientStep step = c.start(now);
            int messages = 1;
            while (true) {
                ServerStep r = s.step(step.message() == null ? new byte[0] : step.message(), now);
                messages++;
                if (r.kind() == ServerStep.Kind.DONE) {
                    return new Result(s.outcome(), messages);
                }
                step = c.step(r.message(), now);
                messages++;
            }
        }
    }

    @Test
    void logsInFromAKeytabAndPollsOnItsSchedule() throws Exception {
        long t = now();
        try (KerberosLogin alice = login("alice")) {
            assertEquals(1, alice.logins());
            assertEquals(0, alice.failures());
            long end = alice.ticketEndMs().getAsLong();
            // The realm's 5-minute tickets; the next login at 80-85 % of the life.
            assertTrue(end > t + 290_000 && end <= now() + 300_000, "ticket end " + (end - t));
            long next = alice.nextLoginMs().getAsLong();
            assertTrue(next >= t + 235_000 && next < end, "next login " + (next - t));
            assertFalse(alice.poll(now()));
            assertTrue(alice.poll(next));
            assertEquals(2, alice.logins());
        }
        // The settings are the core's to check.
        KsaslArgumentException bad = assertThrows(KsaslArgumentException.class,
                () -> new KerberosLogin("alice" + REALM, keytab("alice"), null, 1.5, null, null));
        assertEquals("INVALID_CONFIG", bad.codeName());
        bad = assertThrows(KsaslArgumentException.class,
                () -> new KerberosLogin(null, keytab("alice"), null, null, null, null));
        assertEquals("INVALID_CONFIG", bad.codeName());
        // A ticket cache: none was made, since keytab logins never run kinit.
        try (KerberosLogin cache = KerberosLogin.fromTicketCache(null, null)) {
            KsaslException e = assertThrows(KsaslException.class, () -> cache.login(now()));
            assertEquals("KERBEROS_LOGIN_FAILED", e.codeName());
        }
    }

    @Test
    void exchangesWithAndWithoutMutualAuthentication() throws Exception {
        try (KerberosLogin alice = login("alice"); MechanismRegistry servers = kafkaServer(null)) {
            for (boolean mutual : new boolean[] {false, true}) {
                try (MechanismRegistry clients = client(alice, "kafka", mutual)) {
                    Result r = exchange(clients, servers);
                    assertEquals("User:alice", r.outcome().principal());
                    assertEquals("GSSAPI", r.outcome().mechanism());
                    // AP-REQ, offer, choice, success; mutual adds the AP-REP and its empty answer.
                    assertEquals(mutual ? 6 : 4, r.messages(), "mutual=" + mutual);
                    // The session is capped by the service ticket, which ends with the TGT.
                    long cap = r.outcome().credentialExpiryMs().getAsLong();
                    assertTrue(Math.abs(cap - alice.ticketEndMs().getAsLong()) <= 2_000);
                }
            }
        }
    }

    /** As ConnectionTest: Kafka framing, a 3-second session lifetime, five re-authentications. */
    @Test
    void connectionDriversAuthenticateAndReauthenticate() throws Exception {
        try (KerberosLogin alice = login("alice");
                MechanismRegistry clients = client(alice, "kafka", false);
                MechanismRegistry servers = kafkaServer(null);
                ServerConfig sc = ServerConfig.builder(servers).setMaxReauthMs(3000).build();
                ClientConfig cc = ClientConfig.builder(clients, "GSSAPI").setClientId("java-gssapi").build()) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            long now = now();
            p.client.start(now);
            p.pump(now);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            assertEquals("User:alice", p.server.session().principal());
            assertEquals("GSSAPI", p.server.session().mechanism());
            assertEquals(3000, p.client.session().lifetimeMs());
            int corr = 1;
            for (int round = 0; round < 5; round++) {
                assertTrue(p.client.beforeRequest(now));
                p.pump(now, Wire.metadataRequest(corr++));
                now = p.client.nextDeadline().getAsLong();
                assertTrue(p.client.handleTimeout(now));
                p.pump(now);
                assertEquals(ClientEvent.Kind.REAUTHENTICATED, p.events.get(p.events.size() - 1));
                assertNull(p.closed);
            }
            assertEquals(5, p.responses.size());
            assertEquals(5.0, sc.metrics(now).get("successful-reauthentication-total"));
            assertEquals(5.0, cc.metrics(now).get("successful-reauthentication-total"));
            p.client.close();
            p.server.close();
        }
    }

    @Test
    void principalToLocalRulesNameTheKafkaUser() throws Exception {
        try (KerberosLogin alice = login("alice"); MechanismRegistry clients = client(alice, "kafka", false)) {
            Map<String, String> cases = Map.of(
                    "DEFAULT", "User:alice",
                    "RULE:[1:$1@$0](alice@KSASL.TEST)s/.*/kafka-admin/,DEFAULT", "User:kafka-admin",
                    "RULE:[1:$1](.*)s/(.*)/$1/U", "User:ALICE");
            for (Map.Entry<String, String> c : cases.entrySet()) {
                try (MechanismRegistry servers = kafkaServer(c.getKey())) {
                    assertEquals(c.getValue(), exchange(clients, servers).outcome().principal(), c.getKey());
                }
            }
            try (MechanismRegistry servers = kafkaServer("RULE:[2:$1](.*)s/.*/x/")) {
                KsaslException e = assertThrows(KsaslException.class, () -> exchange(clients, servers));
                assertEquals(412, e.code());
                assertEquals("KERBEROS_NAME_UNMAPPED", e.codeName());
                assertInstanceOf(KsaslCredentialException.class, e);
            }
            // A rule Kafka cannot parse is refused when the server is added.
            KsaslArgumentException e = assertThrows(KsaslArgumentException.class, () -> kafkaServer("RULE:nonsense"));
            assertEquals(ErrorKind.MISUSE, e.kind(), e.toString());
        }
    }

    @Test
    void aTicketForAnotherServiceIsRefused() throws Exception {
        try (KerberosLogin alice = login("alice"); MechanismRegistry servers = kafkaServer(null)) {
            // A ticket for other/localhost, which the broker has no key for.
            try (MechanismRegistry clients = client(alice, "other", false)) {
                KsaslException e = assertThrows(KsaslException.class, () -> exchange(clients, servers));
                assertEquals(328, e.code());
                assertEquals("KERBEROS_WRONG_SERVICE", e.codeName());
                assertInstanceOf(KsaslAuthenticationException.class, e);
            }
            // A service the KDC does not know fails on the client.
            try (MechanismRegistry clients = client(alice, "nosuch", false);
                    ClientExchange c = new ClientExchange(clients, "GSSAPI")) {
                KsaslException e = assertThrows(KsaslException.class, () -> c.start(now()));
                assertEquals("KERBEROS_WRONG_SERVICE", e.codeName());
                assertTrue(e.getMessage().contains("not found in Kerberos database"), e.getMessage());
            }
        }
    }

    @Test
    void aWrongKeytabIsRefusedOnEitherSide() throws Exception {
        try (KerberosLogin alice = login("alice");
                MechanismRegistry clients = client(alice, "kafka", false);
                MechanismRegistry stale = new MechanismRegistry()
                        .addGssapiServer(wrongKeytab("kafka/localhost"), KAFKA, null, null, true)) {
            KsaslException e = assertThrows(KsaslException.class, () -> exchange(clients, stale));
            assertEquals(329, e.code());
            assertEquals("KERBEROS_KEY_MISMATCH", e.codeName());
        }
        try (KerberosLogin bad = KerberosLogin.fromKeytab("alice" + REALM, wrongKeytab("alice"))) {
            long t = now();
            KsaslException e = assertThrows(KsaslException.class, () -> bad.login(t));
            assertEquals(414, e.code());
            assertEquals("KERBEROS_LOGIN_FAILED", e.codeName());
            assertInstanceOf(KsaslCredentialException.class, e);
            assertEquals(1, bad.failures());
            assertEquals(0, bad.logins());
            assertTrue(bad.nextLoginMs().getAsLong() >= t + 1_000, "a retry is planned");
            // A client on a login without a ticket fails at its first message with the login's error.
            try (MechanismRegistry clients = client(bad, "kafka", false);
                    ClientExchange c = new ClientExchange(clients, "GSSAPI")) {
                assertEquals("KERBEROS_LOGIN_FAILED",
                        assertThrows(KsaslException.class, () -> c.start(now())).codeName());
            }
        }
        // A missing keytab is reported when the server is added.
        Exception e = assertThrows(Exception.class,
                () -> new MechanismRegistry().addGssapiServer("/nonexistent/kafka.keytab", KAFKA, null, null, true));
        assertInstanceOf(KsaslError.class, e);
        assertEquals("INVALID_CONFIG", ((KsaslError) e).codeName(), e.toString());
        assertTrue(e.getMessage().contains("/nonexistent/kafka.keytab does not exist"), e.getMessage());
    }

    /** The core's renewal thread: {@code brief}'s 4-second ticket is renewed at 80-85 % of its life. */
    @Test
    void theRenewalThreadLogsInAgainOnSchedule() throws Exception {
        try (KerberosLogin brief = login("brief"); MechanismRegistry servers = kafkaServer(null);
                MechanismRegistry clients = client(brief, "kafka", false)) {
            long firstEnd = brief.ticketEndMs().getAsLong();
            KerberosLogin.Renewal renewal = brief.startRenewal();
            try {
                long deadline = now() + 10_000;
                while (brief.logins() < 2 && now() < deadline) {
                    Thread.sleep(100);
                }
            } finally {
                renewal.close();
            }
            long logins = brief.logins();
            Thread.sleep(500);
            assertEquals(logins, brief.logins(), "the thread stopped");
            assertTrue(brief.logins() >= 2, "logins: " + brief.logins());
            assertTrue(brief.ticketEndMs().getAsLong() > firstEnd);
            assertEquals("User:brief", exchange(clients, servers).outcome().principal());
        }
    }

    /** KIP-43's pre-0.10 clients: a raw GSSAPI token as the first packet, only when enabled. */
    @Test
    void legacyGssapiClientsOnlyWhenEnabled() throws Exception {
        try (KerberosLogin alice = login("alice");
                MechanismRegistry clients = client(alice, "kafka", false);
                MechanismRegistry servers = kafkaServer(null);
                ServerConfig legacy = ServerConfig.builder(servers).setLegacyGssapi(true).build();
                ServerConfig modern = ServerConfig.builder(servers).build()) {
            long now = now();
            try (ClientExchange c = new ClientExchange(clients, "GSSAPI");
                    ServerConnection s = new ServerConnection(legacy)) {
                byte[] token = c.start(now).message();
                boolean done = false;
                for (int i = 0; i < 4 && !done; i++) {
                    ServerOutput o = s.handleFrame(token, now);
                    if (o.action() == ServerAction.AUTHENTICATED) {
                        assertEquals(0, o.frames().length, "raw framing: nothing after the last step");
                        done = true;
                        break;
                    }
                    assertEquals(ServerAction.CONTINUE, o.action(), o.toString());
                    ByteBuffer b = ByteBuffer.wrap(o.frames());
                    byte[] challenge = new byte[b.getInt()];
                    b.get(challenge);
                    assertFalse(b.hasRemaining(), "one raw frame");
                    token = c.step(challenge, now).message();
                }
                assertTrue(done);
                assertEquals("User:alice", s.session().principal());
            }
            try (ClientExchange c = new ClientExchange(clients, "GSSAPI");
                    ServerConnection s = new ServerConnection(modern)) {
                ServerOutput o = s.handleFrame(c.start(now).message(), now);
                assertFalse(o.action() == ServerAction.CONTINUE || o.action() == ServerAction.AUTHENTICATED,
                        o.toString());
            }
        }
    }
}
