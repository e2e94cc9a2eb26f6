package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnacceptableCredentialException;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.scram.ScramExtensionsCallback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * KIP-554 with Kafka's own Admin client against the example server, whose credential store
 * serves DescribeUserScramCredentials and AlterUserScramCredentials
 * ({@link org.ksasl.CredentialStore#handleScramRequest}): users are added, described, refused
 * and deleted, and a password rotated while clients run takes effect at their next
 * re-authentication (KIP-368).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public class ScramAdminTest {
    static final String ROOT_JAAS = Clients.jaas("PLAIN", "root", "root-secret");

    /**
     * A client callback handler answering with "alice" and the current value of
     * {@link #password}, read at every (re-)authentication: how an application whose password
     * is rotated hands the new one to Kafka's client without restarting it.
     */
    public static class RotatingPassword implements AuthenticateCallbackHandler {
        static volatile String password = "old-secret";

        @Override
        public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaas) {}

        @Override
        public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
            for (Callback c : callbacks) {
                if (c instanceof NameCallback n) {
                    n.setName("alice");
                } else if (c instanceof PasswordCallback p) {
                    p.setPassword(password.toCharArray());
                } else if (!(c instanceof ScramExtensionsCallback)) { // no extensions
                    throw new UnsupportedCallbackException(c);
                }
            }
        }

        @Override
        public void close() {}
    }

    @Test
    void adminAddsDescribesRefusesAndDeletesScramUsers() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().maxReauthMs(60_000)
                .user("root", "root-secret").topic("carol-topic", 1).build()) {
            server.start();
            try (Admin admin = Admin.create(Clients.admin(server, "root-admin", "PLAIN", ROOT_JAAS))) {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "carol-secret")))
                        .all().get(10, TimeUnit.SECONDS);
                UserScramCredentialsDescription d = admin.describeUserScramCredentials(List.of("carol"))
                        .description("carol").get(10, TimeUnit.SECONDS);
                assertEquals("carol", d.name());
                assertEquals(1, d.credentialInfos().size(), d.toString());
                ScramCredentialInfo info = d.credentialInfos().get(0);
                assertEquals(ScramMechanism.SCRAM_SHA_512, info.mechanism());
                assertEquals(8192, info.iterations());

                // Carol logs in with the credential the Admin set, and her records are acknowledged.
                try (KafkaProducer<String, String> p = new KafkaProducer<>(Clients.producer(server, "carol-producer",
                        "SCRAM-SHA-512", Clients.jaas("SCRAM-SHA-512", "carol", "carol-secret")))) {
                    for (int i = 0; i < 3; i++) {
                        p.send(new ProducerRecord<>("carol-topic", "k" + i, "v" + i)).get(10, TimeUnit.SECONDS);
                    }
                }
                assertTrue(server.records("carol-topic") >= 3, "records " + server.records("carol-topic"));

                ExecutionException unknown = assertThrows(ExecutionException.class, () -> admin
                        .describeUserScramCredentials(List.of("nobody")).description("nobody").get(10, TimeUnit.SECONDS));
                assertInstanceOf(ResourceNotFoundException.class, unknown.getCause());
                assertTrue(unknown.getCause().getMessage().contains("nobody"), unknown.getCause().getMessage());

                ExecutionException weak = assertThrows(ExecutionException.class, () -> admin
                        .alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("dave",
                                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), "dave-secret")))
                        .all().get(10, TimeUnit.SECONDS));
                assertInstanceOf(UnacceptableCredentialException.class, weak.getCause());

                admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("carol",
                        ScramMechanism.SCRAM_SHA_512))).all().get(10, TimeUnit.SECONDS);
            }
            // Carol's credential is gone: a new login fails.
            assertLoginFails(server, "carol-after-delete", "SCRAM-SHA-512", "carol", "carol-secret");
        }
    }

    @Test
    void aServerConfiguredFromServerPropertiesServesThemToo() throws Exception {
        String properties = String.join("\n",
                "listeners=EXTERNAL://127.0.0.1:9093",
                "listener.security.protocol.map=EXTERNAL:SASL_PLAINTEXT",
                "sasl.enabled.mechanisms=SCRAM-SHA-256",
                "listener.name.external.scram-sha-256.sasl.jaas.config="
                        + "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "");
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().config(properties, null)
                .user("alice", "alice-secret").build()) {
            server.start();
            try (Admin admin = Admin.create(Clients.admin(server, "alice-admin", "SCRAM-SHA-256",
                    Clients.jaas("SCRAM-SHA-256", "alice", "alice-secret")))) {
                UserScramCredentialsDescription d = admin.describeUserScramCredentials(List.of("alice"))
                        .description("alice").get(10, TimeUnit.SECONDS);
                // The store's user has both SCRAM credentials, at 4096 iterations.
                assertEquals(2, d.credentialInfos().size(), d.toString());
                assertTrue(d.credentialInfos().stream().allMatch(i -> i.iterations() == 4096), d.toString());
            }
        }
    }

    static final long LIFETIME_MS = 3000;
    static final long PERIOD_MS = 100;
    static final long ROTATE_AFTER_MS = 2000;
    /** After the rotation, at least two more session lifetimes. */
    static final long RUN_AFTER_ROTATION_MS = 2 * LIFETIME_MS + 500;

    /** What one producer did. */
    record Run(String clientId, int sent, List<String> failures) {}

    @Test
    void aRotatedPasswordTakesEffectAtTheNextReauthentication() throws Exception {
        RotatingPassword.password = "old-secret";
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().maxReauthMs(LIFETIME_MS)
                .user("root", "root-secret").user("alice", "old-secret")
                .topic("a-topic", 1).topic("b-topic", 1).build()) {
            server.start();
            Properties a = Clients.producer(server, "producer-a", "SCRAM-SHA-256",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;");
            a.put(SaslConfigs.SASL_CLIENT_CALLBACK_HANDLER_CLASS, RotatingPassword.class);
            Properties b = Clients.producer(server, "producer-b", "SCRAM-SHA-256",
                    Clients.jaas("SCRAM-SHA-256", "alice", "old-secret"));
            b.put("max.block.ms", 1000);
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(2);
            long rotatedMs;
            Run runA;
            Run runB;
            try (Admin admin = Admin.create(Clients.admin(server, "root-admin", "PLAIN", ROOT_JAAS))) {
                admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS); // connected before the run
                long start = System.currentTimeMillis();
                Future<Run> fa = pool.submit(() -> produce(a, "a-topic", stop, true));
                Future<Run> fb = pool.submit(() -> produce(b, "b-topic", stop, false));
                try {
                    Thread.sleep(Math.max(0, start + ROTATE_AFTER_MS - System.currentTimeMillis()));
                    admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("alice",
                            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "new-secret")))
                            .all().get(10, TimeUnit.SECONDS);
                    RotatingPassword.password = "new-secret";
                    rotatedMs = System.currentTimeMillis();
                    Thread.sleep(RUN_AFTER_ROTATION_MS);
                } finally {
                    stop.set(true);
                }
                runA = fa.get(30, TimeUnit.SECONDS);
                runB = fb.get(30, TimeUnit.SECONDS);
            } finally {
                pool.shutdownNow();
            }
            String summary = summary(server, rotatedMs, runA, runB);

            // Producer A followed the rotation: nothing lost, and re-authenticated with the new
            // password after it.
            assertEquals(List.of(), runA.failures(), "every record of producer A is acknowledged\n" + summary);
            assertTrue(runA.sent() >= 40, "producer A sent " + runA.sent() + "\n" + summary);
            assertTrue(server.records("a-topic") >= runA.sent(), summary);
            List<ConnectionStats> aConns = byClient(server, "producer-a");
            assertFalse(aConns.isEmpty(), summary);
            assertTrue(aConns.stream().flatMap(c -> c.authentications().stream())
                    .anyMatch(x -> x.reauthentication() && x.atMs() > rotatedMs),
                    "producer A re-authenticated after the rotation\n" + summary);
            for (ConnectionStats c : aConns) {
                assertFalse(c.closedForExpiry(), c + "\n" + summary);
                assertEquals("User:alice", c.principal(), summary);
            }

            // Producer B kept the old password: its re-authentication after the rotation failed
            // and the server closed its connection.
            List<ConnectionStats> bConns = byClient(server, "producer-b");
            assertTrue(bConns.stream().anyMatch(c -> c.failedReauthentications() > 0
                    && c.closeReason() == ConnectionStats.CloseReason.AUTHENTICATION_FAILED
                    && c.closedMs() >= rotatedMs), "producer B failed to re-authenticate after the rotation\n" + summary);
            assertTrue(server.metrics().get("failed-reauthentication-total") >= 1, summary);

            // New logins: the old password fails, the new one works.
            assertLoginFails(server, "alice-old", "SCRAM-SHA-256", "alice", "old-secret");
            try (Admin fresh = Admin.create(Clients.admin(server, "alice-new", "SCRAM-SHA-256",
                    Clients.jaas("SCRAM-SHA-256", "alice", "new-secret")))) {
                assertTrue(fresh.listTopics().names().get(10, TimeUnit.SECONDS).contains("a-topic"));
            }
        } finally {
            RotatingPassword.password = "old-secret";
        }
    }

    /**
     * A producer sending a record every {@link #PERIOD_MS} until {@code stop}; with
     * {@code await} it waits for each acknowledgement and records failures, otherwise failures
     * (expected after the rotation) are ignored.
     */
    private static Run produce(Properties props, String topic, AtomicBoolean stop, boolean await) throws Exception {
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        int sent = 0;
        String clientId = String.valueOf(props.get("client.id"));
        KafkaProducer<String, String> p = new KafkaProducer<>(props);
        try {
            long next = System.currentTimeMillis();
            while (!stop.get()) {
                ProducerRecord<String, String> r = new ProducerRecord<>(topic, "k" + sent, "v" + sent);
                try {
                    if (await) {
                        p.send(r).get(10, TimeUnit.SECONDS);
                    } else {
                        p.send(r);
                    }
                } catch (Exception e) {
                    if (await) {
                        failures.add(sent + ": " + e);
                    }
                }
                sent++;
                next += PERIOD_MS;
                long wait = next - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
            }
        } finally {
            p.close(await ? Duration.ofSeconds(10) : Duration.ZERO);
        }
        return new Run(clientId, sent, failures);
    }

    /** A new login (an Admin's first call) fails authentication. */
    private static void assertLoginFails(KsaslKafkaServer server, String clientId, String mechanism, String user,
            String password) {
        try (Admin admin = Admin.create(Clients.admin(server, clientId, mechanism,
                Clients.jaas(mechanism, user, password)))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS));
            assertInstanceOf(SaslAuthenticationException.class, e.getCause());
        }
    }

    private static List<ConnectionStats> byClient(KsaslKafkaServer server, String clientId) {
        return server.connections().stream().filter(c -> clientId.equals(c.clientId())).collect(Collectors.toList());
    }

    /** The runs and every connection, times relative to the rotation: for failure messages. */
    private static String summary(KsaslKafkaServer server, long rotatedMs, Run... runs) {
        StringBuilder b = new StringBuilder();
        for (Run r : runs) {
            b.append(r).append('\n');
        }
        for (ConnectionStats c : server.connections()) {
            b.append(c).append("\n  authenticated at");
            for (ConnectionStats.Authentication a : c.authentications()) {
                b.append(' ').append(a.atMs() - rotatedMs).append(a.reauthentication() ? "(re)" : "");
            }
            b.append(", closed at ").append(c.closedMs() < 0 ? "-" : String.valueOf(c.closedMs() - rotatedMs))
                    .append('\n');
        }
        return b.append(server.metrics()).toString();
    }
}
