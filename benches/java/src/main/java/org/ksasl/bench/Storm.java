package org.ksasl.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.security.auth.Subject;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslServer;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.internals.SecurityManagerCompatibility;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SaslAuthenticationContext;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder;
import org.apache.kafka.common.security.authenticator.SaslInternalConfigs;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslServerProvider;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServerProvider;
import org.apache.kafka.common.utils.Utils;
import org.jose4j.json.JsonUtil;
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
 * A re-authentication storm on Apache Kafka's own broker-side classes (no ksasl code): the
 * counterpart of {@code benches/storm.rs}, with the same model, so that both print comparable
 * lines.
 *
 * <p>Each iteration's setup builds what a broker's listener shares between its connections
 * (SCRAM-SHA-256: {@link Scram.KafkaSide}'s credential of alice, 4096 iterations, and its
 * callback handler; OAUTHBEARER: an {@link OAuthBearerValidatorCallbackHandler} configured as a
 * broker configures it, JWKS from {@code DIR/jwks.json} as a {@code file:} URL, expected issuer
 * and audience from {@code DIR/meta.json}, every other SASL option at its default), then
 * authenticates {@code connections} connections and keeps per connection what a broker keeps
 * after an authentication ({@link Conn}). The broker's connections.max.reauth.ms is 1 hour, as
 * in the Rust bench. Clients: SCRAM connections all share one {@link JavaScramClient} (keys
 * derived once, a fresh nonce per exchange), as a client process shares its credential;
 * OAUTHBEARER connection i sends subject i's first token, then its second in the storm.
 *
 * <p>The benchmark (one invocation = one storm) re-authenticates every connection once, in the
 * order of simulated due times t_i (splitmix64 from seed 42, uniform over 10 s, sorted), as
 * KIP-368 does it: SaslHandshake v1, then SaslAuthenticate v2 round trips (two for SCRAM, one
 * for OAUTHBEARER with subject i's second token), a new {@link SaslServer} from
 * {@link Sasl#createSaslServer} (Kafka's providers), the principal compared with the previous
 * one, and the new session expiry stored. Every message is real Kafka wire bytes: the client
 * serializes its request with {@link RequestHeader} and the request class (size-prefixed, as
 * {@link AbstractRequest#toSend} writes it), the server parses it as the broker does
 * ({@link RequestHeader#parse}, {@link RequestContext#parseRequest}) and serializes its
 * response with {@link RequestContext#buildResponseSend}, which the client parses with
 * {@link AbstractResponse#parseResponse}. The server's pieces (c_i) and the client's (k_i)
 * are timed apart.
 *
 * <p>After each iteration, a single network thread serving every connection is simulated: re-
 * authentication i starts at s_i = max(t_i, end of the previous one) and holds the thread for
 * c_i; an application request the client holds meanwhile waits L_i = (s_i - t_i) + c_i + k_i.
 * Printed: mean c and k, L's p50, p99 and max (nearest rank), the thread's utilisation (sum of
 * c over 10 s), the heap held per connection (heap used after full GCs, before and after the
 * connections are made, over N) and the peak heap during the storm (sum of the heap pools'
 * peaks: it includes garbage and everything else the JVM holds, clients' data too).
 *
 * <p>Tokens: {@code benches/storm_tokens.py --count N} (directory {@code ../../target/storm}
 * from benches/java, or {@code -Dksasl.bench.storm=DIR}). The fork gets a fixed 4 GB heap.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
// Prepended so that run.sh's own -jvmArgsAppend (the JNI floor library) does not replace it.
@Fork(value = 1, jvmArgsPrepend = {"-Xms4g", "-Xmx4g"})
@Warmup(iterations = 1)
@Measurement(iterations = 3)
public class Storm {
    /** The spread of the due times: 10 s, in nanoseconds. */
    static final double SPREAD_NS = 10e9;
    /** The broker's connections.max.reauth.ms (1 hour; the Rust bench uses the same). */
    static final long MAX_REAUTH_MS = 3_600_000L;
    static final String ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls";
    static final String CLIENT_ID = "storm-client";
    static final SecurityProtocol PROTOCOL = SecurityProtocol.SASL_PLAINTEXT;

    // --- what the broker keeps ---------------------------------------------------------------

    /**
     * One authenticated connection as the broker holds it once authentication is over: the
     * {@link SaslServer} of the last (re-)authentication (Kafka's authenticator keeps it until
     * the next one), the principal, the mechanism and the session expiry (Kafka's
     * ReauthInfo.sessionExpirationTimeNanos, from the negotiated credential lifetime and
     * connections.max.reauth.ms). Not modelled: the KafkaChannel, the transport layer and its
     * buffers, the authenticator object itself, the selector's maps.
     */
    static final class Conn {
        final String id;
        String mechanism;
        SaslServer saslServer;
        KafkaPrincipal principal;
        long sessionLifetimeMs;
        long sessionExpiryNanos;

        Conn(String id) {
            this.id = id;
        }
    }

    /** What a broker's listener shares between its connections, for one mechanism. */
    static final class Broker {
        final String mechanism;
        final List<String> enabledMechanisms;
        final Map<String, ?> configs;
        final CallbackHandler callbacks;
        final AutoCloseable closeable;
        // The login Subject of the mechanism (empty here: SCRAM and OAUTHBEARER servers need nothing from it).
        final Subject subject = new Subject();
        final InetAddress address = InetAddress.getLoopbackAddress();
        final ListenerName listener = ListenerName.forSecurityProtocol(PROTOCOL);
        final DefaultKafkaPrincipalBuilder principalBuilder = new DefaultKafkaPrincipalBuilder(null, null);
        final Wire wire = new Wire();

        Broker(String mechanism, Map<String, ?> configs, CallbackHandler callbacks, AutoCloseable closeable) {
            this.mechanism = mechanism;
            this.enabledMechanisms = List.of(mechanism);
            this.configs = configs;
            this.callbacks = callbacks;
            this.closeable = closeable;
        }

        /** A SaslServer made as Kafka's SaslServerAuthenticator makes one (through the providers, as the Subject). */
        SaslServer newSaslServer() {
            SaslServer server = SecurityManagerCompatibility.get().callAs(subject,
                    () -> Sasl.createSaslServer(mechanism, "kafka", address.getHostName(), configs, callbacks));
            if (server == null) {
                throw new IllegalStateException("no SaslServer for " + mechanism + " (providers not registered?)");
            }
            return server;
        }

        KafkaPrincipal principal(SaslServer server) {
            return principalBuilder.build(new SaslAuthenticationContext(server, PROTOCOL, address, listener.value()));
        }
    }

    /**
     * The broker's side of one authentication or re-authentication of a connection (Kafka makes
     * a new SaslServerAuthenticator for each): takes request frames, returns response frames.
     */
    static final class ServerExchange {
        final Broker broker;
        final Conn conn;
        final boolean reauthentication;
        SaslServer saslServer;
        boolean complete;

        ServerExchange(Broker broker, Conn conn, boolean reauthentication) {
            this.broker = broker;
            this.conn = conn;
            this.reauthentication = reauthentication;
        }

        byte[] receive(byte[] frame) throws Exception {
            ByteBuffer payload = Wire.payload(frame);
            if (reauthentication && saslServer == null) {
                // The network thread reads the header of a request on an authenticated connection
                // first; a SaslHandshake there starts the re-authentication (and the new
                // authenticator reads it again).
                RequestHeader peek = RequestHeader.parse(payload.duplicate());
                if (peek.apiKey() != ApiKeys.SASL_HANDSHAKE) {
                    throw new IllegalStateException("re-authentication must begin with SaslHandshake, got " + peek.apiKey());
                }
            }
            RequestHeader header = RequestHeader.parse(payload);
            RequestContext context = new RequestContext(header, conn.id, broker.address, Optional.of(50_000),
                    KafkaPrincipal.ANONYMOUS, broker.listener, PROTOCOL, ClientInformation.EMPTY, false);
            AbstractRequest request = context.parseRequest(payload).request;
            AbstractResponse response;
            if (saslServer == null) {
                if (!(request instanceof SaslHandshakeRequest)) {
                    throw new IllegalStateException("expected SaslHandshake, got " + header.apiKey());
                }
                String mechanism = ((SaslHandshakeRequest) request).data().mechanism();
                if (!broker.enabledMechanisms.contains(mechanism)) {
                    throw new IllegalStateException("mechanism " + mechanism + " not enabled");
                }
                if (reauthentication && !mechanism.equals(conn.mechanism)) {
                    throw new IllegalStateException("mechanism changed on re-authentication: " + conn.mechanism
                            + " -> " + mechanism);
                }
                response = new SaslHandshakeResponse(new SaslHandshakeResponseData()
                        .setErrorCode(Errors.NONE.code()).setMechanisms(broker.enabledMechanisms));
                saslServer = broker.newSaslServer();
            } else {
                if (!(request instanceof SaslAuthenticateRequest) || complete) {
                    throw new IllegalStateException("unexpected " + header.apiKey() + (complete ? " after completion" : ""));
                }
                if (!header.isApiVersionSupported()) {
                    throw new IllegalStateException("unsupported SaslAuthenticate version " + header.apiVersion());
                }
                byte[] token = saslServer.evaluateResponse(
                        Utils.copyArray(((SaslAuthenticateRequest) request).data().authBytes()));
                long lifetimeMs = 0;
                if (saslServer.isComplete()) {
                    KafkaPrincipal principal = broker.principal(saslServer);
                    if (reauthentication && !conn.principal.equals(principal)) {
                        throw new IllegalStateException("principal changed on re-authentication: " + conn.principal
                                + " -> " + principal);
                    }
                    lifetimeMs = finish(principal);
                }
                response = new SaslAuthenticateResponse(new SaslAuthenticateResponseData()
                        .setErrorCode(Errors.NONE.code()).setAuthBytes(token == null ? new byte[0] : token)
                        .setSessionLifetimeMs(lifetimeMs));
            }
            return broker.wire.bytes(context.buildResponseSend(response));
        }

        /**
         * Session lifetime as Kafka computes it (the shorter of the credential's remaining
         * lifetime and connections.max.reauth.ms), then the connection's slot takes the new
         * server (the previous authenticator's server is disposed, as Kafka closes it).
         */
        private long finish(KafkaPrincipal principal) {
            long endMs = System.currentTimeMillis();
            long endNanos = System.nanoTime();
            Long credentialExpiryMs = (Long) saslServer.getNegotiatedProperty(
                    SaslInternalConfigs.CREDENTIAL_LIFETIME_MS_SASL_NEGOTIATED_PROPERTY_KEY);
            long lifetimeMs = credentialExpiryMs == null ? MAX_REAUTH_MS
                    : Math.max(0L, Math.min(credentialExpiryMs - endMs, MAX_REAUTH_MS));
            SaslServer previous = conn.saslServer;
            if (previous != null) {
                try {
                    previous.dispose();
                } catch (Exception e) {
                    throw new IllegalStateException("disposing the previous SaslServer: " + e, e);
                }
            }
            conn.mechanism = broker.mechanism;
            conn.saslServer = saslServer;
            conn.principal = principal;
            conn.sessionLifetimeMs = lifetimeMs;
            conn.sessionExpiryNanos = endNanos + lifetimeMs * 1_000_000L;
            complete = true;
            return lifetimeMs;
        }
    }

    // --- the client ----------------------------------------------------------------------------

    /** The SASL part of a client: the first token, then the answer to each challenge (null: done). */
    interface SaslSteps {
        byte[] initial() throws Exception;

        byte[] challenge(byte[] challenge) throws Exception;
    }

    /** SCRAM with the shared {@link JavaScramClient} (keys derived once): two round trips. */
    static final class ScramSteps implements SaslSteps {
        private final JavaScramClient client;
        private int round;

        ScramSteps(JavaScramClient client) {
            this.client = client;
        }

        @Override
        public byte[] initial() {
            return client.first();
        }

        @Override
        public byte[] challenge(byte[] challenge) throws Exception {
            if (round++ == 0) {
                return client.finalMessage(challenge);
            }
            client.verify(challenge);
            return null;
        }
    }

    /** OAUTHBEARER: the initial response with the token (RFC 7628 framing), one round trip. */
    static final class BearerSteps implements SaslSteps {
        private final String token;

        BearerSteps(String token) {
            this.token = token;
        }

        @Override
        public byte[] initial() {
            return ("n,,\u0001auth=Bearer " + token + "\u0001\u0001").getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public byte[] challenge(byte[] challenge) {
            if (challenge.length != 0) {
                // Kafka's server answers a refused token with a JSON error as the challenge.
                throw new IllegalStateException("the server refused the token: "
                        + new String(challenge, StandardCharsets.UTF_8));
            }
            return null;
        }
    }

    /** The client's side of one (re-)authentication over Kafka's request and response classes. */
    static final class ClientExchange {
        private final String mechanism;
        private final SaslSteps steps;
        private final Wire wire;
        private int correlation;
        private RequestHeader pending;
        private boolean handshaken;

        ClientExchange(String mechanism, SaslSteps steps, Wire wire, int correlation) {
            this.mechanism = mechanism;
            this.steps = steps;
            this.wire = wire;
            this.correlation = correlation;
        }

        byte[] start() throws IOException {
            return send(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism(mechanism))
                    .build((short) 1));
        }

        /** Reads a response frame; returns the next request frame, or null when authenticated. */
        byte[] receive(byte[] frame) throws Exception {
            AbstractResponse response = AbstractResponse.parseResponse(Wire.payload(frame), pending);
            if (!handshaken) {
                SaslHandshakeResponse r = (SaslHandshakeResponse) response;
                if (r.error() != Errors.NONE || !r.enabledMechanisms().contains(mechanism)) {
                    throw new IllegalStateException("SaslHandshake failed: " + r.error() + ", mechanisms "
                            + r.enabledMechanisms());
                }
                handshaken = true;
                return authenticate(steps.initial());
            }
            SaslAuthenticateResponse r = (SaslAuthenticateResponse) response;
            if (r.error() != Errors.NONE) {
                throw new IllegalStateException("SaslAuthenticate failed: " + r.error() + ": " + r.errorMessage());
            }
            byte[] next = steps.challenge(r.saslAuthBytes());
            if (next != null) {
                return authenticate(next);
            }
            if (r.sessionLifetimeMs() <= 0) {
                throw new IllegalStateException("no session lifetime in the last SaslAuthenticate response");
            }
            return null;
        }

        private byte[] authenticate(byte[] token) throws IOException {
            return send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(token))
                    .build((short) 2));
        }

        private byte[] send(AbstractRequest request) throws IOException {
            pending = new RequestHeader(request.apiKey(), request.version(), CLIENT_ID, correlation++);
            return wire.bytes(request.toSend(pending));
        }
    }

    // --- frames ----------------------------------------------------------------------------------

    /**
     * Collects what a {@link Send} writes (a 4-byte size, then header and body), as a socket
     * would take it; {@link #payload} strips the size again, as the receiving side's
     * NetworkReceive does.
     */
    static final class Wire implements TransferableChannel {
        private ByteBuffer out;

        byte[] bytes(Send send) throws IOException {
            long size = send.size();
            out = ByteBuffer.allocate(Math.toIntExact(size));
            while (!send.completed()) {
                if (send.writeTo(this) <= 0 && !send.completed()) {
                    throw new IOException("a Send wrote nothing");
                }
            }
            byte[] bytes = out.array();
            out = null;
            return bytes;
        }

        static ByteBuffer payload(byte[] frame) {
            ByteBuffer b = ByteBuffer.wrap(frame);
            int size = b.getInt();
            if (size != b.remaining()) {
                throw new IllegalStateException("frame size " + size + " but " + b.remaining() + " bytes follow");
            }
            return b.slice();
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            long n = 0;
            for (int i = offset; i < offset + length; i++) {
                n += srcs[i].remaining();
                out.put(srcs[i]);
            }
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs) {
            return write(srcs, 0, srcs.length);
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            out.put(src);
            return n;
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }

    // --- the state -------------------------------------------------------------------------------

    @State(Scope.Benchmark)
    public static class Setting {
        @Param({"SCRAM-SHA-256", "OAUTHBEARER"})
        String mechanism;

        @Param({"100000"})
        int connections;

        // Client side, for the whole trial.
        Path dir;
        Map<String, Object> meta;
        String[] tokens; // 2 per subject: first login, then the storm
        JavaScramClient scramClient;
        final Wire clientWire = new Wire();
        int correlation;
        double[] times;

        // Per iteration.
        Broker broker;
        Conn[] conns;
        long[] serverNs;
        long[] clientNs;
        long heldBytes;
        double setupS;
        double stormWallS;
        List<MemoryPoolMXBean> heapPools;

        @Setup(Level.Trial)
        public void trial() throws Exception {
            if (connections < 1) {
                throw new IllegalArgumentException("connections must be at least 1");
            }
            ScramSaslServerProvider.initialize();
            OAuthBearerSaslServerProvider.initialize();
            heapPools = new ArrayList<>();
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP && pool.isValid()) {
                    heapPools.add(pool);
                }
            }
            if (mechanism.equals("OAUTHBEARER")) {
                dir = Path.of(System.getProperty("ksasl.bench.storm", "../../target/storm")).toAbsolutePath().normalize();
                String hint = "; make them with benches/storm_tokens.py --count " + connections + " --out " + dir;
                if (!Files.isRegularFile(dir.resolve("meta.json"))) {
                    throw new IllegalStateException("no storm tokens in " + dir + hint);
                }
                meta = JsonUtil.parseJson(Files.readString(dir.resolve("meta.json")));
                long count = ((Number) meta.get("count")).longValue();
                if (count < connections) {
                    throw new IllegalStateException(dir + " holds tokens for " + count + " subjects, fewer than "
                            + connections + " connections" + hint);
                }
                tokens = new String[2 * connections];
                try (BufferedReader r = Files.newBufferedReader(dir.resolve("tokens.txt"), StandardCharsets.US_ASCII)) {
                    for (int i = 0; i < tokens.length; i++) {
                        String line = r.readLine();
                        if (line == null || line.isEmpty()) {
                            throw new IllegalStateException(dir.resolve("tokens.txt") + " ends at line " + (i + 1) + hint);
                        }
                        tokens[i] = line;
                    }
                }
            } else if (!mechanism.equals("SCRAM-SHA-256")) {
                throw new IllegalArgumentException("unknown mechanism " + mechanism);
            }
            times = stormTimes(connections);
        }

        @Setup(Level.Iteration)
        public void iteration() throws Exception {
            conns = null;
            serverNs = new long[connections];
            clientNs = new long[connections];
            broker = mechanism.equals("OAUTHBEARER") ? oauthBroker() : scramBroker();

            long before = settledHeapUsed();
            long t0 = System.nanoTime();
            Conn[] made = new Conn[connections];
            for (int i = 0; i < connections; i++) {
                made[i] = new Conn("127.0.0.1:9092-127.0.0.1:" + (10_000 + i % 50_000) + "-" + i);
                exchange(this, made[i], i, false);
                String expected = expectedPrincipal(i);
                if (!made[i].principal.getName().equals(expected)) {
                    throw new IllegalStateException("connection " + i + " authenticated as " + made[i].principal
                            + ", expected " + expected);
                }
            }
            conns = made;
            setupS = (System.nanoTime() - t0) / 1e9;
            heldBytes = settledHeapUsed() - before;
            for (MemoryPoolMXBean pool : heapPools) {
                pool.resetPeakUsage();
            }
        }

        private String expectedPrincipal(int i) {
            return mechanism.equals("OAUTHBEARER") ? String.format(Locale.ROOT, "svc-%06d", i) : Scram.USER;
        }

        private Broker scramBroker() throws Exception {
            // A new credential (fresh salt) each iteration; the one client shared by all
            // connections takes its keys, derived once.
            Scram.KafkaSide kafka = new Scram.KafkaSide(ScramMechanism.SCRAM_SHA_256);
            scramClient = kafka.javaClient();
            return new Broker(mechanism, Map.of(), kafka.callbacks, null);
        }

        private Broker oauthBroker() {
            String jwks = dir.resolve("jwks.json").toUri().toString();
            String allowed = System.getProperty(ALLOWED_URLS, "");
            if (!Arrays.asList(allowed.split(",")).contains(jwks)) {
                System.setProperty(ALLOWED_URLS, allowed.isEmpty() ? jwks : allowed + "," + jwks);
            }
            // The broker's listener config: every SASL option with its default, plus ours.
            Map<String, Object> props = new HashMap<>();
            props.put(SaslConfigs.SASL_OAUTHBEARER_JWKS_ENDPOINT_URL, jwks);
            props.put(SaslConfigs.SASL_OAUTHBEARER_EXPECTED_ISSUER, meta.get("issuer"));
            props.put(SaslConfigs.SASL_OAUTHBEARER_EXPECTED_AUDIENCE, meta.get("audience"));
            ConfigDef def = new ConfigDef();
            SaslConfigs.addClientSaslSupport(def);
            Map<String, Object> configs = def.parse(props);
            List<AppConfigurationEntry> jaas = List.of(new AppConfigurationEntry(OAuthBearerLoginModule.class.getName(),
                    AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, Map.of()));
            OAuthBearerValidatorCallbackHandler handler = new OAuthBearerValidatorCallbackHandler();
            handler.configure(configs, "OAUTHBEARER", jaas);
            return new Broker(mechanism, configs, handler, handler::close);
        }

        @TearDown(Level.Iteration)
        public void report() throws Exception {
            long peak = 0;
            for (MemoryPoolMXBean pool : heapPools) {
                peak += pool.getPeakUsage().getUsed();
            }
            int n = connections;
            // One network thread, in order of the due times.
            double free = 0;
            double[] latency = new double[n];
            double sumServer = 0;
            double sumClient = 0;
            for (int i = 0; i < n; i++) {
                double start = Math.max(times[i], free);
                free = start + serverNs[i];
                latency[i] = (start - times[i]) + serverNs[i] + clientNs[i];
                sumServer += serverNs[i];
                sumClient += clientNs[i];
            }
            Arrays.sort(latency);
            // JMH has printed "Iteration N: " without a line end: the storm line starts on its own.
            System.out.println();
            System.out.printf(Locale.ROOT,
                    "storm kafka %s connections=%d server_us=%.2f client_us=%.2f p50_us=%.1f p99_us=%.1f max_us=%.1f "
                            + "utilisation=%.3f held_bytes_per_conn=%d peak_heap_mb=%.1f%n",
                    mechanism, n, sumServer / n / 1e3, sumClient / n / 1e3, percentile(latency, 50) / 1e3,
                    percentile(latency, 99) / 1e3, percentile(latency, 100) / 1e3, sumServer / SPREAD_NS,
                    heldBytes / n, peak / (double) (1 << 20));
            System.out.printf(Locale.ROOT,
                    "  (setup %.1f s: %d first authentications, %.1f MiB held; storm %.2f s of wall time; "
                            + "peak = all heap pools' peaks summed, garbage and client data included)%n",
                    setupS, n, heldBytes / (double) (1 << 20), stormWallS);
            conns = null;
            if (broker != null && broker.closeable != null) {
                broker.closeable.close();
            }
            broker = null;
        }
    }

    // --- the model -------------------------------------------------------------------------------

    /** N due times in nanoseconds: splitmix64 from seed 42, top 53 bits as [0, 1), times 10 s, sorted. */
    static double[] stormTimes(int n) {
        long state = 42;
        double[] t = new double[n];
        for (int i = 0; i < n; i++) {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
            t[i] = (z >>> 11) * 0x1.0p-53 * SPREAD_NS;
        }
        Arrays.sort(t);
        return t;
    }

    /** Nearest-rank percentile {@code p} (0-100) of sorted values. */
    static double percentile(double[] sorted, double p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
    }

    /** Heap in use after two full collections, each followed by a short pause. */
    static long settledHeapUsed() throws InterruptedException {
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * Connection i's authentication (first: token line 2i) or re-authentication (line 2i+1),
     * with the server's and the client's nanoseconds recorded apart for re-authentications.
     */
    static void exchange(Setting s, Conn conn, int i, boolean reauthentication) {
        try {
            long mark = System.nanoTime();
            SaslSteps steps = s.mechanism.equals("OAUTHBEARER")
                    ? new BearerSteps(s.tokens[2 * i + (reauthentication ? 1 : 0)])
                    : new ScramSteps(s.scramClient);
            ClientExchange client = new ClientExchange(s.mechanism, steps, s.clientWire, s.correlation);
            byte[] out = client.start();
            long now = System.nanoTime();
            long clientNs = now - mark;
            long serverNs = 0;
            mark = now;
            ServerExchange server = new ServerExchange(s.broker, conn, reauthentication);
            while (true) {
                byte[] in = server.receive(out);
                now = System.nanoTime();
                serverNs += now - mark;
                mark = now;
                out = client.receive(in);
                now = System.nanoTime();
                clientNs += now - mark;
                mark = now;
                if (out == null) {
                    break;
                }
            }
            s.correlation = client.correlation;
            if (!server.complete) {
                throw new IllegalStateException("the client finished but the server did not");
            }
            if (reauthentication) {
                s.serverNs[i] = serverNs;
                s.clientNs[i] = clientNs;
            }
        } catch (Exception e) {
            throw new IllegalStateException(s.mechanism + " connection " + i + ": "
                    + (reauthentication ? "re-authentication" : "authentication") + " failed: " + e, e);
        }
    }

    /** One storm: every connection re-authenticates once, in the order of its due time. */
    @Benchmark
    public long storm(Setting s) {
        long t0 = System.nanoTime();
        Conn[] conns = s.conns;
        long expiry = 0;
        for (int i = 0; i < conns.length; i++) {
            exchange(s, conns[i], i, true);
            expiry ^= conns[i].sessionExpiryNanos;
        }
        s.stormWallS = (System.nanoTime() - t0) / 1e9;
        return expiry;
    }
}
