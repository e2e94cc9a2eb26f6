package org.ksasl.bench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.ksasl.BenchProbe;
import org.ksasl.ClientConfig;
import org.ksasl.ClientConnection;
import org.ksasl.ClientEvent;
import org.ksasl.CredentialStore;
import org.ksasl.Gate;
import org.ksasl.KsaslException;
import org.ksasl.MechanismRegistry;
import org.ksasl.OAuthBearerToken;
import org.ksasl.Refresher;
import org.ksasl.ServerAction;
import org.ksasl.ServerConfig;
import org.ksasl.ServerConnection;
import org.ksasl.ServerOutput;
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
 * The per-call cost of the JNI binding, each next to the same work in plain Java, with the
 * binding's layers taken apart (see {@link BenchProbe}):
 *
 * <ul>
 *   <li>{@code gate*}: {@link ServerConnection#gate} on a PLAIN-authenticated connection
 *       (Metadata, session live: the Rust bench {@code kafka/gate});
 *   <li>{@code generation*}: {@link Refresher#generation}, the most trivial call;
 *   <li>{@code handleFrame*}: {@link ClientConnection#handleFrame} of an application response
 *       on an authenticated client connection (every response a client reads goes through
 *       it; the frame is handed back as is, so its size should not matter).
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PerCall {
    static final long T0 = 1_800_000_000_000L;
    static final short METADATA = 3;

    /** A PLAIN-authenticated client/server pair (600 s session), a refresher with a token, the baselines. */
    @State(Scope.Benchmark)
    public static class Conn {
        ServerConfig serverConfig;
        ClientConfig clientConfig;
        ServerConnection server;
        ClientConnection client;
        Refresher refresher;
        long serverHandle;
        long clientHandle;
        BenchProbe.WrappedJavaGate wrappedJavaGate;
        JavaBaselines.ServerConn javaServer;
        JavaBaselines.Refresher javaRefresher;
        JavaBaselines.ClientConn javaClient;
        // Arguments read from fields so the JIT cannot fold them.
        short apiKey = METADATA;
        long now = T0 + 1;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            try (CredentialStore store = new CredentialStore();
                    MechanismRegistry sr = new MechanismRegistry();
                    MechanismRegistry cr = new MechanismRegistry().addPasswordClients("alice", "alice-secret")) {
                store.addUser("alice", "alice-secret");
                sr.addPasswordServers(store);
                serverConfig = ServerConfig.builder(sr).setMaxReauthMs(600_000).build();
                clientConfig = ClientConfig.builder(cr, "PLAIN").setClientId("jmh").build();
            }
            server = new ServerConnection(serverConfig);
            client = new ClientConnection(clientConfig);
            authenticate(client, server, T0);
            if (server.gate(apiKey, now) != Gate.PROCESS) {
                throw new IllegalStateException("gate is not PROCESS");
            }
            refresher = new Refresher();
            refresher.poll(T0);
            refresher.setToken(OAuthBearerToken.unsecured("alice", 3600, null, T0), T0);
            if (refresher.generation() != 1) {
                throw new IllegalStateException("generation " + refresher.generation());
            }
            serverHandle = BenchProbe.handle(server);
            clientHandle = BenchProbe.handle(client);
            wrappedJavaGate = new BenchProbe.WrappedJavaGate(T0 + 600_000);
            javaServer = new JavaBaselines.ServerConn(T0 + 600_000);
            javaRefresher = new JavaBaselines.Refresher();
            javaClient = new JavaBaselines.ClientConn();
            byte[] probe = response(64);
            ClientEvent ev = client.handleFrame(probe, now);
            if (ev.kind() != ClientEvent.Kind.APPLICATION || ev.frame() != probe) {
                throw new IllegalStateException("handleFrame is not a pass-through: " + ev);
            }
            if (wrappedJavaGate.gate(apiKey, now) != Gate.PROCESS || javaServer.gate(apiKey, now) != Gate.PROCESS) {
                throw new IllegalStateException("baseline gate is not PROCESS");
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            server.close();
            client.close();
            refresher.close();
            serverConfig.close();
            clientConfig.close();
            wrappedJavaGate.close();
        }
    }

    /** An application response frame of {@code size} bytes (correlation id first). */
    @State(Scope.Benchmark)
    public static class Frame {
        @Param({"64", "65536", "1048576"})
        int size;
        byte[] frame;

        @Setup(Level.Trial)
        public void setup() {
            frame = response(size);
        }
    }

    /** A 64-byte response frame. */
    @State(Scope.Benchmark)
    public static class SmallFrame {
        byte[] frame = response(64);
    }

    static byte[] response(int size) {
        byte[] f = new byte[size];
        ByteBuffer.wrap(f).putInt(42);
        for (int i = 4; i < size; i++) {
            f[i] = (byte) i;
        }
        return f;
    }

    // --- ServerConnection.gate ------------------------------------------------------------

    /** The binding's call: the handle's guard (two atomic operations), lambda, JNI, Rust mutex, gate, the verdict's enum by number. */
    @Benchmark
    public Gate gate1_ksasl(Conn c) {
        return c.server.gate(c.apiKey, c.now);
    }

    /** The same without the enum lookup: the handle's guard + lambda + JNI entry. */
    @Benchmark
    public int gate2_ksaslWithoutEnum(Conn c) {
        return BenchProbe.gateViaWith(c.server, c.apiKey, c.now);
    }

    /** The native entry point alone: JNI transition, entry() (thread-local, catch_unwind), Rust mutex, gate. */
    @Benchmark
    public int gate3_nativeEntryOnly(Conn c) {
        return BenchProbe.nativeGate(c.serverHandle, c.apiKey, c.now);
    }

    /** An empty C JNI function with the same signature: the JNI transition alone (run.sh builds it). */
    @Benchmark
    public int gate4_jniEmptyC(Conn c) {
        JniFloor.require();
        return JniFloor.nop(c.serverHandle, c.apiKey, c.now);
    }

    /** The binding's exact Java wrapper (the NativeHandle guard, lambda, enum by number) around the rule in Java. */
    @Benchmark
    public Gate gate5_javaSameWrapper(Conn c) {
        return c.wrappedJavaGate.gate(c.apiKey, c.now);
    }

    /** Plain Java: a synchronized method applying the rule to fields. */
    @Benchmark
    public Gate gate6_javaPlain(Conn c) {
        return c.javaServer.gate(c.apiKey, c.now);
    }

    // --- Refresher.generation -----------------------------------------------------------------

    @Benchmark
    public long generation1_ksasl(Conn c) {
        return c.refresher.generation();
    }

    @Benchmark
    public long generation2_javaPlain(Conn c) {
        return c.javaRefresher.generation();
    }

    // --- ClientConnection.handleFrame (an application response: the frame comes back as is) ----

    @Benchmark
    public ClientEvent handleFrame1_ksasl(Conn c, Frame f) throws KsaslException {
        return c.client.handleFrame(f.frame, c.now);
    }

    /** The native entry point alone (the frame is not read). */
    @Benchmark
    public int handleFrame2_nativeEntryOnly64(Conn c, SmallFrame f) throws KsaslException {
        return BenchProbe.nativeClientHandleFrame(c.clientHandle, f.frame, c.now);
    }

    @Benchmark
    public ClientEvent handleFrame3_javaPlain64(Conn c, SmallFrame f) {
        return c.javaClient.handleFrame(f.frame, c.now);
    }

    // --- making a Java object in native code (what the binding's outcome/session/request calls do) ---

    /** A Boolean made in C as jni-rs does for a class named by string: FindClass + GetMethodID + NewObject per call. */
    @Benchmark
    public Object jniBox1_findClassEachCall() {
        JniFloor.require();
        return JniFloor.boxFindClass(true);
    }

    /** The same with the class and constructor looked up once (a cached global reference). */
    @Benchmark
    public Object jniBox2_cachedClass() {
        JniFloor.require();
        return JniFloor.boxCached(true);
    }

    // --- helpers --------------------------------------------------------------------------

    /** Runs the client's authentication against the server in memory (as the binding's tests' Wire.Pair). */
    static void authenticate(ClientConnection client, ServerConnection server, long now) throws KsaslException {
        client.start(now);
        for (int round = 0; round < 16 && !client.isReady(); round++) {
            for (byte[] f : frames(client.transmit())) {
                ServerOutput o = server.handleFrame(f, now);
                if (o.action() == ServerAction.FAIL_AT || o.action() == ServerAction.CLOSE_NOW) {
                    throw new IllegalStateException("authentication failed: " + o);
                }
                for (byte[] r : frames(o.frames())) {
                    client.handleFrame(r, now);
                }
            }
        }
        if (!client.isReady() || !server.isReady()) {
            throw new IllegalStateException("not authenticated");
        }
    }

    static List<byte[]> frames(byte[] data) {
        List<byte[]> out = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(data);
        while (b.remaining() >= 4) {
            byte[] f = new byte[b.getInt()];
            b.get(f);
            out.add(f);
        }
        return out;
    }
}
