package org.ksasl;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Host mechanisms that answer later: an HMAC challenge-response whose client computes its
 * messages and whose server checks users and proofs on a thread pool, through
 * {@link CompletionStage}s. Driven by both connection drivers ({@code handleFrameAsync} and by
 * hand) and by the mechanism-level authenticators, on a virtual clock.
 */
class AsyncHostMechanismTest {
    static final long T0 = Wire.T0;
    static final String NAME = "X-HMAC-ASYNC";
    static final Map<String, byte[]> KEYS = Map.of(
            "alice", "alice-key".getBytes(UTF_8),
            "mallory", "mallory-key".getBytes(UTF_8));
    static final Map<String, Long> EXPIRY = Map.of("alice", T0 + 5_000, "mallory", T0 + 60_000);
    static final RuntimeException BOOM = new RuntimeException("token service unreachable");
    static final RuntimeException LDAP_DOWN = new RuntimeException("ldap down");

    enum ClientFault { NONE, THROW, THROW_KSASL, THROW_NOW, NULL_MESSAGE, NULL_STAGE }

    enum ServerFault { NONE, NESTED, THROW, NULL_STEP }

    ExecutorService pool;
    /** The threads the stages ran on. */
    final Set<Thread> workers = ConcurrentHashMap.newKeySet();
    /** Who the next client logs in as. */
    volatile String user;

    @BeforeEach
    void setUp() {
        pool = Executors.newFixedThreadPool(2);
        user = "alice";
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** Runs {@code work} on the pool, as a host's asynchronous call would. */
    <T> CompletableFuture<T> later(Supplier<T> work) {
        return CompletableFuture.supplyAsync(() -> {
            workers.add(Thread.currentThread());
            return work.get();
        }, pool);
    }

    static RuntimeException wrap(Exception e) {
        return new CompletionException(e);
    }

    /** Client: sends the user name, answers the challenge with its HMAC; both computed later. */
    final class AsyncClient implements AsyncHostClientMechanism {
        final String me = user;
        final ClientFault fault;
        volatile boolean answered;

        AsyncClient(ClientFault fault) {
            this.fault = fault;
        }

        @Override
        public CompletionStage<byte[]> start(long nowMs) {
            switch (fault) {
                case NULL_STAGE: return null;
                case THROW_NOW: throw new IllegalStateException("no ticket");
                case THROW: return later(() -> {
                    throw BOOM;
                });
                case THROW_KSASL: return later(() -> {
                    throw wrap(KsaslException.of(400, "the keytab is unreadable"));
                });
                case NULL_MESSAGE: return later(() -> null);
                default: return later(() -> me.getBytes(UTF_8));
            }
        }

        @Override
        public CompletionStage<byte[]> step(byte[] challenge, long nowMs) {
            answered = true;
            byte[] key = KEYS.getOrDefault(me, new byte[1]);
            return later(() -> HostMechanismTest.hmac(key, challenge));
        }

        @Override
        public boolean isComplete() {
            return answered;
        }
    }

    /** Server: challenges with the time once a directory knows the user, then checks the HMAC. */
    final class AsyncServer implements HostServerMechanism {
        final ServerFault fault;
        String who;
        byte[] challenge;

        AsyncServer(ServerFault fault) {
            this.fault = fault;
        }

        @Override
        public HostServerStep step(byte[] response, long nowMs) {
            if (who == null) {
                String name = new String(response, UTF_8);
                byte[] c = ByteBuffer.allocate(8).putLong(nowMs).array();
                who = name;
                challenge = c;
                return HostServerStep.later(later(() -> {
                    if (!KEYS.containsKey(name)) {
                        throw wrap(KsaslException.of(301, "unknown user"));
                    }
                    return HostServerStep.challenge(c);
                }));
            }
            String name = who;
            byte[] c = challenge;
            CompletableFuture<HostServerStep> verdict = later(() -> {
                switch (fault) {
                    case THROW: throw LDAP_DOWN;
                    case NULL_STEP: return null;
                    default: break;
                }
                if (!MessageDigest.isEqual(HostMechanismTest.hmac(KEYS.get(name), c), response)) {
                    throw wrap(KsaslException.of(300, "wrong HMAC"));
                }
                return HostServerStep.done(new byte[0], name, OptionalLong.of(EXPIRY.get(name)));
            });
            if (fault == ServerFault.NESTED) {
                // The first stage's answer is itself "later".
                return HostServerStep.later(later(() -> HostServerStep.later(verdict)));
            }
            return HostServerStep.later(verdict);
        }
    }

    ServerConfig serverConfig(long maxReauthMs, ServerFault fault) throws KsaslException {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry()) {
            store.addUser("bob", "bob-secret");
            r.addPasswordServers(store).addServerMechanism(NAME, () -> new AsyncServer(fault));
            assertTrue(r.serverMechanisms().containsAll(List.of(NAME, "PLAIN", "SCRAM-SHA-256")),
                    r.serverMechanisms().toString());
            return ServerConfig.builder(r).setMaxReauthMs(maxReauthMs).setFailedAuthenticationDelayMs(100).build();
        }
    }

