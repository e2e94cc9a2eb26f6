package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.security.auth.Subject;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.auth.login.LoginContext;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.ksasl.KsaslException;
import org.ksasl.MechanismRegistry;
import org.ksasl.ServerExchange;
import org.ksasl.ServerStep;

/**
 * GSSAPI with Kafka's own Java client: the JDK's Kerberos ({@code Krb5LoginModule} with a
 * keytab, {@code sasl.kerberos.service.name=kafka}) against the example server, whose GSSAPI is
 * ksasl's over MIT Kerberos (acceptor keytab {@code kafka/localhost}, principal-to-local rules).
 * Clients bootstrap from {@code localhost} (the service principal's host) while the server
 * listens on 127.0.0.1 only. Needs the KDC of {@code tests/kerberos/kdc.py --exec} (as
 * {@code make test-java} runs it), named by {@code KSASL_KDC_INFO}; skipped without it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@EnabledIfEnvironmentVariable(named = "KSASL_KDC_INFO", matches = ".+", disabledReason = "KSASL_KDC_INFO is not"
        + " set: run Maven under tests/kerberos/kdc.py --principal other/localhost --exec -- mvn ..."
        + " (make test-java does)")
class GssapiTest {
    static final long LIFETIME_MS = 2000;
    static final long RUN_MS = 10_000;
    static final long PERIOD_MS = 200;
    static final String RULES = "RULE:[1:$1@$0](alice@KSASL.TEST)s/.*/kafka-alice/,DEFAULT";
    static JsonNode kdc;

    @BeforeAll
    static void kdc() throws Exception {
        kdc = new ObjectMapper().readTree(new File(System.getenv("KSASL_KDC_INFO")));
        // The JDK's Kerberos reads its configuration from this property (MIT's, in the server,
        // from KRB5_CONFIG in the environment).
        System.setProperty("java.security.krb5.conf", kdc.get("krb5_conf").asText());
    }

    static String keytab(String name) {
        return kdc.get("keytabs").get(name).asText();
    }

    static KsaslKafkaServer server() throws Exception {
        return KsaslKafkaServer.builder()
                .maxReauthMs(LIFETIME_MS)
                .advertisedHost("localhost")
                .gssapi(keytab("kafka/localhost"), "kafka/localhost@KSASL.TEST", RULES)
                .topic("orders", 1)
                .build();
    }

    /** Kafka's client settings for GSSAPI as alice, from her keytab, asking for {@code service}. */
    static Properties gssapi(Properties p, String service) {
        p.put(SaslConfigs.SASL_KERBEROS_SERVICE_NAME, service);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "com.sun.security.auth.module.Krb5LoginModule required"
                + " useKeyTab=true storeKey=true keyTab=\"" + keytab("alice") + "\" principal=\"alice@KSASL.TEST\";");
        return p;
    }

    static double clientMetric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    @Test
    void kafkasClientAuthenticatesAndReauthenticatesWithKerberos() throws Exception {
        try (KsaslKafkaServer server = server()) {
            server.start();
            assertTrue(server.bootstrapServers().startsWith("localhost:"));
            List<String> failures = new ArrayList<>();
            int sent = 0;
            double clientReauths;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(gssapi(
                    Clients.producer(server, "producer-gssapi", "GSSAPI", ""), "kafka"));
                    Admin admin = Admin.create(gssapi(Clients.admin(server, "admin-gssapi", "GSSAPI", ""), "kafka"))) {
                long start = System.currentTimeMillis();
                for (long next = start; next < start + RUN_MS; next += PERIOD_MS) {
                    long wait = next - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    try {
                        producer.send(new ProducerRecord<>("orders", "k" + sent, "v" + sent)).get(10, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        failures.add(String.valueOf(e.getCause()));
                    }
                    sent++;
                }
                assertTrue(admin.listTopics().names().get(10, TimeUnit.SECONDS).contains("orders"));
                clientReauths = clientMetric(producer.metrics(), "successful-reauthentication-total");
                assertEquals(0.0, clientMetric(producer.metrics(), "failed-reauthentication-total"));
            }
            String summary = server.connections().stream().map(String::valueOf).collect(Collectors.joining("\n"))
                    + "\n" + server.metrics();
            assertEquals(List.of(), failures, summary);
            assertEquals(sent, server.records("orders"), "every record was answered\n" + summary);
            assertTrue(clientReauths >= 4, "the producer re-authenticated " + clientReauths + " times\n" + summary);

            int reauths = 0;
            for (ConnectionStats c : server.connections()) {
                assertEquals("GSSAPI", c.mechanism(), c.toString());
                // Authenticated as alice@KSASL.TEST, named by the principal-to-local rules.
                assertEquals("User:kafka-alice", c.principal(), c.toString());
                assertFalse(c.closedForExpiry(), c.toString());
                assertEquals(0, c.failedAuthentications() + c.failedReauthentications(), c.toString());
                for (ConnectionStats.Authentication a : c.authentications()) {
                    assertTrue(a.lifetimeMs() > 0 && a.lifetimeMs() <= LIFETIME_MS, a.toString());
                }
                // Kafka's client (the JDK's GSSAPI SaslClient) does not ask for mutual
                // authentication: two SaslAuthenticate requests per exchange, the AP-REQ and the
                // security-layer choice (mutual would add the empty answer to an AP-REP).
                int exchanges = c.authentications().size();
                assertEquals(2 * exchanges, (int) c.authenticationFrames().getOrDefault((short) 36, 0), c.toString());
                reauths += c.reauthentications();
            }
            Map<String, Double> metrics = server.metrics();
            assertEquals(reauths, metrics.get("successful-reauthentication-total"), 0.0, summary);
            assertEquals(clientReauths, reauths, 0.0, "both sides count the same\n" + summary);
            assertEquals(0.0, metrics.get("failed-authentication-total"), summary);
            assertEquals(0.0, metrics.get("expired-connections-killed-count"), summary);
        }
    }

    /**
     * A GSSAPI listener of {@code server.properties} (the JAAS entry's keyTab and principal,
     * {@code sasl.kerberos.service.name}, the principal-to-local rules) built by the core:
     * Kafka's client authenticates against it and is named by the file's rules.
     */
    @Test
    void aGssapiListenerOfServerProperties() throws Exception {
        String text = String.join("\n",
                "listeners=SASL_PLAINTEXT://127.0.0.1:0",
                "sasl.enabled.mechanisms=GSSAPI",
                "sasl.kerberos.service.name=kafka",
                "connections.max.reauth.ms=" + LIFETIME_MS,
                "sasl.kerberos.principal.to.local.rules=RULE:[1:$1@$0](alice@KSASL.TEST)s/.*/kafka-ops/,DEFAULT",
                "listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule"
                        + " required useKeyTab=true keyTab=\"" + keytab("kafka/localhost")
                        + "\" principal=\"kafka/localhost@KSASL.TEST\";", "");
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().advertisedHost("localhost").topic("orders", 1)
                .config(text, "SASL_PLAINTEXT").build()) {
            server.start();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(gssapi(
                    Clients.producer(server, "producer-file", "GSSAPI", ""), "kafka"))) {
                producer.send(new ProducerRecord<>("orders", "k", "v")).get(20, TimeUnit.SECONDS);
            }
            ConnectionStats c = server.connections().stream().filter(x -> !x.authentications().isEmpty())
                    .findFirst().orElseThrow();
            assertEquals("GSSAPI", c.mechanism(), c.toString());
            assertEquals("User:kafka-ops", c.principal(), c.toString());
            assertTrue(c.authentications().get(0).lifetimeMs() <= LIFETIME_MS, c.toString());
        }
    }

    @Test
    void aTicketForAnotherServiceIsRefused() throws Exception {
        try (KsaslKafkaServer server = server()) {
            server.start();
            try (Admin admin = Admin.create(gssapi(Clients.admin(server, "admin-other", "GSSAPI", ""), "other"))) {
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> admin.listTopics().names().get(10, TimeUnit.SECONDS));
                assertInstanceOf(SaslAuthenticationException.class, e.getCause());
                assertEquals("Authentication failed during authentication due to invalid credentials with SASL"
                        + " mechanism GSSAPI", e.getCause().getMessage());
            }
            ConnectionStats c = server.connections().get(0);
            assertTrue(c.lastFailure().contains("KERBEROS_WRONG_SERVICE"), c.toString());
        }
    }

    /** Alice's JDK login from her keytab (what Kafka's client does with the JAAS line above). */
    static Subject jdkLogin() throws Exception {
        Map<String, String> options = Map.of("useKeyTab", "true", "storeKey", "true", "doNotPrompt", "true",
                "keyTab", keytab("alice"), "principal", "alice@KSASL.TEST");
        Configuration jaas = new Configuration() {
            @Override
            public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
                return new AppConfigurationEntry[] {new AppConfigurationEntry(
                        "com.sun.security.auth.module.Krb5LoginModule",
                        AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, options)};
            }
        };
        LoginContext lc = new LoginContext("ksasl", new Subject(), null, jaas);
        lc.login();
        return lc.getSubject();
    }

    /**
     * The JDK's GSSAPI SaslClient, as Kafka's client creates it ({@code Sasl.createSaslClient}
     * with the client's principal as the authorization id, "kafka", "localhost"), against ksasl's
     * server exchange: the principal, or the failure's code, and the number of client messages.
     */
    static String jdkExchange(Subject subject, MechanismRegistry servers, String authzid) throws Exception {
        SaslClient client = Subject.doAs(subject, (java.security.PrivilegedExceptionAction<SaslClient>) () ->
                Sasl.createSaslClient(new String[] {"GSSAPI"}, authzid, "kafka", "localhost", Map.of(), null));
        try (ServerExchange server = new ServerExchange(servers, "GSSAPI")) {
            byte[] message = Subject.doAs(subject,
                    (java.security.PrivilegedExceptionAction<byte[]>) () -> client.evaluateChallenge(new byte[0]));
            int messages = 1;
            while (true) {
                ServerStep step;
                try {
                    step = server.step(message, System.currentTimeMillis());
                } catch (KsaslException e) {
                    return e.codeName() + " after " + messages;
                }
                if (step.kind() == ServerStep.Kind.DONE) {
                    return server.outcome().principal() + " after " + messages;
                }
                byte[] challenge = step.message();
                message = Subject.doAs(subject,
                        (java.security.PrivilegedExceptionAction<byte[]>) () -> client.evaluateChallenge(challenge));
                messages++;
            }
        } finally {
            client.dispose();
        }
    }

    /**
     * What the JDK's client sends and what ksasl's server makes of it. Kafka's client passes its
     * principal ({@code alice@KSASL.TEST}) as the authorization id; Kafka's broker ignores the
     * authorization id (its callback authorizes the authentication id).
     */
    @Test
    void theJdkClientAgainstKsaslsServerExchange() throws Exception {
        Subject alice = jdkLogin();
        try (MechanismRegistry servers = new MechanismRegistry()
                .addGssapiServer(keytab("kafka/localhost"), "kafka/localhost@KSASL.TEST", null, RULES, true)) {
            Map<String, String> seen = new java.util.TreeMap<>();
            for (String authzid : new String[] {"alice@KSASL.TEST", "", "alice", "bob@KSASL.TEST"}) {
                seen.put(authzid, jdkExchange(alice, servers, authzid));
            }
            // Two client messages (no mutual authentication), and the authorization id is
            // ignored as by Kafka's broker: even another user's name yields alice's principal.
            assertEquals(Map.of("alice@KSASL.TEST", "User:kafka-alice after 2", "", "User:kafka-alice after 2",
                    "alice", "User:kafka-alice after 2", "bob@KSASL.TEST", "User:kafka-alice after 2"), seen);
        }
    }
}
