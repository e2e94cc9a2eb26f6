package org.ksasl.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.security.scram.internals.ScramCredentialUtils;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.ksasl.AuthOutcome;
import org.ksasl.ClientExchange;
import org.ksasl.CredentialStore;
import org.ksasl.JwksValidator;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Throughput of a broker's server-side work with 1 and with 2 threads sharing the objects a
 * broker shares between its network threads: ONE server {@link MechanismRegistry}, ONE
 * {@link CredentialStore}, ONE {@link JwksValidator} and the registry's OAUTHBEARER verdict
 * cache. What differs per thread is what differs per connection: the client side of the SCRAM
 * login (its own client registry, keys cached in setup) and, for OAUTHBEARER, the token each
 * thread presents (a different RS256 token per thread, so each has its own cache entry).
 *
 * <p>Ideal scaling on a machine with 2 free cores: the {@code _t2} score (JMH sums the
 * threads) is 2x the {@code _t1} score; the goal is at least 1.8x.
 *
 * <ul>
 *   <li>{@code scram256_*}: one whole SCRAM-SHA-256 login per operation (4096-iteration
 *       credential), as {@code Scram.scram1_ksaslServer_ksaslClient}: a new
 *       {@link ServerExchange} from the shared registry, both steps, {@code outcome()},
 *       {@code close()}; the per-thread ksasl client answers with its cached keys.
 *   <li>{@code oauthCached_*}: one OAUTHBEARER re-authentication per operation: a new
 *       {@link ServerExchange} from the shared registry, the client's initial response with
 *       this thread's token, {@code outcome()}, {@code close()}. The registry's server
 *       ({@code addOAuthBearerServer(JwksValidator)}) keeps verdicts in the core's
 *       {@code CachingValidator}; each thread's token was validated once in setup, so every
 *       operation is a cache hit (SHA-256 of the token and a map lookup, no RSA verification).
 *       The Java binding has no cache in front of {@link JwksValidator#validate} alone, so the
 *       exchange is both what a broker does per re-authentication and the only cached path.
 *   <li>{@code oauthUnshared_t2}: the control of {@code oauthCached_t2}, each thread with its
 *       own registry, validator and cache ({@link OwnBroker}).
 *   <li>{@code exchangeNewClose_*}: the part every exchange pays, alone: {@code new
 *       ServerExchange(registry, "OAUTHBEARER").close()}, from the shared registry and (the
 *       {@code Unshared} row) from a registry per thread.
 *   <li>{@code kafkaScram256_*}: the anchor, Kafka's {@link ScramSaslServer} (a new server per
 *       login) with a shared credential callback and a per-thread Java client, as
 *       {@code Scram.scram3_kafkaServer_javaClient}.
 * </ul>
 *
 * Each benchmark also reports {@code cpuNs} and {@code wallNs} ({@link Cpu}): their ratio
 * says whether the threads had a core to themselves, which tells contention from a busy
 * machine.
 *
 * <p>Tokens and JWKS: {@code tests/vectors/jwt.json} (PyJWT vectors); the file is looked up
 * from the working directory ({@code benches/java} under run.sh) or named by
 * {@code -Dksasl.bench.jwt=...}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
