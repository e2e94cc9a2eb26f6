package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * KIP-368 with Kafka's own Java client: with a 3-second session lifetime, clients that keep
 * working for 12.5 s must re-authenticate on every connection they use, in time, and never be
 * closed for expiry. The four mechanisms run in parallel against one server: an Admin listing
 * topics every 200 ms for PLAIN, SCRAM-SHA-256 and OAUTHBEARER, and an (idempotent)
 * KafkaProducer sending a record every 200 ms for SCRAM-SHA-512.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReauthenticationTest {
    static final long LIFETIME_MS = 3000;
    static final long RUN_MS = 12_500;
    static final long PERIOD_MS = 200;

    /** What one client did: its calls between {@code startMs} and {@code endMs}, and their failures. */
    record Run(String mechanism, long startMs, long endMs, int calls, List<String> failures) {}

    @Test
    void everyConnectionReauthenticatesInTimeAndNoneExpires() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder()
                .maxReauthMs(LIFETIME_MS)
                .user("alice", "alice-secret")
                .topic("orders", 3)
                .topic("payments", 1)
                .build()) {
            server.start();
            List<Run> runs = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<Run>> futures = new ArrayList<>();
                for (String mechanism : List.of("PLAIN", "SCRAM-SHA-256", "OAUTHBEARER")) {
                    futures.add(pool.submit(() -> listTopicsLoop(server, mechanism)));
                }
                futures.add(pool.submit(() -> produceLoop(server, "SCRAM-SHA-512", "events")));
                for (Future<Run> f : futures) {
                    runs.add(f.get(60, TimeUnit.SECONDS));
                }
            } finally {
                pool.shutdownNow();
            }

            String summary = summary(server, runs);
            int reauthentications = 0;
            for (Run run : runs) {
                assertEquals(List.of(), run.failures(), run.mechanism() + ": every call succeeds\n" + summary);
                assertTrue(run.calls() >= RUN_MS / PERIOD_MS / 2, run.mechanism() + ": " + run.calls() + " calls");
                List<ConnectionStats> mine = server.connections().stream()
                        .filter(c -> run.mechanism().equals(c.mechanism()))
                        .collect(Collectors.toList());
                // The connections that carried the client's requests from its first session
                // lifetime to the end of its run. The others are the bootstrap connections, idle
                // once the client knows the broker's address: Kafka's client re-authenticates
                // only before sending a request, so they keep their first session (and the
                // server, like Kafka's, closes an expired connection only on its next request).
                List<ConnectionStats> throughout = mine.stream()
                        .filter(c -> c.authentications().get(0).atMs() <= run.startMs() + LIFETIME_MS)
                        .filter(c -> c.lastRequestMs() >= run.endMs() - LIFETIME_MS)
                        .collect(Collectors.toList());
                assertFalse(throughout.isEmpty(), run.mechanism() + ": a connection lived through the run\n" + summary);
                for (ConnectionStats c : mine) {
                    assertFalse(c.closedForExpiry(), "never closed for expiry: " + c + "\n" + summary);
                    assertEquals(0, c.failedAuthentications() + c.failedReauthentications(), c.toString());
                    assertEquals("User:alice", c.principal(), c.toString());
                    reauthentications += c.reauthentications();
                    // Every session was granted the configured lifetime, and every request was
                    // answered within a live session.
                    for (ConnectionStats.Authentication a : c.authentications()) {
                        assertTrue(a.lifetimeMs() > 0 && a.lifetimeMs() <= LIFETIME_MS, a.toString());
                    }
                    ConnectionStats.Authentication last = c.authentications().get(c.authentications().size() - 1);
                    assertTrue(c.lastRequestMs() <= last.atMs() + last.lifetimeMs(), c + "\n" + summary);
                }
                for (ConnectionStats c : throughout) {
                    assertTrue(c.reauthentications() >= 3, "at least 3 re-authentications: " + c + "\n" + summary);
                }
            }
            assertTrue(server.records("events") >= runs.get(3).calls(), "every record arrived\n" + summary);

            Map<String, Double> metrics = server.metrics();
            assertEquals(0.0, metrics.get("expired-connections-killed-count"), summary);
            assertEquals(0.0, metrics.get("failed-reauthentication-total"), summary);
            assertEquals(0.0, metrics.get("failed-authentication-total"), summary);
            assertEquals(reauthentications, metrics.get("successful-reauthentication-total"), 0.0, summary);
            assertTrue(reauthentications >= 4 * 3, summary);
        }
    }

    /** An Admin listing topics every 200 ms. */
    private static Run listTopicsLoop(KsaslKafkaServer server, String mechanism) throws Exception {
        List<String> failures = new ArrayList<>();
        int calls = 0;
        long start;
        long end;
        try (Admin admin = Admin.create(Clients.admin(server, "admin-" + mechanism, mechanism,
                Clients.jaas(mechanism, "alice", "alice-secret")))) {
            start = System.currentTimeMillis();
            end = start + RUN_MS;
            for (long next = start; next < end; next += PERIOD_MS) {
                sleepUntil(next);
                try {
                    Set<String> names = admin.listTopics().names().get(10, TimeUnit.SECONDS);
                    if (!names.containsAll(Set.of("orders", "payments"))) {
                        failures.add("listTopics returned " + names);
                    }
                } catch (Exception e) {
                    failures.add(String.valueOf(e));
                }
                calls++;
            }
            end = System.currentTimeMillis();
        }
        return new Run(mechanism, start, end, calls, failures);
    }

    /** A producer sending one record every 200 ms and waiting for each acknowledgement. */
    private static Run produceLoop(KsaslKafkaServer server, String mechanism, String topic) throws Exception {
        List<String> failures = new ArrayList<>();
        int calls = 0;
        long start;
        long end;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Clients.producer(server,
                "producer-" + mechanism, mechanism, Clients.jaas(mechanism, "alice", "alice-secret")))) {
            start = System.currentTimeMillis();
            end = start + RUN_MS;
            for (long next = start; next < end; next += PERIOD_MS) {
                sleepUntil(next);
                try {
                    producer.send(new ProducerRecord<>(topic, "key-" + calls, "value-" + calls))
                            .get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    failures.add(String.valueOf(e));
                }
                calls++;
            }
            end = System.currentTimeMillis();
        }
        return new Run(mechanism, start, end, calls, failures);
    }

    private static void sleepUntil(long atMs) throws InterruptedException {
        long wait = atMs - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    /** The runs and every connection, times relative to the first run's start: for failure messages. */
    private static String summary(KsaslKafkaServer server, List<Run> runs) {
        long t0 = runs.get(0).startMs();
        StringBuilder b = new StringBuilder();
        for (Run r : runs) {
            b.append(r.mechanism()).append(": ").append(r.calls()).append(" calls from ").append(r.startMs() - t0)
                    .append(" to ").append(r.endMs() - t0).append(" ms, failures ").append(r.failures()).append('\n');
        }
        for (ConnectionStats c : server.connections()) {
            b.append(c).append("\n  authenticated at");
            for (ConnectionStats.Authentication a : c.authentications()) {
                b.append(' ').append(a.atMs() - t0);
            }
            b.append(", last request at ").append(c.lastRequestMs() - t0).append('\n');
        }
        return b.append(server.metrics()).toString();
    }
}
