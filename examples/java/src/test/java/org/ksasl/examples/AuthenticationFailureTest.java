package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Refusals, as Kafka's Java client sees them. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AuthenticationFailureTest {
    static final String PRINCIPAL_CHANGE =
            "Cannot change principals during re-authentication from User.alice: User.mallory";

    /**
     * Answers the PLAIN client's name and password questions with the current user of
     * {@link #USER}. The test starts as alice and, once the Admin has connected, switches to
     * mallory, so that the next re-authentication presents another (valid) user. The switch is
     * explicit because an Admin opens two connections (the bootstrap one, then one to the
     * broker it learns from Metadata), and both must first log in as alice.
     */
    public static final class SwitchingPlainCallbackHandler implements AuthenticateCallbackHandler {
        static final AtomicReference<String> USER = new AtomicReference<>("alice");
        static final Map<String, String> PASSWORDS = Map.of("alice", "alice-secret", "mallory", "mallory-secret");

        @Override
        public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaas) {}

        @Override
        public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
            String user = USER.get();
            for (Callback c : callbacks) {
                if (c instanceof NameCallback) {
                    ((NameCallback) c).setName(user);
                } else if (c instanceof PasswordCallback) {
                    ((PasswordCallback) c).setPassword(PASSWORDS.get(user).toCharArray());
                } else {
                    throw new UnsupportedCallbackException(c);
                }
            }
        }

        @Override
        public void close() {}
    }

    @Test
    void aPrincipalChangeOnReauthenticationIsRefusedWithKafkasMessage() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder()
                .maxReauthMs(3000)
                .user("alice", "alice-secret")
                .user("mallory", "mallory-secret")
                .topic("orders", 1)
                .build()) {
            server.start();
            SwitchingPlainCallbackHandler.USER.set("alice");
            Properties p = Clients.admin(server, "switching-admin", "PLAIN",
                    "org.apache.kafka.common.security.plain.PlainLoginModule required;");
            p.put(SaslConfigs.SASL_CLIENT_CALLBACK_HANDLER_CLASS, SwitchingPlainCallbackHandler.class.getName());
            try (Admin admin = Admin.create(p)) {
                assertEquals(Set.of("orders"), admin.listTopics().names().get(10, TimeUnit.SECONDS));
                SwitchingPlainCallbackHandler.USER.set("mallory");
                // Keep working until the client re-authenticates (at 85-95 % of 3 s).
                ExecutionException failure = null;
                long deadline = System.currentTimeMillis() + 10_000;
                while (failure == null && System.currentTimeMillis() < deadline) {
                    try {
                        admin.listTopics().names().get(10, TimeUnit.SECONDS);
                        Thread.sleep(200);
                    } catch (ExecutionException e) {
                        failure = e;
                    }
                }
                assertNotNull(failure, "the re-authentication as mallory must fail");
                SaslAuthenticationException e = assertInstanceOf(SaslAuthenticationException.class, failure.getCause());
                assertTrue(e.getMessage().contains(PRINCIPAL_CHANGE), e.getMessage());
            } finally {
                SwitchingPlainCallbackHandler.USER.set("alice");
            }
            Map<String, Double> metrics = server.metrics();
            assertTrue(metrics.get("failed-reauthentication-total") >= 1, metrics.toString());
            assertEquals(0.0, metrics.get("expired-connections-killed-count"), metrics.toString());
            List<ConnectionStats> refused = server.connections().stream()
                    .filter(c -> c.failedReauthentications() > 0)
                    .collect(Collectors.toList());
            assertEquals(1, refused.size(), server.connections().toString());
            ConnectionStats c = refused.get(0);
            assertEquals("User:alice", c.principal()); // the session that was refused a change
            assertEquals(ConnectionStats.CloseReason.AUTHENTICATION_FAILED, c.closeReason());
            assertTrue(c.lastFailure().contains(PRINCIPAL_CHANGE), c.lastFailure());
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "PLAIN         | Authentication failed: Invalid username or password",
        "SCRAM-SHA-256 | Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256",
        "SCRAM-SHA-512 | Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    })
    void aWrongPasswordIsRefusedWithTheBrokersText(String mechanism, String message) throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().user("alice", "alice-secret").build()) {
            server.start();
            Properties p = Clients.admin(server, "wrong-password", mechanism,
                    Clients.jaas(mechanism, "alice", "not-the-password"));
            long start = System.currentTimeMillis();
            try (Admin admin = Admin.create(p)) {
                ExecutionException failure = assertThrows(ExecutionException.class,
                        () -> admin.listTopics().names().get(10, TimeUnit.SECONDS));
                SaslAuthenticationException e = assertInstanceOf(SaslAuthenticationException.class, failure.getCause());
                assertEquals(message, e.getMessage());
            }
            // KIP-306: the refusal waited connection.failed.authentication.delay.ms (100).
            assertTrue(System.currentTimeMillis() - start >= 100);
            Map<String, Double> metrics = server.metrics();
            assertTrue(metrics.get("failed-authentication-total") >= 1, metrics.toString());
            assertEquals(0.0, metrics.get("successful-authentication-total"), metrics.toString());
            // The admin client may have opened a second connection, whose refusal the server
            // is still delaying (KIP-306) when the admin gives up: wait for every one to end.
            LifecycleTest.waitFor(() -> server.connections().stream().noneMatch(ConnectionStats::isOpen));
            for (ConnectionStats c : server.connections()) {
                assertEquals(ConnectionStats.CloseReason.AUTHENTICATION_FAILED, c.closeReason(), c.toString());
                assertEquals(0, c.authentications().size(), c.toString());
            }
        }
    }
}
