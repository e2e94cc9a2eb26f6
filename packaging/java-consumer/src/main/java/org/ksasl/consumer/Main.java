package org.ksasl.consumer;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.SaslConfigs;
import org.ksasl.Ksasl;
import org.ksasl.examples.ConnectionStats;
import org.ksasl.examples.KsaslKafkaServer;

/**
 * The published jar at work in a project of its own: examples/java's Kafka-protocol server
 * (ksasl on the server side) on 127.0.0.1 with a 2-second session lifetime, and Kafka's own
 * Admin client logging in with SCRAM-SHA-256 and listing topics every 200 ms for 10 s, so that
 * its connection re-authenticates (KIP-368) several times.
 *
 * <p>Prints the jar's location and versions, then both sides' counters, one {@code key=value}
 * per line; exits with 1 unless the versions equal the expected one (the first argument), the
 * native library came from the jar, every call succeeded, both sides counted at least
 * {@value #MIN_REAUTHENTICATIONS} re-authentications and no failed authentication.
 */
public final class Main {
    static final String MECHANISM = "SCRAM-SHA-256";
    static final long LIFETIME_MS = 2000;
    static final long RUN_MS = 10_000;
    static final long PERIOD_MS = 200;
    static final int MIN_REAUTHENTICATIONS = 3;

    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Main EXPECTED_VERSION");
            System.exit(2);
        }
        String expected = args[0];
        List<String> problems = new ArrayList<>();

        Package pkg = Ksasl.class.getPackage();
        print("ksasl-jar", Path.of(Ksasl.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        print("implementation-title", pkg.getImplementationTitle());
        print("implementation-vendor", pkg.getImplementationVendor());
        expect(problems, "implementation-version", pkg.getImplementationVersion(), expected);
        expect(problems, "java-version", Ksasl.version(), expected);
        expect(problems, "native-version", Ksasl.nativeVersion(), expected);
        expect(problems, "native-source", Ksasl.nativeSource(), "jar");

        try (KsaslKafkaServer server = KsaslKafkaServer.builder()
                .maxReauthMs(LIFETIME_MS)
                .user("alice", "alice-secret")
                .topic("orders", 1)
                .build()) {
            server.start();
            print("server", server.bootstrapServers() + " connections.max.reauth.ms=" + server.maxReauthMs());

            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrapServers());
            p.put(AdminClientConfig.CLIENT_ID_CONFIG, "ksasl-consumer-check");
            p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
            p.put(SaslConfigs.SASL_MECHANISM, MECHANISM);
            p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required"
                    + " username=\"alice\" password=\"alice-secret\";");
            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);

            int calls = 0;
            List<String> failures = new ArrayList<>();
            Map<String, Double> client = new TreeMap<>();
            try (Admin admin = Admin.create(p)) {
                long start = System.currentTimeMillis();
                for (long next = start; next < start + RUN_MS; next += PERIOD_MS) {
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
                for (Map.Entry<MetricName, ? extends Metric> m : admin.metrics().entrySet()) {
                    String name = m.getKey().name();
                    if (name.matches("(successful|failed)-(re)?authentication-total")) {
                        client.merge(name, ((Number) m.getValue().metricValue()).doubleValue(), Double::sum);
                    }
                }
            }
            print("client-calls", calls);
            print("client-call-failures", failures.size() + (failures.isEmpty() ? "" : " " + failures));
            client.forEach((k, v) -> print("client " + k, v));
            Map<String, Double> serverMetrics = new TreeMap<>(server.metrics());
            serverMetrics.forEach((k, v) -> print("server " + k, v));
            for (ConnectionStats c : server.connections()) {
                print("server connection", c);
            }

            if (!failures.isEmpty()) {
                problems.add(failures.size() + " of " + calls + " calls failed");
            }
            atLeast(problems, "client successful-authentication-total", client, 1);
            atLeast(problems, "client successful-reauthentication-total", client, MIN_REAUTHENTICATIONS);
            atLeast(problems, "server successful-reauthentication-total", serverMetrics, MIN_REAUTHENTICATIONS);
            for (String failed : List.of("failed-authentication-total", "failed-reauthentication-total")) {
                zero(problems, "client " + failed, client.get(failed));
                zero(problems, "server " + failed, serverMetrics.get(failed));
            }
            zero(problems, "server expired-connections-killed-count",
                    serverMetrics.get("expired-connections-killed-count"));
        }

        if (!problems.isEmpty()) {
            problems.forEach(s -> System.out.println("FAIL " + s));
            System.exit(1);
        }
        System.out.println("OK: the published jar authenticates and re-authenticates Kafka's Java client");
    }

    private static void print(String key, Object value) {
        System.out.println(key + "=" + value);
    }

    private static void expect(List<String> problems, String key, String actual, String wanted) {
        print(key, actual);
        if (!wanted.equals(actual)) {
            problems.add(key + " is " + actual + ", expected " + wanted);
        }
    }

    private static void atLeast(List<String> problems, String key, Map<String, Double> metrics, int min) {
        Double v = metrics.get(key.substring(key.indexOf(' ') + 1));
        if (v == null || v < min) {
            problems.add(key + " is " + v + ", expected at least " + min);
        }
    }

    private static void zero(List<String> problems, String key, Double value) {
        if (value == null || value != 0.0) {
            problems.add(key + " is " + value + ", expected 0");
        }
    }
}
