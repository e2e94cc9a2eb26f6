package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.ksasl.OidcLogin;

/**
 * OAUTHBEARER with real OIDC on both sides: Kafka's Java client logs in at a Keycloak with its
 * own OIDC login ({@code OAuthBearerLoginCallbackHandler}, client-credentials grant) and presents
 * the access token to the example server, which checks it as a broker configured with
 * {@code sasl.oauthbearer.jwks.endpoint.url}, {@code expected.issuer} and
 * {@code expected.audience} would: signature against the provider's JWKS (fetched over HTTPS,
 * trusting the test CA), issuer, audience, expiry, all by ksasl
 * ({@link KsaslKafkaServer.Builder#oauthBearerJwks}). With {@code connections.max.reauth.ms} at
 * 3 s the client re-authenticates (KIP-368) with the same token throughout.
 *
 * <p>Maven runs under {@code tests/oidc/keycloak.py --exec --} (as {@code make test-java} does),
 * which describes the provider in the JSON file named by {@code KSASL_OIDC_INFO}; without it
 * these tests are skipped.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@EnabledIfEnvironmentVariable(named = "KSASL_OIDC_INFO", matches = ".+", disabledReason = "KSASL_OIDC_INFO is not"
        + " set: run Maven under tests/oidc/keycloak.py --exec -- mvn ... (make test-java does)")
class OidcClientTest {
    static final long LIFETIME_MS = 3000;
    static final long RUN_MS = 12_000;
    static final long PERIOD_MS = 200;
    static final String TOPIC = "orders";
    static final String LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler";
    /** Kafka 4 only lets its OAuth login reach URLs, and read files, listed in these system properties. */
    static final String ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls";
    static final String ALLOWED_FILES = "org.apache.kafka.sasl.oauthbearer.allowed.files";

    static JsonNode idp;
    private final SavedProperties savedProperties = new SavedProperties();

    @BeforeAll
    static void idp() throws Exception {
        idp = new ObjectMapper().readTree(new File(System.getenv("KSASL_OIDC_INFO")));
    }

    static String s(String... path) {
        JsonNode n = idp;
        for (String p : path) {
            n = n.get(p);
        }
        return n.asText();
    }

    @BeforeEach
    void allowTheTokenEndpoint() {
        savedProperties.save(List.of(ALLOWED_URLS, ALLOWED_FILES));
        System.setProperty(ALLOWED_URLS, s("token_endpoint"));
    }

    @AfterEach
    void restoreProperties() {
        savedProperties.restore();
    }

    /** The provider's keys for a server expecting Keycloak's issuer and {@code audience}. */
    static KsaslKafkaServer.JwksKeys keys(String audience) throws Exception {
        return KsaslKafkaServer.JwksKeys.open(s("jwks_uri"), s("issuer"), List.of(audience), s("ca_pem"));
    }

    static KsaslKafkaServer server(KsaslKafkaServer.JwksKeys keys) throws Exception {
        KsaslKafkaServer server = KsaslKafkaServer.builder()
                .maxReauthMs(LIFETIME_MS)
                .oauthBearerJwks(keys.endpoint)
                .topic(TOPIC, 1)
                .build();
        assertTrue(server.signedOAuthBearer());
        return server;
    }

    /**
     * Kafka's OAuth login module with {@code options}, trusting the test CA for the token
     * endpoint's HTTPS (Kafka reads the {@code ssl.*} settings of its login from the JAAS options).
     */
    static String oidcJaas(String options) {
        return "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required" + options
                + " ssl.truststore.location=\"" + s("ca_pem") + "\" ssl.truststore.type=\"PEM\";";
    }

    /** Kafka's OIDC login (instead of its unsecured tokens) at Keycloak's token endpoint. */
    static Properties oidcLogin(Properties p) {
        p.put(SaslConfigs.SASL_LOGIN_CALLBACK_HANDLER_CLASS, LOGIN_HANDLER);
        p.put(SaslConfigs.SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL, s("token_endpoint"));
        return p;
    }

    static String secretJaas() {
        return oidcJaas(" clientId=\"" + s("secret_client", "id") + "\" clientSecret=\""
                + s("secret_client", "secret") + "\"");
    }

    /**
     * The {@code sub} of the tokens Keycloak issues to a client (its service account's id),
     * read from a token fetched separately with ksasl's OIDC login ({@code settings} by Kafka's
     * names), so that the test does not depend on how Keycloak names service accounts.
     */
    static String subjectOfTokens(Map<String, String> settings) throws Exception {
        Map<String, String> m = new HashMap<>(settings);
        m.put("sasl.oauthbearer.token.endpoint.url", s("token_endpoint"));
        m.put("ssl.truststore.location", s("ca_pem"));
        try (OidcLogin login = new OidcLogin(m)) {
            String[] parts = login.fetch(System.currentTimeMillis()).value().split("\\.");
            JsonNode claims = new ObjectMapper().readTree(
                    new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8));
            String sub = claims.path("sub").asText("");
            assertFalse(sub.isBlank(), "Keycloak's token has a subject");
            return sub;
        }
    }

    static double clientMetric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    @Test
    void clientSecretLoginAuthenticatesAndReauthenticates() throws Exception {
        String subject = subjectOfTokens(Map.of("clientId", s("secret_client", "id"),
                "clientSecret", s("secret_client", "secret")));
        try (KsaslKafkaServer.JwksKeys keys = keys(s("audience")); KsaslKafkaServer server = server(keys)) {
            server.start();
            produceAndCheck(server, oidcLogin(Clients.producer(server, "producer-oidc-secret", "OAUTHBEARER",
                    secretJaas())), subject);
        }
    }

    /**
     * Kafka's client authenticating at Keycloak with a signed JWT (private_key_jwt: the
     * client-credentials grant with a {@code client_assertion} Kafka makes and signs with RS256)
     * instead of a secret.
     */
    @Test
    void signedAssertionLoginAuthenticatesAndReauthenticates() throws Exception {
        String clientId = s("jwt_client", "id");
        String key = s("jwt_client", "key_pem");
        String subject = subjectOfTokens(Map.of("clientId", clientId,
                "sasl.oauthbearer.assertion.private.key.file", key,
                "sasl.oauthbearer.assertion.claim.aud", s("issuer"),
                "sasl.oauthbearer.assertion.claim.jti.include", "true"));
        System.setProperty(ALLOWED_FILES, key);
        try (KsaslKafkaServer.JwksKeys keys = keys(s("audience")); KsaslKafkaServer server = server(keys)) {
            server.start();
            Properties p = oidcLogin(Clients.producer(server, "producer-oidc-assertion", "OAUTHBEARER",
                    oidcJaas("")));
            p.put(SaslConfigs.SASL_OAUTHBEARER_CLIENT_CREDENTIALS_CLIENT_ID, clientId);
            p.put(SaslConfigs.SASL_OAUTHBEARER_ASSERTION_PRIVATE_KEY_FILE, key);
            p.put(SaslConfigs.SASL_OAUTHBEARER_ASSERTION_ALGORITHM, "RS256");
            p.put(SaslConfigs.SASL_OAUTHBEARER_ASSERTION_CLAIM_ISS, clientId);
            p.put(SaslConfigs.SASL_OAUTHBEARER_ASSERTION_CLAIM_SUB, clientId);
            p.put(SaslConfigs.SASL_OAUTHBEARER_ASSERTION_CLAIM_AUD, s("issuer"));
            // Keycloak refuses an assertion without a jti (it remembers them against replay).
            p.put(SaslConfigs.SASL_OAUTHBEARER_ASSERTION_CLAIM_JTI_INCLUDE, true);
            produceAndCheck(server, p, subject);
        }
    }

    /**
     * The negative controls: the server really checks signatures and audiences. Kafka's
     * unsecured token (alg "none") is refused, and so is Keycloak's own token by a server that
     * expects another audience.
     */
    @Test
    void unsignedTokensAndTokensForAnotherAudienceAreRefused() throws Exception {
        try (KsaslKafkaServer.JwksKeys keys = keys(s("audience")); KsaslKafkaServer server = server(keys)) {
            server.start();
            assertRefused(server, Clients.admin(server, "admin-unsecured", "OAUTHBEARER",
                    Clients.jaas("OAUTHBEARER", "alice", null)), "TOKEN_ALGORITHM_REFUSED");
        }
        try (KsaslKafkaServer.JwksKeys keys = keys("another-service"); KsaslKafkaServer server = server(keys)) {
            server.start();
            assertRefused(server, oidcLogin(Clients.admin(server, "admin-other-audience", "OAUTHBEARER",
                    secretJaas())), "TOKEN_INVALID_AUDIENCE");
        }
    }

    /**
     * The client's first call fails with an authentication error, the server authenticated no
     * one, and ksasl refused the token for the reason named by {@code code}.
     */
    private static void assertRefused(KsaslKafkaServer server, Properties client, String code) throws Exception {
        try (Admin admin = Admin.create(client)) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> admin.listTopics().names().get(30, TimeUnit.SECONDS));
            assertInstanceOf(SaslAuthenticationException.class, e.getCause(), String.valueOf(e.getCause()));
        }
        String summary = summary(server);
        List<ConnectionStats> connections = server.connections();
        assertFalse(connections.isEmpty(), summary);
        int failed = 0;
        for (ConnectionStats c : connections) {
            assertTrue(c.authentications().isEmpty(), summary);
            failed += c.failedAuthentications();
            if (c.failedAuthentications() > 0) {
                assertTrue(c.lastFailure().contains(code), summary);
            }
        }
        assertTrue(failed >= 1, summary);
        assertEquals(failed, server.metrics().get("failed-authentication-total"), 0.0, summary);
        assertEquals(0.0, server.metrics().get("successful-authentication-total"), summary);
    }

    /**
     * A producer sending one record every 200 ms for 12 s, each awaited: every record is
     * acknowledged, every connection that carried records re-authenticated at least 3 times,
     * none failed or was closed for expiry, and the server saw {@code subject} as the principal
     * of every session.
     */
    private static void produceAndCheck(KsaslKafkaServer server, Properties client, String subject) throws Exception {
        List<String> failures = new ArrayList<>();
        int sent = 0;
        double clientReauths;
        double clientFailedReauths;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(client)) {
            long start = System.currentTimeMillis();
            for (long next = start; next < start + RUN_MS; next += PERIOD_MS) {
                long wait = next - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                try {
                    producer.send(new ProducerRecord<>(TOPIC, "k" + sent, "v" + sent)).get(10, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failures.add(String.valueOf(e.getCause()));
                }
                sent++;
            }
            clientReauths = clientMetric(producer.metrics(), "successful-reauthentication-total");
            clientFailedReauths = clientMetric(producer.metrics(), "failed-reauthentication-total");
        }
        String summary = summary(server);
        assertEquals(List.of(), failures, summary);
        assertEquals(sent, server.records(TOPIC), "every record was acknowledged\n" + summary);
        assertEquals(0.0, clientFailedReauths, summary);

        List<ConnectionStats> producing = server.connections().stream()
                .filter(c -> c.requests().getOrDefault((short) 0, 0) > 0)
                .collect(Collectors.toList());
        assertFalse(producing.isEmpty(), summary);
        for (ConnectionStats c : producing) {
            assertTrue(c.reauthentications() >= 3, "at least 3 re-authentications: " + c + "\n" + summary);
        }
        int reauths = 0;
        for (ConnectionStats c : server.connections()) {
            assertEquals("OAUTHBEARER", c.mechanism(), summary);
            assertEquals("User:" + subject, c.principal(), summary);
            assertFalse(c.closedForExpiry(), summary);
            assertEquals(0, c.failedAuthentications() + c.failedReauthentications(), summary);
            for (ConnectionStats.Authentication a : c.authentications()) {
                assertEquals("User:" + subject, a.principal(), summary);
                // connections.max.reauth.ms bounds each session; the token's exp was read.
                assertTrue(a.lifetimeMs() > 0 && a.lifetimeMs() <= LIFETIME_MS, a + "\n" + summary);
                assertTrue(a.credentialExpiryMs().isPresent() && a.credentialExpiryMs().getAsLong() > a.atMs(),
                        a + "\n" + summary);
            }
            reauths += c.reauthentications();
        }
        Map<String, Double> metrics = server.metrics();
        assertEquals(0.0, metrics.get("expired-connections-killed-count"), summary);
        assertEquals(0.0, metrics.get("failed-authentication-total"), summary);
        assertEquals(0.0, metrics.get("failed-reauthentication-total"), summary);
        assertEquals(reauths, metrics.get("successful-reauthentication-total"), 0.0, summary);
        assertEquals(clientReauths, reauths, 0.0, "both sides count the same\n" + summary);
    }

    /** Every connection and the listener's metrics, for failure messages (no credentials in them). */
    private static String summary(KsaslKafkaServer server) {
        return server.connections().stream().map(c -> c + (c.lastFailure() == null ? "" : " [" + c.lastFailure() + "]"))
                .collect(Collectors.joining("\n")) + "\n" + server.metrics();
    }
}
