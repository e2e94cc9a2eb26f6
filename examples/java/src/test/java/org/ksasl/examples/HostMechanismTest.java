package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.ksasl.SaslMechanisms;

/**
 * A mechanism ksasl does not ship, with a real peer on the other side: the server offers the
 * JDK's own CRAM-MD5 {@link SaslServer}, wrapped as a ksasl host mechanism, next to the
 * built-ins; Kafka's Java client (kafka-clients 4.4), configured with
 * {@code sasl.mechanism=CRAM-MD5}, makes the JDK's CRAM-MD5 {@code SaslClient} from its JAAS
 * credentials. The client negotiates it through ksasl's server driver, lists topics for 7.5 s
 * and re-authenticates (with CRAM-MD5 again) before every 3-second session ends; a wrong
 * password is refused with Kafka's text.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostMechanismTest {
    static final String MECHANISM = "CRAM-MD5";
    static final long LIFETIME_MS = 3000;
    static final long RUN_MS = 7500;
    static final Map<String, String> PASSWORDS = Map.of("alice", "alice-secret");

    /** The JDK CRAM-MD5 server's callbacks: the user's password, and authorization as itself. */
    static SaslServer cramMd5Server() {
        try {
            return Sasl.createSaslServer(MECHANISM, "kafka", "localhost", Map.of(), callbacks -> {
                String name = null;
                for (Callback c : callbacks) {
                    if (c instanceof NameCallback n) {
                        name = n.getName() != null ? n.getName() : n.getDefaultName();
                    } else if (c instanceof PasswordCallback p) {
                        String password = PASSWORDS.get(name);
                        if (password != null) {
                            p.setPassword(password.toCharArray());
                        }
                    } else if (c instanceof AuthorizeCallback a) {
                        a.setAuthorized(a.getAuthenticationID().equals(a.getAuthorizationID()));
                    } else {
                        throw new UnsupportedCallbackException(c);
                    }
                }
            });
        } catch (SaslException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Kafka's PLAIN login module only puts the name and password in the JAAS subject. */
    static String jaas(String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\""
                + password + "\";";
    }

    static KsaslKafkaServer server() throws Exception {
        return KsaslKafkaServer.builder()
                .maxReauthMs(LIFETIME_MS)
                .topic("orders", 1)
                .mechanism(MECHANISM, SaslMechanisms.server(HostMechanismTest::cramMd5Server))
                .build();
    }

    @Test
    void kafkasJavaClientAuthenticatesAndReauthenticatesWithTheJdksCramMd5() throws Exception {
        try (KsaslKafkaServer server = server()) {
            server.start();
            List<String> failures = new ArrayList<>();
            int calls = 0;
            long start = System.currentTimeMillis();
            try (Admin admin = Admin.create(Clients.admin(server, "admin-cram", MECHANISM, jaas("alice-secret")))) {
                for (long next = start; next < start + RUN_MS; next += 250) {
                    long wait = next - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    try {
                        Set<String> names = admin.listTopics().names().get(10, TimeUnit.SECONDS);
                        if (!names.contains("orders")) {
                            failures.add("listTopics returned " + names);
                        }
                    } catch (Exception e) {
                        failures.add(String.valueOf(e));
                    }
                    calls++;
                }
            }
            assertEquals(List.of(), failures);
            assertTrue(calls >= 25, calls + " calls");
            List<ConnectionStats> cram = server.connections().stream()
                    .filter(c -> MECHANISM.equals(c.mechanism()))
                    .collect(Collectors.toList());
            assertFalse(cram.isEmpty(), String.valueOf(server.connections()));
            int reauthentications = 0;
            for (ConnectionStats c : cram) {
                assertEquals("User:alice", c.principal(), c.toString());
                assertFalse(c.closedForExpiry(), c.toString());
                assertEquals(0, c.failedAuthentications() + c.failedReauthentications(), c.toString());
                for (ConnectionStats.Authentication a : c.authentications()) {
                    assertEquals(LIFETIME_MS, a.lifetimeMs(), a.toString());
                }
                reauthentications += c.reauthentications();
            }
            // The connection that carried the requests re-authenticated before each session
            // ended (7.5 s of 3-second sessions).
            int most = cram.stream().mapToInt(ConnectionStats::reauthentications).max().orElse(0);
            assertTrue(most >= 2, "re-authentications: " + cram);
            Map<String, Double> metrics = server.metrics();
            assertEquals(reauthentications, metrics.get("successful-reauthentication-total"), 0.0);
            assertEquals(0.0, metrics.get("expired-connections-killed-count"));
        }
    }

    @Test
    void aWrongPasswordIsRefusedWithKafkasText() throws Exception {
        try (KsaslKafkaServer server = server()) {
            server.start();
            try (Admin admin = Admin.create(Clients.admin(server, "admin-cram-bad", MECHANISM, jaas("wrong")))) {
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> admin.listTopics().names().get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof SaslAuthenticationException, String.valueOf(e.getCause()));
                assertTrue(e.getCause().getMessage().contains(
                        "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                                + MECHANISM), e.getCause().getMessage());
            }
            assertEquals(1.0, server.metrics().get("failed-authentication-total"), 0.0);
        }
    }
}
