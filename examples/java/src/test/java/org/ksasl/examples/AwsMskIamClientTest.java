package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.ksasl.AwsCredentials;
import org.ksasl.AwsKeyStore;

/**
 * AWS_MSK_IAM with Amazon's own client: Kafka's Java client with {@code aws-msk-iam-auth}
 * ({@code IAMLoginModule} and {@code IAMClientCallbackHandler}, exactly as MSK users configure
 * them) against the example server, whose AWS_MSK_IAM is verified by ksasl
 * ({@link KsaslKafkaServer.Builder#awsMskIam}: the AWS signature (SigV4) under a key of an
 * {@link AwsKeyStore}, for the region and the broker host name). It proves that ksasl accepts
 * what Amazon's signer produces, and that KIP-368 re-authentication keeps working across a key
 * rotation done while the client runs: the new key is added to the store, the client's
 * credentials switch (the AWS SDK reads them again at every authentication), and the old key is
 * removed once the client has re-authenticated with the new one. It also proves the refusals
 * look as MSK's do: {@code [<request id>]: Access denied}, nothing more.
 *
 * <p>The AWS SDK takes its credentials from {@code aws.accessKeyId},
 * {@code aws.secretAccessKey} and {@code aws.sessionToken} (system properties) and its region
 * from {@code aws.region} (the broker's host name, {@code localhost}, names none); the other
 * sources of its chains (profile files, EC2 instance metadata) are pointed at nothing. With
 * {@code AWS_ACCESS_KEY_ID} in the environment (which the SDK reads first) the tests are skipped.
 * No AWS service is contacted: the keys are made up, and the server knows them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AwsMskIamClientTest {
    static final long LIFETIME_MS = 3000;
    static final long PERIOD_MS = 200;
    /** How long the rotation run may take at most (it needs about 5 session lifetimes). */
    static final long RUN_DEADLINE_MS = 35_000;
    static final String REGION = "us-east-1";
    /**
     * The host name Amazon's client signs for, and the one the server is given: Kafka's client
     * names the broker to its SASL client by the connection's address
     * ({@code InetAddress.getHostName()}), which for a literal IP is a reverse lookup (a client
     * bootstrapping from 127.0.0.1 signs for {@code localhost} here, per /etc/hosts). The server
     * advertises {@code localhost} (it still listens on 127.0.0.1 only), so the client resolves
     * that name and signs for it, whatever the reverse lookup says.
     */
    static final String SIGNED_HOST = "localhost";
    static final String TOPIC = "orders";
    static final String MECHANISM = "AWS_MSK_IAM";
    static final String IAM_JAAS = "software.amazon.msk.auth.iam.IAMLoginModule required;";
    static final String IAM_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler";

    /** Long-term key (an IAM user's access key). */
    static final String OLD_ID = "AKIAOLDKEY1";
    static final String OLD_SECRET = "old-secret/+=1";
    /** Temporary credentials (an STS session's): presented with their session token. */
    static final String NEW_ID = "ASIANEWKEY2";
    static final String NEW_SECRET = "new-secret/+=2";
    static final String NEW_TOKEN = "session-token-of-the-new-key/+==";
    /** Both keys authenticate alice: Kafka forbids a principal change on re-authentication. */
    static final String PRINCIPAL = "alice";

    /** MSK's refusal: the request id (a UUID), and no reason. */
    static final Pattern MSK_REFUSAL = Pattern.compile("\\[[0-9a-f-]{36}\\]: Access denied");

    /** The AWS SDK's system properties these tests set (and restore). */
    static final List<String> AWS_PROPERTIES = List.of("aws.accessKeyId", "aws.secretAccessKey",
            "aws.sessionToken", "aws.region", "aws.sharedCredentialsFile", "aws.configFile",
            "aws.disableEc2Metadata");

    @TempDir
    Path tmp;
    private final SavedProperties savedProperties = new SavedProperties();

    @BeforeEach
    void isolateTheAwsSdk() {
        assumeTrue(System.getenv("AWS_ACCESS_KEY_ID") == null,
                "AWS_ACCESS_KEY_ID is set: the AWS SDK would sign with it rather than the test's keys");
        savedProperties.save(AWS_PROPERTIES);
        System.setProperty("aws.region", REGION);
        // No profile files (they do not exist), no instance metadata.
        System.setProperty("aws.sharedCredentialsFile", tmp.resolve("no-credentials").toString());
        System.setProperty("aws.configFile", tmp.resolve("no-config").toString());
        System.setProperty("aws.disableEc2Metadata", "true");
    }

    @AfterEach
    void restoreProperties() {
        savedProperties.restore();
    }

    /** The credentials the AWS SDK's chain finds from now on (at the next authentication). */
    private static void signWith(String accessKeyId, String secret, String sessionToken) {
        System.setProperty("aws.accessKeyId", accessKeyId);
        System.setProperty("aws.secretAccessKey", secret);
        if (sessionToken == null) {
            System.clearProperty("aws.sessionToken");
        } else {
            System.setProperty("aws.sessionToken", sessionToken);
        }
    }

    /** A store with the old (long-term) key as alice's. */
    private static AwsKeyStore oldKeyStore() {
        AwsKeyStore keys = new AwsKeyStore();
        try (AwsCredentials old = new AwsCredentials(OLD_ID, OLD_SECRET)) {
            keys.add(old, PRINCIPAL); // the store keeps its own copy
        }
        return keys;
    }

    private static KsaslKafkaServer server(AwsKeyStore keys, List<String> hosts) throws Exception {
        return KsaslKafkaServer.builder()
                .advertisedHost(SIGNED_HOST)
                .maxReauthMs(LIFETIME_MS)
                .awsMskIam(keys, REGION, hosts)
                .topic(TOPIC, 1)
                .build();
    }

    /** Amazon's login module and callback handler, as MSK's documentation configures them. */
    private static Properties iam(Properties p) {
        p.put(SaslConfigs.SASL_CLIENT_CALLBACK_HANDLER_CLASS, IAM_HANDLER);
        return p;
    }

    @Test
    void rotatesKeysAndReauthenticates() throws Exception {
        try (AwsKeyStore keys = oldKeyStore(); KsaslKafkaServer server = server(keys, List.of(SIGNED_HOST))) {
            server.start();
            signWith(OLD_ID, OLD_SECRET, null);
            long newExpiry = System.currentTimeMillis() + 3_600_000;
            List<String> failures = new ArrayList<>();
            int sent = 0;
            // 0: the old key only; 1: both keys, the client switched to the new one; 2: the old
            // key removed; 3: done.
            int phase = 0;
            int mark = 0;
            long switchedAt = -1;
            double clientReauths;
            double clientFailedReauths;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(iam(Clients.producer(server,
                    "producer-msk-iam", MECHANISM, IAM_JAAS)))) {
                long deadline = System.currentTimeMillis() + RUN_DEADLINE_MS;
                for (long next = System.currentTimeMillis(); phase < 3; next += PERIOD_MS) {
                    assertTrue(System.currentTimeMillis() < deadline, "still in phase " + phase + " after "
                            + RUN_DEADLINE_MS + " ms; failures " + failures + "\n" + summary(server));
                    sleepUntil(next);
                    try {
                        producer.send(new ProducerRecord<>(TOPIC, "k" + sent, "v" + sent)).get(10, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        failures.add(String.valueOf(e.getCause()));
                    }
                    sent++;
                    int reauths = reauthentications(server);
                    if (phase == 0 && reauths >= 2) {
                        // A re-authentication has just completed (before the record above was
                        // sent), so the next one is at least 2.5 s away: the client never reads
                        // half-switched properties.
                        try (AwsCredentials fresh = new AwsCredentials(NEW_ID, NEW_SECRET, NEW_TOKEN,
                                OptionalLong.of(newExpiry))) {
                            keys.add(fresh, PRINCIPAL);
                        }
                        signWith(NEW_ID, NEW_SECRET, NEW_TOKEN);
                        switchedAt = System.currentTimeMillis();
                        mark = reauths;
                        phase = 1;
                    } else if (phase == 1 && reauths > mark) {
                        assertTrue(keys.remove(OLD_ID), "the old key was in the store");
                        mark = reauths;
                        phase = 2;
                    } else if (phase == 2 && reauths >= mark + 2) {
                        phase = 3;
                    }
                }
                clientReauths = clientMetric(producer.metrics(), "successful-reauthentication-total");
                clientFailedReauths = clientMetric(producer.metrics(), "failed-reauthentication-total");
            }
            String summary = summary(server);
            assertEquals(List.of(), failures, summary);
            assertEquals(sent, server.records(TOPIC), "every record was acknowledged\n" + summary);
            assertEquals(0.0, clientFailedReauths, summary);

            int reauths = 0;
            int withOld = 0;
            int withNew = 0;
            for (ConnectionStats c : server.connections()) {
                assertEquals(MECHANISM, c.mechanism(), summary);
                assertEquals("User:" + PRINCIPAL, c.principal(), summary);
                assertFalse(c.closedForExpiry(), summary);
                assertEquals(0, c.failedAuthentications() + c.failedReauthentications(), summary);
                for (ConnectionStats.Authentication a : c.authentications()) {
                    assertEquals("User:" + PRINCIPAL, a.principal(), summary);
                    assertTrue(a.lifetimeMs() > 0 && a.lifetimeMs() <= LIFETIME_MS, a + "\n" + summary);
                    // Which key signed: the server reports the new key's expiry as the
                    // credential's; the old key has none.
                    if (a.atMs() < switchedAt) {
                        assertEquals(OptionalLong.empty(), a.credentialExpiryMs(), a + "\n" + summary);
                        withOld++;
                    } else {
                        assertEquals(OptionalLong.of(newExpiry), a.credentialExpiryMs(), a + "\n" + summary);
                        withNew++;
                    }
                }
                reauths += c.reauthentications();
            }
            assertTrue(reauths >= 4, "at least 4 re-authentications\n" + summary);
            assertTrue(withOld >= 3, "the first authentication and 2 re-authentications with the old key\n" + summary);
            assertTrue(withNew >= 3, "3 re-authentications with the new key, 2 after the old one was removed\n"
                    + summary);
            Map<String, Double> metrics = server.metrics();
            assertEquals(0.0, metrics.get("expired-connections-killed-count"), summary);
            assertEquals(0.0, metrics.get("failed-authentication-total"), summary);
            assertEquals(0.0, metrics.get("failed-reauthentication-total"), summary);
            assertEquals(reauths, metrics.get("successful-reauthentication-total"), 0.0, summary);
            assertEquals(clientReauths, reauths, 0.0, "both sides count the same\n" + summary);

            // The removal took effect in the running server: the old key no longer logs in.
            signWith(OLD_ID, OLD_SECRET, null);
            refusal(server, "admin-removed-key");
            List<ConnectionStats> refused = server.connections().stream()
                    .filter(c -> c.failedAuthentications() > 0).collect(Collectors.toList());
            assertFalse(refused.isEmpty(), summary(server));
            for (ConnectionStats c : refused) {
                assertTrue(c.lastFailure().contains("the access key is unknown"), summary(server));
            }
        }
    }

    @Test
    void wrongSecretIsRefusedAsMskWordsIt() throws Exception {
        String wrongSecret = "wrong-secret/+=9";
        try (AwsKeyStore keys = oldKeyStore(); KsaslKafkaServer server = server(keys, List.of(SIGNED_HOST))) {
            server.start();
            signWith(OLD_ID, wrongSecret, null);
            String message = refusal(server, "admin-wrong-secret");
            assertFalse(message.contains(wrongSecret) || message.contains(OLD_SECRET), message);
            // The server's own reason (never sent): the signature, not anything else.
            assertRefusedOnly(server, wrongSecret, "the signature does not verify");
        }
    }

    /** A signature for another broker (the client signs for localhost) is refused the same way. */
    @Test
    void wrongHostIsRefused() throws Exception {
        try (AwsKeyStore keys = oldKeyStore();
                KsaslKafkaServer server = server(keys, List.of("b-1.demo.kafka.us-east-1.amazonaws.com"))) {
            server.start();
            signWith(OLD_ID, OLD_SECRET, null);
            refusal(server, "admin-wrong-host");
            assertRefusedOnly(server, OLD_SECRET, "signed for another host");
        }
    }

    /**
     * An Admin's first call fails with Kafka's {@link SaslAuthenticationException} carrying the
     * server's text, which is MSK's; returns that text.
     */
    private static String refusal(KsaslKafkaServer server, String clientId) throws Exception {
        try (Admin admin = Admin.create(iam(Clients.admin(server, clientId, MECHANISM, IAM_JAAS)))) {
            ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> admin.listTopics().names().get(10, TimeUnit.SECONDS));
            SaslAuthenticationException e = assertInstanceOf(SaslAuthenticationException.class, failure.getCause(),
                    String.valueOf(failure.getCause()));
            assertNotNull(e.getMessage());
            assertTrue(MSK_REFUSAL.matcher(e.getMessage()).matches(), e.getMessage());
            return e.getMessage();
        }
    }

    /**
     * The server authenticated no one and counted the refusals; every connection was closed for
     * it, and the server's own reason says {@code reason} and does not hold {@code secret} either.
     */
    private static void assertRefusedOnly(KsaslKafkaServer server, String secret, String reason) throws Exception {
        Map<String, Double> metrics = server.metrics();
        assertTrue(metrics.get("failed-authentication-total") >= 1, metrics.toString());
        assertEquals(0.0, metrics.get("successful-authentication-total"), metrics.toString());
        // A second connection's refusal may still be waiting for its KIP-306 delay.
        LifecycleTest.waitFor(() -> server.connections().stream().noneMatch(ConnectionStats::isOpen));
        String summary = summary(server);
        assertFalse(server.connections().isEmpty(), summary);
        for (ConnectionStats c : server.connections()) {
            assertEquals(ConnectionStats.CloseReason.AUTHENTICATION_FAILED, c.closeReason(), summary);
            assertTrue(c.authentications().isEmpty(), summary);
            assertEquals(1, c.failedAuthentications(), summary);
            assertTrue(c.lastFailure().contains(reason), summary);
            assertFalse(c.lastFailure().contains(secret), summary);
        }
    }

    /** Successful re-authentications over every connection so far. */
    private static int reauthentications(KsaslKafkaServer server) {
        return server.connections().stream().mapToInt(ConnectionStats::reauthentications).sum();
    }

    static double clientMetric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    private static void sleepUntil(long atMs) throws InterruptedException {
        long wait = atMs - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    /** Every connection (with the server's reason for a failure) and the listener's metrics. */
    private static String summary(KsaslKafkaServer server) {
        return server.connections().stream().map(c -> c + (c.lastFailure() == null ? "" : " [" + c.lastFailure() + "]"))
                .collect(Collectors.joining("\n")) + "\n" + server.metrics();
    }
}