    ClientConfig clientConfig(ClientFault fault) throws KsaslException {
        try (MechanismRegistry r = new MechanismRegistry().addAsyncClientMechanism(NAME, () -> new AsyncClient(fault))) {
            assertEquals(List.of(NAME), r.clientMechanisms());
            return ClientConfig.builder(r, NAME).setClientId("async-mech-test").build();
        }
    }

    /** The value of a future, or the exception it failed with (the test times out, never sleeps). */
    static <T> T await(Future<T> f) throws Exception {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception) {
                throw (Exception) e.getCause();
            }
            throw e;
        }
    }

    /** A client and a server connection in memory, both driven by handleFrameAsync. */
    static final class AsyncPair {
        final ClientConnection client;
        final ServerConnection server;
        final AtomicLong now = new AtomicLong(T0);
        final LongSupplier clock = now::get;
        final List<ClientEvent.Kind> events = new ArrayList<>();
        final List<Integer> responses = new ArrayList<>();
        final List<ServerOutput> serverOutputs = new ArrayList<>();
        /** Answers credential requests of the server (null: handleFrameAsync without a lookup). */
        AsyncCredentialLookup lookup;
        String closed;

        AsyncPair(ClientConfig c, ServerConfig s) {
            client = new ClientConnection(c);
            server = new ServerConnection(s);
        }

        void pump(long at, byte[] extra) throws Exception {
            now.set(at);
            byte[] toServer = Wire.concat(extra, client.transmit());
            while (toServer.length > 0) {
                byte[] toClient = new byte[0];
                for (byte[] f : Wire.frames(toServer)) {
                    if (server.isReady()) {
                        ByteBuffer h = ByteBuffer.wrap(f);
                        short key = h.getShort();
                        h.getShort();
                        int corr = h.getInt();
                        Gate g = server.gate(key, at);
                        if (g == Gate.CLOSE_EXPIRED) {
                            closed = "expired";
                            return;
                        }
                        if (g == Gate.PROCESS) {
                            toClient = Wire.concat(toClient, ByteBuffer.allocate(8).putInt(4).putInt(corr).array());
                            continue;
                        }
                    }
                    ServerOutput o = await(lookup == null
                            ? server.handleFrameAsync(f, clock)
                            : server.handleFrameAsync(f, lookup, clock));
                    assertNotEquals(ServerAction.PENDING, o.action());
                    serverOutputs.add(o);
                    toClient = Wire.concat(toClient, o.frames());
                    if (o.action() == ServerAction.FAIL_AT || o.action() == ServerAction.CLOSE_NOW) {
                        closed = o.action().name();
                    }
                }
                for (byte[] f : Wire.frames(toClient)) {
                    ClientEvent ev = await(client.handleFrameAsync(f, clock));
                    assertNotEquals(ClientEvent.Kind.PENDING, ev.kind());
                    if (ev.kind() == ClientEvent.Kind.APPLICATION) {
                        responses.add(ByteBuffer.wrap(ev.frame()).getInt());
                    } else if (ev.kind() != ClientEvent.Kind.CONTINUE) {
                        events.add(ev.kind());
                    }
                }
                if (closed != null) {
                    return;
                }
                toServer = client.transmit();
            }
        }

        void pump(long at) throws Exception {
            pump(at, new byte[0]);
        }
    }

    AsyncPair pair(ClientFault clientFault, ServerFault serverFault, long maxReauthMs) throws KsaslException {
        try (ServerConfig sc = serverConfig(maxReauthMs, serverFault); ClientConfig cc = clientConfig(clientFault)) {
            return new AsyncPair(cc, sc);
        }
    }

    // --- 1. authentication through the drivers -------------------------------------------------

    @Test
    void asyncMechanismsAuthenticateAndReauthenticateThroughHandleFrameAsync() throws Exception {
        try (ServerConfig sc = serverConfig(0, ServerFault.NONE); ClientConfig cc = clientConfig(ClientFault.NONE)) {
            AsyncPair p = new AsyncPair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            // Client start and step, server user check and proof check: all on the pool.
            assertFalse(workers.isEmpty());
            assertFalse(workers.contains(Thread.currentThread()));
            ServerSession ss = p.server.session();
            assertEquals("User:alice", ss.principal());
            assertEquals(NAME, ss.mechanism());
            assertEquals(5_000, ss.lifetimeMs());
            assertEquals(OptionalLong.of(T0 + 5_000), ss.expiryMs());
            assertEquals(OptionalLong.of(T0 + 5_000), ss.outcome().credentialExpiryMs());
            assertEquals(5_000, p.client.session().lifetimeMs());
            assertNull(p.client.pendingWork());
            assertNull(p.server.pendingWork());

            p.pump(T0 + 10, Wire.metadataRequest(1));
            assertEquals(List.of(1), p.responses);
            long due = p.client.nextDeadline().getAsLong();
            assertTrue(due >= T0 + 4_250 && due <= T0 + 4_750, "85-95 %: " + due);
            assertTrue(p.client.handleTimeout(due));
            p.pump(due);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED, ClientEvent.Kind.REAUTHENTICATED), p.events);
            assertNull(p.closed);
            assertEquals("User:alice", p.server.session().principal());
            // The key's expiry still bounds the new session.
            assertEquals(T0 + 5_000 - due, p.server.session().lifetimeMs());
            assertEquals(1.0, sc.metrics(due).get("successful-reauthentication-total"));
            p.client.close();
            p.server.close();
        }
    }

    @Test
    void aLaterStepCompletedWithAnotherLaterStepWaitsAgain() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NESTED, 0);
        p.client.start(T0);
        p.pump(T0);
        assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
        assertEquals("User:alice", p.server.session().principal());
    }

    @Test
    void principalChangeOnReauthenticationIsRefusedWithKafkasText() throws Exception {
        try (ServerConfig sc = serverConfig(3_000, ServerFault.NONE); ClientConfig cc = clientConfig(ClientFault.NONE)) {
            AsyncPair p = new AsyncPair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(3_000, p.server.session().lifetimeMs());
            user = "mallory";
            long due = p.client.nextDeadline().getAsLong();
            assertTrue(p.client.handleTimeout(due));
            KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(due));
            assertTrue(e.getMessage().contains(
                    "Cannot change principals during re-authentication from User.alice: User.mallory"),
                    e.getMessage());
            ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
            assertEquals(ServerAction.FAIL_AT, last.action());
            assertEquals("PRINCIPAL_CHANGED", last.error().codeName());
            assertEquals(1.0, sc.metrics(due).get("failed-reauthentication-total"));
        }
    }

    @Test
    void builtInsAuthenticateThroughTheSameAsyncCalls() throws Exception {
        // A store: PLAIN/SCRAM answer within the call.
        try (ServerConfig sc = serverConfig(0, ServerFault.NONE);
                ClientConfig cc = ConnectionTest.clientConfig("bob", "bob-secret", "SCRAM-SHA-256",
                        ReauthTiming.KAFKA)) {
            AsyncPair p = new AsyncPair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            assertEquals("SCRAM-SHA-256", p.server.session().mechanism());
        }
        // The pull form: one handleFrameAsync answers credential requests and pending work alike.
        AtomicInteger lookups = new AtomicInteger();
        try (MechanismRegistry r = new MechanismRegistry().addPasswordServers()
                        .addServerMechanism(NAME, () -> new AsyncServer(ServerFault.NONE));
                ServerConfig sc = ServerConfig.builder(r).build();
                ClientConfig scram = ConnectionTest.clientConfig("bob", "bob-secret", "SCRAM-SHA-512",
                        ReauthTiming.KAFKA);
                ClientConfig async = clientConfig(ClientFault.NONE)) {
            AsyncCredentialLookup lookup = request -> later(() -> {
                lookups.incrementAndGet();
                assertEquals("bob", request.username());
                return CredentialAnswer.password("bob-secret");
            });
            for (ClientConfig cc : List.of(scram, async)) {
                AsyncPair p = new AsyncPair(cc, sc);
                p.lookup = lookup;
                p.client.start(T0);
                p.pump(T0);
                assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            }
            assertEquals(1, lookups.get());
        }
    }

    /** Moves the client's frames to the server by hand; returns the last output. */
    static ServerOutput toServer(AsyncPair p, long now) {
        ServerOutput last = null;
        for (byte[] f : Wire.frames(p.client.transmit())) {
            last = p.server.handleFrame(f, now);
        }
        return last;
    }

    /** Drives the pair by hand up to the client's pending start; returns the handshake response. */
    static byte[] untilClientPending(AsyncPair p) throws Exception {
        p.client.start(T0);
        ServerOutput versions = toServer(p, T0);
        assertEquals(ClientEvent.Kind.CONTINUE, p.client.handleFrame(Wire.frames(versions.frames()).get(0), T0).kind());
        ServerOutput handshake = toServer(p, T0);
        byte[] response = Wire.frames(handshake.frames()).get(0);
        ClientEvent ev = p.client.handleFrame(response, T0);
        assertEquals(ClientEvent.Kind.PENDING, ev.kind());
        assertNull(ev.frame());
        assertEquals(0, p.client.transmit().length);
        return response;
    }

    @Test
    void connectionsResumedByHand() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NONE, 0);
        untilClientPending(p);
        CompletionStage<byte[]> work = p.client.pendingWork();
        assertNotNull(work);
        assertSame(work, p.client.pendingWork());
        assertEquals(ClientEvent.Kind.CONTINUE, p.client.resume(await(work.toCompletableFuture()), T0).kind());
        assertNull(p.client.pendingWork());

        ServerOutput o = toServer(p, T0);
        assertEquals(ServerAction.PENDING, o.action());
        assertEquals(0, o.frames().length);
        assertNull(o.error());
        CompletionStage<HostServerStep> check = p.server.pendingWork();
        HostServerStep challenge = await(check.toCompletableFuture());
        assertFalse(challenge.isDone());
        o = p.server.resume(challenge, T0);
        assertEquals(ServerAction.CONTINUE, o.action());
        assertNull(p.server.pendingWork());
        p.now.set(T0);
        ClientEvent ev = await(p.client.handleFrameAsync(Wire.frames(o.frames()).get(0), p.clock));
        assertEquals(ClientEvent.Kind.CONTINUE, ev.kind());
        p.pump(T0);
        assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
    }

    // --- 2. failures ---------------------------------------------------------------------------

    /** The client connection is failed, not stuck. */
    static void assertClientFailed(AsyncPair p) {
        assertEquals(0, p.client.transmit().length);
        assertFalse(p.client.isReady());
        assertNull(p.client.session());
        assertNull(p.client.pendingWork());
        assertThrows(KsaslStateException.class, () -> p.client.start(T0));
    }

    /** Runs a client fault; returns the exception the client's handleFrameAsync failed with. */
    KsaslException clientFault(ClientFault f) throws Exception {
        AsyncPair p = pair(f, ServerFault.NONE, 0);
        p.client.start(T0);
        KsaslException e = assertThrows(KsaslException.class, () -> p.pump(T0));
        assertClientFailed(p);
        assertNull(p.server.session());
        return e;
    }

    @Test
    void aClientStageFailingWithAnExceptionFailsWithItsMessage() throws Exception {
        KsaslException e = clientFault(ClientFault.THROW);
        assertInstanceOf(KsaslAuthenticationException.class, e);
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertEquals(325, e.code());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer failed: java.lang.RuntimeException: token service unreachable",
                e.getMessage());
        assertSame(BOOM, e.getCause());
    }

    @Test
    void aClientStageFailingWithAKsaslExceptionKeepsItsCode() throws Exception {
        KsaslException e = clientFault(ClientFault.THROW_KSASL);
        assertInstanceOf(KsaslCredentialException.class, e);
        assertEquals(400, e.code());
        assertEquals("INVALID_CREDENTIAL_FORMAT", e.codeName());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer failed: the keytab is unreadable", e.getMessage());
        assertInstanceOf(KsaslCredentialException.class, e.getCause());
    }

    @Test
    void aClientStageWithNoMessageBeforeCompletionFails() throws Exception {
        KsaslException e = clientFault(ClientFault.NULL_MESSAGE);
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer set no message before it was done",
                e.getMessage());
        assertNull(e.getCause());
    }

    @Test
    void aClientMechanismWithoutAStageOrThrowingAtOnceFails() throws Exception {
        KsaslException e = clientFault(ClientFault.NULL_STAGE);
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertEquals("the X-HMAC-ASYNC mechanism's start returned null", e.getMessage());
        e = clientFault(ClientFault.THROW_NOW);
        assertEquals("the X-HMAC-ASYNC mechanism's start failed: java.lang.IllegalStateException: no ticket", e.getMessage());
        assertInstanceOf(IllegalStateException.class, e.getCause());
    }

    /** Runs a server fault; returns the server's failing output after checking the client failed. */
    ServerOutput serverFault(ServerFault f) throws Exception {
        AsyncPair p = pair(ClientFault.NONE, f, 0);
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("SERVER_REJECTED_AUTHENTICATION", e.codeName(), e.toString());
        ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
        assertEquals(ServerAction.FAIL_AT, last.action(), last.toString());
        assertEquals(T0 + 100, last.deadlineMs());
        // Kafka's generic text for the client, not the host's reason.
        assertFalse(e.getMessage().contains("ldap"), e.getMessage());
        assertNull(p.server.session());
        assertNull(p.server.pendingWork());
        assertFalse(p.server.isReady());
        return last;
    }

    @Test
    void aServerStageFailingWithAnExceptionFailsTheConnection() throws Exception {
        ServerOutput o = serverFault(ServerFault.THROW);
        assertEquals("HOST_MECHANISM_FAILED", o.error().codeName());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer failed: java.lang.RuntimeException: ldap down", o.error().getMessage());
        assertSame(LDAP_DOWN, o.error().getCause());
    }

    @Test
    void aServerStageFailingWithAKsaslExceptionKeepsItsCode() throws Exception {
        user = "eve"; // unknown to the server's directory
        ServerOutput o = serverFault(ServerFault.NONE);
        assertEquals("UNKNOWN_USER", o.error().codeName());
        assertEquals(301, o.error().code());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer failed: unknown user", o.error().getMessage());
    }

    @Test
    void aServerStageCompletingWithNullFails() throws Exception {
        ServerOutput o = serverFault(ServerFault.NULL_STEP);
        assertEquals("HOST_MECHANISM_FAILED", o.error().codeName());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer returned null", o.error().getMessage());
    }

    @Test
    void resumeWithErrorUnwrapsTheFuturesWrappers() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NONE, 0);
        untilClientPending(p);
        p.client.resume(await(p.client.pendingWork().toCompletableFuture()), T0);
        assertEquals(ServerAction.PENDING, toServer(p, T0).action());
        ServerOutput o = p.server.resumeWithError(
                new CompletionException(new ExecutionException(KsaslException.of(300, "wrong HMAC"))), T0);
        assertEquals(ServerAction.FAIL_AT, o.action());
        assertEquals("INVALID_CREDENTIALS", o.error().codeName());
        assertEquals("the X-HMAC-ASYNC mechanism's late answer failed: wrong HMAC", o.error().getMessage());
        assertTrue(o.frames().length > 0, "Kafka's failure response");

        AsyncPair q = pair(ClientFault.NONE, ServerFault.NONE, 0);
        untilClientPending(q);
        KsaslException e = assertThrows(KsaslException.class,
                () -> q.client.resumeWithError(new ExecutionException(BOOM), T0));
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertSame(BOOM, e.getCause());
        assertClientFailed(q);
    }

    @Test
    void aFailedStageDuringReauthenticationKeepsTheSessionUnderTheRetryPolicy() throws Exception {
        AtomicInteger made = new AtomicInteger();
        try (ServerConfig sc = serverConfig(0, ServerFault.NONE);
                MechanismRegistry r = new MechanismRegistry().addAsyncClientMechanism(NAME,
                        () -> new AsyncClient(made.incrementAndGet() == 1 ? ClientFault.NONE : ClientFault.THROW));
                ClientConfig cc = ClientConfig.builder(r, NAME).setReauthRetryMs(200).build()) {
            AsyncPair p = new AsyncPair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            long due = p.client.nextDeadline().getAsLong();
            assertTrue(p.client.handleTimeout(due));
            p.now.set(due);
            List<ClientEvent> seen = new ArrayList<>();
            byte[] toServer = p.client.transmit();
            while (toServer.length > 0) {
                for (byte[] f : Wire.frames(toServer)) {
                    ServerOutput o = await(p.server.handleFrameAsync(f, p.clock));
                    for (byte[] g : Wire.frames(o.frames())) {
                        seen.add(await(p.client.handleFrameAsync(g, p.clock)));
                    }
                }
                toServer = p.client.transmit();
            }
            ClientEvent last = seen.get(seen.size() - 1);
            assertEquals(ClientEvent.Kind.REAUTH_FAILED, last.kind());
            assertEquals("HOST_MECHANISM_FAILED", last.error().codeName());
            assertSame(BOOM, last.error().getCause());
            assertTrue(last.retryAtMs().isPresent());
            assertNull(p.client.pendingWork());
            assertTrue(p.client.isReady());
            assertEquals(5_000, p.client.session().lifetimeMs());
        }
    }

    @Test
    void resumingWhenNothingIsPendingIsRefusedAndChangesNothing() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NONE, 0);
        KsaslStateException e = assertThrows(KsaslStateException.class, () -> p.client.resume(new byte[0], T0));
        assertEquals("WRONG_STATE", e.codeName());
        assertThrows(KsaslStateException.class, () -> p.client.resumeWithError(BOOM, T0));
        e = assertThrows(KsaslStateException.class, () -> p.server.resume(HostServerStep.done("alice"), T0));
        assertEquals("WRONG_STATE", e.codeName());
        assertThrows(KsaslStateException.class, () -> p.server.resumeWithError(LDAP_DOWN, T0));
        assertNull(p.client.pendingWork());
        assertNull(p.server.pendingWork());

        p.client.start(T0);
        p.pump(T0);
        assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
        assertThrows(KsaslStateException.class, () -> p.client.resume(null, T0 + 1));
        assertThrows(KsaslStateException.class, () -> p.server.resume(null, T0 + 1));
        assertTrue(p.client.isReady());
        assertTrue(p.server.isReady());
        assertEquals("User:alice", p.server.session().principal());
    }

    @Test
    void aSaslFrameWhileTheClientMechanismWorksFailsTheClient() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NONE, 0);
        byte[] handshake = untilClientPending(p);
        KsaslProtocolException e = assertThrows(KsaslProtocolException.class, () -> p.client.handleFrame(handshake, T0));
        assertEquals("CORRELATION_MISMATCH", e.codeName());
        assertClientFailed(p);
        assertThrows(KsaslStateException.class, () -> p.client.resume(new byte[0], T0));
    }

    @Test
    void aFrameWhileTheServerMechanismWorksIsRefusedAndTheExchangeStillWaits() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NONE, 0);
        untilClientPending(p);
        p.client.resume(await(p.client.pendingWork().toCompletableFuture()), T0);
        byte[] request = p.client.transmit();
        byte[] frame = Wire.frames(request).get(0);
        assertEquals(ServerAction.PENDING, p.server.handleFrame(frame, T0).action());
        CompletionStage<HostServerStep> work = p.server.pendingWork();
        KsaslStateException e = assertThrows(KsaslStateException.class, () -> p.server.handleFrame(frame, T0));
        assertEquals("WRONG_STATE", e.codeName());
        assertSame(work, p.server.pendingWork());
        ServerOutput o = p.server.resume(await(work.toCompletableFuture()), T0);
        assertEquals(ServerAction.CONTINUE, o.action());
        await(p.client.handleFrameAsync(Wire.frames(o.frames()).get(0), p.clock));
        p.pump(T0);
        assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
    }

    @Test
    void closingAConnectionWithPendingWorkReleasesIt() throws Exception {
        AsyncPair p = pair(ClientFault.NONE, ServerFault.NONE, 0);
        untilClientPending(p);
        WeakReference<CompletionStage<byte[]>> work = new WeakReference<>(p.client.pendingWork());
        await(work.get().toCompletableFuture());
        p.client.close();
        for (int i = 0; i < 20 && work.get() != null; i++) {
            System.gc();
        }
        assertNull(work.get(), "the native side still holds the stage");
    }

    // --- 3. the mechanism-level authenticators ----------------------------------------------------

    @Test
    void authenticatorsReportAndResumePendingWork() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry()
                .addAsyncClientMechanism(NAME, () -> new AsyncClient(ClientFault.NONE))
                .addServerMechanism(NAME, () -> new AsyncServer(ServerFault.NESTED));
                ClientExchange c = new ClientExchange(r, NAME);
                ServerExchange s = new ServerExchange(r, NAME)) {
            assertNull(c.pendingWork());
            assertEquals("WRONG_STATE", assertThrows(KsaslStateException.class, () -> c.resume(new byte[0])).codeName());

            ClientStep first = c.start(T0);
            assertTrue(first.pending());
            assertFalse(first.done());
            assertNull(first.message());
            CompletionStage<byte[]> work = c.pendingWork();
            assertSame(work, c.pendingWork());
            // The exchange waits: a challenge now is refused and changes nothing.
            KsaslStateException e = assertThrows(KsaslStateException.class, () -> c.step(new byte[1], T0));
            assertEquals("WRONG_STATE", e.codeName());
            ClientStep hello = c.resume(await(work.toCompletableFuture()));
            assertEquals(new ClientStep(hello.message(), false), hello);
            assertArrayEquals("alice".getBytes(UTF_8), hello.message());
            assertNull(c.pendingWork());

            ServerStep user = s.step(hello.message(), T0);
            assertEquals(ServerStep.Kind.PENDING, user.kind());
            assertNull(user.message());
            assertThrows(KsaslStateException.class, () -> s.step(new byte[0], T0));
            ServerStep challenge = s.resume(await(s.pendingWork().toCompletableFuture()), T0);
            assertEquals(ServerStep.Kind.CHALLENGE, challenge.kind());
            assertNull(s.pendingWork());

            assertTrue(c.step(challenge.message(), T0).pending());
            ClientStep proof = c.resume(await(c.pendingWork().toCompletableFuture()));
            assertTrue(proof.done());
            assertFalse(proof.pending());
            assertTrue(c.isComplete());

            assertEquals(ServerStep.Kind.PENDING, s.step(proof.message(), T0).kind());
            // NESTED: the stage's answer is another later step, pending again with a new stage.
            CompletionStage<HostServerStep> outer = s.pendingWork();
            ServerStep again = s.resume(await(outer.toCompletableFuture()), T0);
            assertEquals(ServerStep.Kind.PENDING, again.kind());
            assertNotSame(outer, s.pendingWork());
            ServerStep done = s.resume(await(s.pendingWork().toCompletableFuture()), T0);
            assertEquals(ServerStep.Kind.DONE, done.kind());
            AuthOutcome o = s.outcome();
            assertEquals("User:alice", o.principal());
            assertEquals(OptionalLong.of(T0 + 5_000), o.credentialExpiryMs());
            assertEquals("WRONG_STATE",
                    assertThrows(KsaslStateException.class, () -> s.resume(HostServerStep.done("alice"), T0)).codeName());
        }
    }

    @Test
    void authenticatorsFailOnAStagesException() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry()
                .addAsyncClientMechanism(NAME, () -> new AsyncClient(ClientFault.NONE))
                .addServerMechanism(NAME, () -> new AsyncServer(ServerFault.NONE));
                ClientExchange c = new ClientExchange(r, NAME);
                ServerExchange s = new ServerExchange(r, NAME)) {
            assertTrue(c.start(T0).pending());
            KsaslException e = assertThrows(KsaslException.class,
                    () -> c.resumeWithError(new CompletionException(BOOM)));
            assertEquals("HOST_MECHANISM_FAILED", e.codeName());
            assertSame(BOOM, e.getCause());
            assertNull(c.pendingWork());
            assertEquals("STEP_AFTER_FAILURE",
                    assertThrows(KsaslStateException.class, () -> c.step(new byte[0], T0)).codeName());

            assertEquals(ServerStep.Kind.PENDING, s.step("alice".getBytes(UTF_8), T0).kind());
            e = assertThrows(KsaslException.class, () -> s.resumeWithError(LDAP_DOWN, T0));
            assertEquals("the X-HMAC-ASYNC mechanism's late answer failed: java.lang.RuntimeException: ldap down", e.getMessage());
            assertSame(LDAP_DOWN, e.getCause());
            assertFalse(s.clientMessage().contains("ldap"), s.clientMessage());
            assertFalse(s.clientMessage().isEmpty());
            assertNull(s.outcome());
            assertThrows(KsaslStateException.class, () -> s.step(new byte[0], T0));
            assertThrows(KsaslStateException.class, () -> s.resume(HostServerStep.done("alice"), T0));
        }
    }

    @Test
    void apiChecks() {
        CompletableFuture<HostServerStep> f = new CompletableFuture<>();
        HostServerStep later = HostServerStep.later(f);
        assertTrue(later.isLater());
        assertFalse(later.isDone());
        assertSame(f, later.work());
        assertNull(later.challenge());
        assertNull(later.message());
        assertNull(later.authorizationId());
        assertEquals(later, HostServerStep.later(f));
        assertNotEquals(later, HostServerStep.later(new CompletableFuture<>()));
        assertTrue(later.toString().startsWith("HostServerStep.later("), later.toString());
        assertFalse(HostServerStep.challenge(new byte[0]).isLater());
        assertNull(HostServerStep.done("x").work());
        assertThrows(NullPointerException.class, () -> HostServerStep.later(null));
        assertEquals("ClientStep[pending]", new ClientStep(null, false, true).toString());
        try (MechanismRegistry r = new MechanismRegistry()) {
            assertThrows(KsaslArgumentException.class,
                    () -> r.addAsyncClientMechanism("bad name!", () -> new AsyncClient(ClientFault.NONE)));
            assertThrows(NullPointerException.class, () -> r.addAsyncClientMechanism(NAME, null));
            assertEquals(List.of(), r.clientMechanisms());
        }
    }
}