// As Scram: Kafka's server needs 5 s of warmup to be flat.
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class Scaling {
    static final String USER = Scram.USER;
    static final String PASSWORD = Scram.PASSWORD;
    static final String SCRAM = "SCRAM-SHA-256";
    static final String OAUTH = "OAUTHBEARER";
    static final long NOW = 1_800_000_000_000L;

    /** What the broker's network threads share. */
    @State(Scope.Benchmark)
    public static class Broker {
        CredentialStore store;
        MechanismRegistry registry;
        JwksValidator validator;
        long oauthNow;
        /**
         * RS256 tokens that the validator accepts, one per thread (wrapping around); not
         * {@code rs256-no-kid}, which the validator may check against more than one key.
         */
        List<String> tokens;

        /** Kafka's side: the credential served by one callback handler (as in {@link Scram}). */
        Scram.KafkaSide kafka;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            kafka = new Scram.KafkaSide(ScramMechanism.forMechanismName(SCRAM));

            store = new CredentialStore();
            store.setScram(USER, SCRAM, ScramCredentialUtils.credentialToString(kafka.credential));

            String json = Files.readString(vectors(), StandardCharsets.UTF_8);
            oauthNow = Long.parseLong(match(json, "\"now_ms\":\\s*(\\d+)"));
            String issuer = match(json, "\"issuer\":\\s*\"([^\"]+)\"");
            String audience = match(json, "\"audience\":\\s*\"([^\"]+)\"");
            validator = new JwksValidator(issuer, audience, 30_000);
            if (validator.setJwks(object(json, "\"jwks\":"), oauthNow) < 1) {
                throw new IllegalStateException("no usable key in the JWKS");
            }
            tokens = new ArrayList<>();
            Matcher m = Pattern.compile(
                    "\"name\":\\s*\"(rs256(?!-no-kid)[^\"]*)\",\\s*\"token\":\\s*\"([^\"]+)\",\\s*\"expect\":\\s*\"ok\"")
                    .matcher(json);
            while (m.find()) {
                tokens.add(m.group(2));
            }
            if (tokens.size() < 2) {
                throw new IllegalStateException("fewer than 2 valid RS256 tokens in " + vectors());
            }

            registry = new MechanismRegistry().addPasswordServers(store).addOAuthBearerServer(validator);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            registry.close();
            validator.close();
            store.close();
        }
    }

    /** One connection's client side of the SCRAM logins (ksasl's and the Java one). */
    @State(Scope.Thread)
    public static class ScramClient {
        MechanismRegistry clients;
        JavaScramClient javaClient;

        @Setup(Level.Trial)
        public void setup(Broker b) throws Exception {
            clients = new MechanismRegistry().addPasswordClients(USER, PASSWORD);
            javaClient = b.kafka.javaClient();
            // The first ksasl login derives and caches the client's keys; both logins checked.
            check(ksaslLogin(b, this).principalName());
            check(kafkaLogin(b, this));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            clients.close();
        }
    }

    /** One connection's OAUTHBEARER client: its own token, in the client's initial response. */
    @State(Scope.Thread)
    public static class OAuthClient {
        byte[] initialResponse;

        @Setup(Level.Trial)
        public void setup(Broker b, ThreadParams thread) throws Exception {
            String token = b.tokens.get(thread.getThreadIndex() % b.tokens.size());
            initialResponse = ("n,,\u0001auth=Bearer " + token + "\u0001\u0001").getBytes(StandardCharsets.UTF_8);
            // The first exchange validates the token (RSA) and caches the verdict.
            check(oauthLogin(b, this).principalName());
        }
    }

    /**
     * How much of an iteration each thread spent on a CPU: {@code cpuNs / wallNs} (both summed
     * over the threads) is 1.0 when every benchmark thread ran all the time. Below 1.0 either
     * the machine had no free core for it (other processes: compare with the one-thread row
     * and the Kafka rows of the same run) or the thread slept waiting for a lock. The window
     * is from the iteration's setup to its teardown, so it includes JMH's short
     * synchronisation phases at both ends.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Cpu {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        public long cpuNs;
        public long wallNs;
        private long cpu0;
        private long wall0;

        @Setup(Level.Iteration)
        public void start() {
            cpuNs = 0;
            wallNs = 0;
            cpu0 = THREADS.getCurrentThreadCpuTime();
            wall0 = System.nanoTime();
        }

        @TearDown(Level.Iteration)
        public void stop() {
            cpuNs = THREADS.getCurrentThreadCpuTime() - cpu0;
            wallNs = System.nanoTime() - wall0;
        }
    }

    /**
     * The control for {@code oauthCached_t2}: the same exchange, but each thread with its own
     * registry and validator (so its own verdict cache): nothing shared but the JVM and the
     * native library. If this scales and {@code oauthCached_t2} does not, the shared objects
     * are the cause. Each thread's cache gets its token at the first (warmup) exchange.
     */
    @State(Scope.Thread)
    public static class OwnBroker {
        JwksValidator validator;
        MechanismRegistry registry;
        Broker view;

        @Setup(Level.Trial)
        public void setup(Broker b) throws Exception {
            String json = Files.readString(vectors(), StandardCharsets.UTF_8);
            validator = new JwksValidator(match(json, "\"issuer\":\\s*\"([^\"]+)\""),
                    match(json, "\"audience\":\\s*\"([^\"]+)\""), 30_000);
            validator.setJwks(object(json, "\"jwks\":"), b.oauthNow);
            registry = new MechanismRegistry().addOAuthBearerServer(validator);
            view = new Broker();
            view.registry = registry;
            view.oauthNow = b.oauthNow;
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            registry.close();
            validator.close();
        }
    }

    static void check(String principal) {
        if (!USER.equals(principal)) {
            throw new IllegalStateException("not authenticated as " + USER + ": " + principal);
        }
    }

    // --- the operations -------------------------------------------------------------------------

    static AuthOutcome ksaslLogin(Broker b, ScramClient c) throws Exception {
        ClientExchange client = new ClientExchange(c.clients, SCRAM);
        byte[] clientFirst = client.start(NOW).message();
        ServerExchange server = new ServerExchange(b.registry, SCRAM);
        ServerStep first = server.step(clientFirst, NOW);
        byte[] clientFinal = client.step(first.message(), NOW).message();
        ServerStep done = server.step(clientFinal, NOW);
        AuthOutcome outcome = server.outcome();
        server.close();
        boolean verified = client.step(done.message(), NOW).done();
        client.close();
        if (done.kind() != ServerStep.Kind.DONE || !verified) {
            throw new IllegalStateException("login did not complete");
        }
        return outcome;
    }

    static String kafkaLogin(Broker b, ScramClient c) throws Exception {
        JavaScramClient client = c.javaClient;
        ScramSaslServer server = new ScramSaslServer(b.kafka.mechanism, Map.of(), b.kafka.callbacks);
        byte[] first = server.evaluateResponse(client.first());
        byte[] fin = server.evaluateResponse(client.finalMessage(first));
        String principal = server.getAuthorizationID();
        client.verify(fin);
        return principal;
    }

    static AuthOutcome oauthLogin(Broker b, OAuthClient c) throws Exception {
        ServerExchange server = new ServerExchange(b.registry, OAUTH);
        ServerStep done = server.step(c.initialResponse, b.oauthNow);
        AuthOutcome outcome = server.outcome();
        server.close();
        if (done.kind() != ServerStep.Kind.DONE) {
            throw new IllegalStateException("OAUTHBEARER exchange did not complete: " + done.kind());
        }
        return outcome;
    }

    // --- benchmarks -----------------------------------------------------------------------------

    @Benchmark
    @Threads(1)
    public AuthOutcome scram256_t1(Broker b, ScramClient c, Cpu cpu) throws Exception {
        return ksaslLogin(b, c);
    }

    @Benchmark
    @Threads(2)
    public AuthOutcome scram256_t2(Broker b, ScramClient c, Cpu cpu) throws Exception {
        return ksaslLogin(b, c);
    }

    @Benchmark
    @Threads(1)
    public AuthOutcome oauthCached_t1(Broker b, OAuthClient c, Cpu cpu) throws Exception {
        return oauthLogin(b, c);
    }

    @Benchmark
    @Threads(2)
    public AuthOutcome oauthCached_t2(Broker b, OAuthClient c, Cpu cpu) throws Exception {
        return oauthLogin(b, c);
    }

    @Benchmark
    @Threads(2)
    public AuthOutcome oauthUnshared_t2(OwnBroker b, OAuthClient c, Cpu cpu) throws Exception {
        return oauthLogin(b.view, c);
    }

    // The fixed part of every exchange alone: a new ServerExchange from the registry, then
    // close() (the native exchange created and freed, the Java handle registered with and
    // removed from the binding's Cleaner). From the shared registry with 1 and 2 threads, and
    // from a registry per thread.

    @Benchmark
    @Threads(1)
    public void exchangeNewClose_t1(Broker b, Cpu cpu) throws Exception {
        new ServerExchange(b.registry, OAUTH).close();
    }

    @Benchmark
    @Threads(2)
    public void exchangeNewClose_t2(Broker b, Cpu cpu) throws Exception {
        new ServerExchange(b.registry, OAUTH).close();
    }

    @Benchmark
    @Threads(2)
    public void exchangeNewCloseUnshared_t2(OwnBroker b, Cpu cpu) throws Exception {
        new ServerExchange(b.registry, OAUTH).close();
    }

    @Benchmark
    @Threads(1)
    public String kafkaScram256_t1(Broker b, ScramClient c, Cpu cpu) throws Exception {
        return kafkaLogin(b, c);
    }

    @Benchmark
    @Threads(2)
    public String kafkaScram256_t2(Broker b, ScramClient c, Cpu cpu) throws Exception {
        return kafkaLogin(b, c);
    }

    // --- the vectors file -----------------------------------------------------------------------

    static Path vectors() {
        String named = System.getProperty("ksasl.bench.jwt");
        if (named != null) {
            return Path.of(named);
        }
        for (String p : new String[] {"../../tests/vectors/jwt.json", "tests/vectors/jwt.json"}) {
            if (Files.isRegularFile(Path.of(p))) {
                return Path.of(p);
            }
        }
        throw new IllegalStateException("tests/vectors/jwt.json not found from " + Path.of("").toAbsolutePath()
                + " (set -Dksasl.bench.jwt)");
    }

    private static String match(String json, String regex) {
        Matcher m = Pattern.compile(regex).matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("not in the vectors: " + regex);
        }
        return m.group(1);
    }

    /** The JSON object that follows {@code key}, found by matching braces outside strings. */
    private static String object(String json, String key) {
        int start = json.indexOf('{', json.indexOf(key) + key.length());
        int depth = 0;
        boolean inString = false;
        for (int i = start; i < json.length(); i++) {
            char ch = json.charAt(i);
            if (inString) {
                if (ch == '\\') {
                    i++;
                } else if (ch == '"') {
                    inString = false;
                }
            } else if (ch == '"') {
                inString = true;
            } else if (ch == '{') {
                depth++;
            } else if (ch == '}' && --depth == 0) {
                return json.substring(start, i + 1);
            }
        }
        throw new IllegalStateException("unbalanced JSON after " + key);
    }
}
