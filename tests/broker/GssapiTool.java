// Kafka's own Java client over SASL/GSSAPI (JDK Kerberos, Krb5LoginModule with a keytab)
// against the test broker: produces and consumes for a while so that the connections
// re-authenticate several times, then prints one JSON object.
//
// Needs the broker classpath (kafka-clients and its dependencies) and the KDC's krb5.conf:
//   java -Djava.security.krb5.conf=<kdc dir>/krb5.conf -cp 'tests/broker/target/broker-lib/*' \
//        tests/broker/GssapiTool.java localhost:<gssapi port> <alice.keytab> alice@KSASL.TEST [seconds] [topic]
//
// Output (stdout): {"principal": "User:alice" (owner of a delegation token created by this
// client, i.e. the broker's view of who we are), "produced": n, "consumed": n, "missing": n,
// "seconds": s, "client_metrics": {"producer": {...}, "consumer": {...}, "admin": {...}},
// "totals": {metric: sum over the three clients}}; metrics are the clients' selector
// metrics successful-authentication-total, failed-authentication-total,
// successful-reauthentication-total, failed-reauthentication-total,
// reauthentication-latency-avg/-max.
// Errors: "ERROR <ExceptionClass>: <message>" (with causes) on stderr, exit 1.
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.security.token.delegation.DelegationToken;

public class GssapiTool {
    static final String[] METRICS = {
        "successful-authentication-total", "failed-authentication-total",
        "successful-reauthentication-total", "failed-reauthentication-total",
        "reauthentication-latency-avg", "reauthentication-latency-max",
    };

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: GssapiTool BOOTSTRAP KEYTAB PRINCIPAL [SECONDS [TOPIC]]");
            System.exit(2);
        }
        String bootstrap = args[0], keytab = args[1], principal = args[2];
        double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 12;
        String topic = args.length > 4 ? args[4] : "gssapi-" + System.nanoTime();
        try {
            run(bootstrap, keytab, principal, seconds, topic);
        } catch (Throwable t) {
            StringBuilder b = new StringBuilder("ERROR ");
            for (Throwable c = t; c != null; c = c.getCause()) {
                if (c != t) b.append(" <- ");
                b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
                if (c.getCause() == c) break;
            }
            System.err.println(b);
            System.exit(1);
        }
    }

    static Properties common(String bootstrap, String keytab, String principal, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "GSSAPI");
        p.put("sasl.kerberos.service.name", "kafka");
        p.put("sasl.jaas.config", "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true"
            + " keyTab=\"" + esc(keytab) + "\" principal=\"" + esc(principal) + "\";");
        p.put("client.id", clientId);
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "20000");
        return p;
    }

    static void run(String bootstrap, String keytab, String principal, double seconds, String topic) throws Exception {
        long t0 = System.nanoTime();
        String owner;
        Map<String, Map<String, Object>> metrics = new LinkedHashMap<>();
        int produced = 0;
        Set<String> sent = new HashSet<>(), received = new HashSet<>();
        try (Admin admin = Admin.create(common(bootstrap, keytab, principal, "ksasl-gssapi-admin"))) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) throw e;
            }
            // The token's owner is the principal the broker derived from our Kerberos name.
            DelegationToken token = admin.createDelegationToken().delegationToken().get();
            owner = token.tokenInfo().owner().toString();

            Properties pp = common(bootstrap, keytab, principal, "ksasl-gssapi-producer");
            pp.put("key.serializer", StringSerializer.class.getName());
            pp.put("value.serializer", StringSerializer.class.getName());
            pp.put("acks", "all");
            pp.put("linger.ms", "0");
            Properties cp = common(bootstrap, keytab, principal, "ksasl-gssapi-consumer");
            cp.put("key.deserializer", StringDeserializer.class.getName());
            cp.put("value.deserializer", StringDeserializer.class.getName());
            cp.put("enable.auto.commit", "false");
            cp.put("auto.offset.reset", "earliest");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp);
                 KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
                TopicPartition tp = new TopicPartition(topic, 0);
                consumer.assign(Collections.singletonList(tp));
                consumer.seekToBeginning(Collections.singletonList(tp));
                long end = t0 + (long) (seconds * 1e9);
                while (System.nanoTime() < end) {
                    String v = "m" + produced;
                    producer.send(new ProducerRecord<>(topic, v, v)).get();
                    sent.add(v);
                    produced++;
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) received.add(r.value());
                }
                long drain = System.nanoTime() + 15_000_000_000L;
                while (!received.containsAll(sent) && System.nanoTime() < drain) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) received.add(r.value());
                }
                metrics.put("producer", pick(producer.metrics()));
                metrics.put("consumer", pick(consumer.metrics()));
            }
            metrics.put("admin", pick(admin.metrics()));
        }
        Map<String, Object> totals = new LinkedHashMap<>();
        for (String m : METRICS) {
            if (!m.endsWith("-total")) continue;
            long sum = 0;
            for (Map<String, Object> c : metrics.values()) sum += ((Number) c.getOrDefault(m, 0L)).longValue();
            totals.put(m, sum);
        }
        Set<String> missing = new HashSet<>(sent);
        missing.removeAll(received);
        StringBuilder b = new StringBuilder("{");
        b.append("\"principal\":").append(str(owner));
        b.append(",\"topic\":").append(str(topic));
        b.append(",\"produced\":").append(produced);
        b.append(",\"consumed\":").append(received.size());
        b.append(",\"missing\":").append(missing.size());
        b.append(",\"seconds\":").append(String.format("%.2f", (System.nanoTime() - t0) / 1e9));
        b.append(",\"client_metrics\":{");
        boolean first = true;
        for (Map.Entry<String, Map<String, Object>> e : metrics.entrySet()) {
            if (!first) b.append(',');
            first = false;
            b.append(str(e.getKey())).append(':').append(obj(e.getValue()));
        }
        b.append("},\"totals\":").append(obj(totals)).append('}');
        System.out.println(b);
    }

    /** The selector's authentication metrics of one client (group *-metrics, no node tag). */
    static Map<String, Object> pick(Map<MetricName, ? extends Metric> all) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String name : METRICS) {
            double sum = 0, max = Double.NaN;
            boolean found = false;
            for (Map.Entry<MetricName, ? extends Metric> e : all.entrySet()) {
                MetricName n = e.getKey();
                if (!n.name().equals(name) || !n.group().endsWith("-metrics") || n.tags().containsKey("node-id")) continue;
                Object v = e.getValue().metricValue();
                if (!(v instanceof Number)) continue;
                double d = ((Number) v).doubleValue();
                if (Double.isNaN(d)) continue;
                found = true;
                if (name.endsWith("-max") || name.endsWith("-avg")) max = Double.isNaN(max) ? d : Math.max(max, d);
                else sum += d;
            }
            if (name.endsWith("-total")) out.put(name, (long) sum);
            else out.put(name, found ? (Object) max : null);
        }
        return out;
    }

    static String obj(Map<String, Object> m) {
        StringBuilder b = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (!first) b.append(',');
            first = false;
            Object v = e.getValue();
            b.append(str(e.getKey())).append(':').append(v == null ? "null" : v.toString());
        }
        return b.append('}').toString();
    }

    static String esc(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
