package org.ksasl.bench;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.internals.ScramCredentialUtils;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.ksasl.AuthOutcome;
import org.ksasl.ClientExchange;
import org.ksasl.CredentialStore;
import org.ksasl.MechanismRegistry;
import org.ksasl.ServerExchange;
import org.ksasl.ServerStep;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One SCRAM login (client-first, server-first with a fresh nonce, client-final with the proof,
 * server-final with the server signature, checked by the client), per operation, against one
 * 4096-iteration credential that both servers hold (same salt and keys):
 *
 * <ul>
 *   <li>server: ksasl's {@link ServerExchange} over a {@link CredentialStore}, or Kafka's
 *       {@link ScramSaslServer} with a callback handler serving the {@link ScramCredential}
 *       (each a new server object per login, as a broker makes one per authentication; both
 *       end by reading the authenticated principal);
 *   <li>client: ksasl's {@link ClientExchange} (keys cached after the first login of the
 *       registry) or {@link JavaScramClient} (Kafka's message classes, keys derived once).
 * </ul>
 *
 * The time spent in the server's calls is summed per login ({@link Split}); and
 * {@code scram5_javaClientOnly} is the Java client's share alone, replaying a recorded
 * exchange, as a cross-check (server-only cost = login − client share).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
// Kafka's server needs more than 3 s of warmup on 2 cores (its SHA-512 logins still fell from
// 66 to 23 us over the first measurement iterations after a 3 x 1 s warmup).
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class Scram {
    static final String USER = "alice";
    static final String PASSWORD = "alice-secret";
    static final int ITERATIONS = 4096;
    static final long NOW = 1_800_000_000_000L;

    /**
     * Kafka's side of a login as a broker has it: {@link #PASSWORD}'s credential (fresh salt,
     * {@link #ITERATIONS}) and the callback handler serving it for {@link #USER}; also the keys
     * a Java client of that user derives.
     */
    static final class KafkaSide {
        final ScramMechanism mechanism;
        final byte[] salt;
        final byte[] clientKey;
        final byte[] storedKey;
        final byte[] serverKey;
        final ScramCredential credential;
        final CallbackHandler callbacks;

        KafkaSide(ScramMechanism mechanism) throws Exception {
            this.mechanism = mechanism;
            ScramFormatter f = new ScramFormatter(mechanism);
            salt = f.secureRandomBytes();
            byte[] salted = f.saltedPassword(PASSWORD, salt, ITERATIONS);
            clientKey = f.clientKey(salted);
            storedKey = f.storedKey(clientKey);
            serverKey = f.serverKey(salted);
            credential = new ScramCredential(salt, storedKey, serverKey, ITERATIONS);
            ScramCredential served = credential;
            callbacks = (Callback[] cbs) -> {
                for (Callback cb : cbs) {
                    if (cb instanceof NameCallback) {
                        if (!USER.equals(((NameCallback) cb).getDefaultName())) {
                            throw new IOException("unknown user");
                        }
                    } else if (cb instanceof ScramCredentialCallback) {
                        ((ScramCredentialCallback) cb).scramCredential(served);
                    } else {
                        throw new UnsupportedCallbackException(cb);
                    }
                }
            };
        }

        /** A Java client of {@link #USER} with the keys derived here. */
        JavaScramClient javaClient() throws GeneralSecurityException {
            return new JavaScramClient(mechanism, USER, salt, ITERATIONS, clientKey, storedKey, serverKey);
        }
    }

    @State(Scope.Benchmark)
    public static class Setting {
        @Param({"SCRAM-SHA-256", "SCRAM-SHA-512"})
        String mechanism;

        ScramMechanism kafkaMechanism;
        ScramCredential credential;
        CredentialStore store;
        MechanismRegistry serverRegistry;
        MechanismRegistry clientRegistry;
        CallbackHandler callbacks;
        JavaScramClient javaClient;
        // A recorded exchange (Kafka server, Java client) for the client-only benchmark.
        String recordedNonce;
        byte[] recordedServerFirst;
        byte[] recordedServerFinal;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            kafkaMechanism = ScramMechanism.forMechanismName(mechanism);
            KafkaSide kafka = new KafkaSide(kafkaMechanism);
            credential = kafka.credential;
            callbacks = kafka.callbacks;

            store = new CredentialStore();
            store.setScram(USER, mechanism, ScramCredentialUtils.credentialToString(credential));
            serverRegistry = new MechanismRegistry().addPasswordServers(store);
            clientRegistry = new MechanismRegistry().addPasswordClients(USER, PASSWORD);
            javaClient = kafka.javaClient();

            // Every combination once, checked; the first ksasl client login derives and caches its keys.
            Split ignored = new Split();
            check(ksaslServerKsaslClient(this, ignored));
            check(ksaslServerJavaClient(this, ignored));
            check(kafkaServerJavaClient(this, ignored));
            check(kafkaServerKsaslClient(this, ignored));
            recordedNonce = javaClient.nonce();
            ScramSaslServer server = new ScramSaslServer(kafkaMechanism, Map.of(), callbacks);
            recordedServerFirst = server.evaluateResponse(javaClient.first(recordedNonce));
            recordedServerFinal = server.evaluateResponse(javaClient.finalMessage(recordedServerFirst));
            javaClient.verify(recordedServerFinal);
            check(server.getAuthorizationID());
            javaClientOnly(this);
        }

        private static void check(Object principal) {
            String p = principal instanceof AuthOutcome ? ((AuthOutcome) principal).principalName()
                    : (String) principal;
            if (!USER.equals(p)) {
                throw new IllegalStateException("not authenticated as " + USER + ": " + principal);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            serverRegistry.close();
            clientRegistry.close();
            store.close();
        }
    }

    /**
     * The server's share of the logins of one iteration: {@code serverNs / logins} is the
     * server-only time per login (printed by {@link Table} as "server us").
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Split {
        public long serverNs;
        public long logins;

        @Setup(Level.Iteration)
        public void reset() {
            serverNs = 0;
            logins = 0;
        }

        void add(long ns) {
            serverNs += ns;
            logins++;
        }
    }

    // --- the logins ----------------------------------------------------------------------------
    // Each login also sums the time spent in the server's calls (System.nanoTime() around them,
    // about 4 x 20 ns per login) into Split, so the server's share is read directly.

    static AuthOutcome ksaslServerKsaslClient(Setting s, Split t) throws Exception {
        ClientExchange client = new ClientExchange(s.clientRegistry, s.mechanism);
        byte[] clientFirst = client.start(NOW).message();
        long a = System.nanoTime();
        ServerExchange server = new ServerExchange(s.serverRegistry, s.mechanism);
        ServerStep first = server.step(clientFirst, NOW);
        long b = System.nanoTime();
        byte[] clientFinal = client.step(first.message(), NOW).message();
        long c = System.nanoTime();
        ServerStep done = server.step(clientFinal, NOW);
        AuthOutcome outcome = server.outcome();
        server.close();
        long d = System.nanoTime();
        boolean verified = client.step(done.message(), NOW).done();
        client.close();
        if (done.kind() != ServerStep.Kind.DONE || !verified) {
            throw new IllegalStateException("login did not complete");
        }
        t.add(b - a + d - c);
        return outcome;
    }

    static AuthOutcome ksaslServerJavaClient(Setting s, Split t) throws Exception {
        JavaScramClient client = s.javaClient;
        byte[] clientFirst = client.first();
        long a = System.nanoTime();
        ServerExchange server = new ServerExchange(s.serverRegistry, s.mechanism);
        ServerStep first = server.step(clientFirst, NOW);
        long b = System.nanoTime();
        byte[] clientFinal = client.finalMessage(first.message());
        long c = System.nanoTime();
        ServerStep done = server.step(clientFinal, NOW);
        AuthOutcome outcome = server.outcome();
        server.close();
        long d = System.nanoTime();
        if (done.kind() != ServerStep.Kind.DONE) {
            throw new IllegalStateException("login did not complete");
        }
        client.verify(done.message());
        t.add(b - a + d - c);
        return outcome;
    }

    static String kafkaServerJavaClient(Setting s, Split t) throws Exception {
        JavaScramClient client = s.javaClient;
        byte[] clientFirst = client.first();
        long a = System.nanoTime();
        ScramSaslServer server = new ScramSaslServer(s.kafkaMechanism, Map.of(), s.callbacks);
        byte[] first = server.evaluateResponse(clientFirst);
        long b = System.nanoTime();
        byte[] clientFinal = client.finalMessage(first);
        long c = System.nanoTime();
        byte[] fin = server.evaluateResponse(clientFinal);
        String principal = server.getAuthorizationID();
        long d = System.nanoTime();
        client.verify(fin);
        t.add(b - a + d - c);
        return principal;
    }

    static String kafkaServerKsaslClient(Setting s, Split t) throws Exception {
        ClientExchange client = new ClientExchange(s.clientRegistry, s.mechanism);
        byte[] clientFirst = client.start(NOW).message();
        long a = System.nanoTime();
        ScramSaslServer server = new ScramSaslServer(s.kafkaMechanism, Map.of(), s.callbacks);
        byte[] first = server.evaluateResponse(clientFirst);
        long b = System.nanoTime();
        byte[] clientFinal = client.step(first, NOW).message();
        long c = System.nanoTime();
        byte[] fin = server.evaluateResponse(clientFinal);
        String principal = server.getAuthorizationID();
        long d = System.nanoTime();
        boolean verified = client.step(fin, NOW).done();
        client.close();
        if (!verified) {
            throw new IllegalStateException("login did not complete");
        }
        t.add(b - a + d - c);
        return principal;
    }

    /** The Java client's work in one login (fresh nonce made, then the recorded exchange replayed). */
    static byte[] javaClientOnly(Setting s) throws Exception {
        JavaScramClient client = s.javaClient;
        String nonce = client.nonce();
        if (nonce.isEmpty()) {
            throw new IllegalStateException("empty nonce");
        }
        client.first(s.recordedNonce);
        byte[] fin = client.finalMessage(s.recordedServerFirst);
        client.verify(s.recordedServerFinal);
        return fin;
    }

    // --- benchmarks ------------------------------------------------------------------------------

    @Benchmark
    public AuthOutcome scram1_ksaslServer_ksaslClient(Setting s, Split t) throws Exception {
        return ksaslServerKsaslClient(s, t);
    }

    @Benchmark
    public AuthOutcome scram2_ksaslServer_javaClient(Setting s, Split t) throws Exception {
        return ksaslServerJavaClient(s, t);
    }

    @Benchmark
    public String scram3_kafkaServer_javaClient(Setting s, Split t) throws Exception {
        return kafkaServerJavaClient(s, t);
    }

    @Benchmark
    public String scram4_kafkaServer_ksaslClient(Setting s, Split t) throws Exception {
        return kafkaServerKsaslClient(s, t);
    }

    @Benchmark
    public byte[] scram5_javaClientOnly(Setting s) throws Exception {
        return javaClientOnly(s);
    }
}
