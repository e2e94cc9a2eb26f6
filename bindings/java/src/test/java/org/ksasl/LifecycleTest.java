package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** close(), use after close, the Cleaner, and use from several threads. */
class LifecycleTest {
    static final long NOW = Wire.T0;

    interface Use {
        void run() throws Exception;
    }

    private static void assertClosedUse(NativeHandle h, Use use) {
        h.close();
        h.close(); // idempotent
        assertTrue(h.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, use::run);
        assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
    }

    @Test
    void everyClassRefusesUseAfterClose() throws Exception {
        CredentialStore store = new CredentialStore();
        store.addUser("u", "p");
        assertClosedUse(store, () -> store.addUser("u", "p"));

        MechanismRegistry reg = new MechanismRegistry().addPasswordClients("u", "p");
        MechanismRegistry servers = new MechanismRegistry().addPasswordServers();
        ClientExchange ca = new ClientExchange(reg, "PLAIN");
        ServerExchange sa = new ServerExchange(servers, "PLAIN");
        ClientConfig cc = ClientConfig.builder(reg, "PLAIN").build();
        ServerConfig sc = ServerConfig.builder(servers).build();
        ClientConnection conn = new ClientConnection(cc);
        ServerConnection sconn = new ServerConnection(sc);
        JwksValidator jwks = new JwksValidator();
        Refresher refresher = new Refresher();
        Tracker tracker = new Tracker(refresher);

        assertClosedUse(ca, () -> ca.start(NOW));
        assertClosedUse(sa, () -> sa.step(new byte[0], NOW));
        assertClosedUse(conn, () -> conn.start(NOW));
        assertClosedUse(sconn, () -> sconn.gate((short) 3, NOW));
        // Closing a registry or a config does not break objects made from it.
        ClientConnection second = new ClientConnection(cc);
        assertClosedUse(cc, () -> new ClientConnection(cc));
        second.start(NOW);
        assertTrue(second.transmit().length > 0);
        second.close();
        assertClosedUse(sc, () -> sc.metrics(NOW));
        assertClosedUse(reg, () -> reg.addPasswordClients("a", "b"));
        assertClosedUse(servers, () -> new ServerExchange(servers, "PLAIN"));
        assertClosedUse(jwks, () -> jwks.nextRefreshMs());
        assertClosedUse(tracker, () -> tracker.poll(NOW));
        assertClosedUse(refresher, () -> refresher.poll(NOW));
        // Using a closed object as an argument is also refused.
        assertThrows(IllegalStateException.class, () -> new MechanismRegistry().addPasswordServers(store));
        assertThrows(IllegalStateException.class, () -> new Tracker(refresher));
    }

    /**
     * Regression (this test asserted nothing): thousands of unclosed objects are freed by the
     * Cleaner once unreachable, without crashing or exhausting memory. The count of native
     * objects the Cleaner freed must grow by at least the objects made here.
     */
    @Test
    void forgottenObjectsAreFreedByTheCleaner() throws Exception {
        long before = NativeHandle.cleanedCount();
        int made = 0;
        for (int i = 0; i < 20_000; i++) {
            MechanismRegistry r = new MechanismRegistry().addPasswordClients("u" + i, "p");
            ClientConnection c = new ClientConnection(ClientConfig.builder(r, "SCRAM-SHA-256").build());
            c.start(NOW);
            assertTrue(c.transmit().length > 0);
            made += 3;
        }
        // The Cleaner runs on its own thread once the GC has found the objects unreachable.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (NativeHandle.cleanedCount() - before < made && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        assertTrue(NativeHandle.cleanedCount() - before >= made,
                "the Cleaner freed " + (NativeHandle.cleanedCount() - before) + " of " + made);
    }

    @Test
    void sharedObjectsServeManyThreads() throws Exception {
        int threads = 8;
        int logins = 50;
        try (CredentialStore store = new CredentialStore()) {
            for (int i = 0; i < threads; i++) {
                store.addUser("user" + i, "pw" + i);
            }
            try (MechanismRegistry servers = new MechanismRegistry().addPasswordServers(store);
                    ServerConfig sc = ServerConfig.builder(servers).setMaxReauthMs(60_000).build()) {
                ExecutorService pool = Executors.newFixedThreadPool(threads);
                CountDownLatch start = new CountDownLatch(1);
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    results.add(pool.submit(() -> {
                        start.await();
                        int ok = 0;
                        try (MechanismRegistry c = new MechanismRegistry().addPasswordClients("user" + id, "pw" + id);
                                ClientConfig cc = ClientConfig.builder(c, id % 2 == 0 ? "SCRAM-SHA-256" : "SCRAM-SHA-512")
                                        .build()) {
                            for (int i = 0; i < logins; i++) {
                                Wire.Pair p = new Wire.Pair(cc, sc);
                                p.client.start(NOW);
                                p.pump(NOW);
                                if (p.server.session().principal().equals("User:user" + id)) {
                                    ok++;
                                }
                                p.client.close();
                                p.server.close();
                            }
                        }
                        return ok;
                    }));
                }
                start.countDown();
                int total = 0;
                for (Future<Integer> f : results) {
                    total += f.get(120, TimeUnit.SECONDS);
                }
                pool.shutdown();
                assertEquals(threads * logins, total);
                assertEquals((double) threads * logins, sc.metrics(NOW).get("successful-authentication-total"));
            }
        }
    }

    @Test
    void anExchangeRunsOneCallAtATime() throws Exception {
        // An exchange is exclusive: while one thread's step runs (held inside the host
        // mechanism), another thread's call on the same exchange waits, and close() waits too.
        CountDownLatch inStep = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (MechanismRegistry r = new MechanismRegistry().addServerMechanism("X-HOLD", () -> (response, now) -> {
            inStep.countDown();
            assertTrue(release.await(30, TimeUnit.SECONDS));
            return HostServerStep.done("alice");
        })) {
            ServerExchange ex = new ServerExchange(r, "X-HOLD");
            ExecutorService pool = Executors.newFixedThreadPool(3);
            try {
                Future<ServerStep> step = pool.submit(() -> ex.step(new byte[0], NOW));
                assertTrue(inStep.await(30, TimeUnit.SECONDS));
                Future<AuthOutcome> other = pool.submit(ex::outcome);
                Future<String> message = pool.submit(ex::clientMessage);
                Thread.sleep(100);
                assertFalse(message.isDone(), "a second call ran during the step");
                release.countDown();
                assertEquals(ServerStep.Kind.DONE, step.get(30, TimeUnit.SECONDS).kind());
                assertEquals(null, message.get(30, TimeUnit.SECONDS));
                other.get(30, TimeUnit.SECONDS);
                assertEquals("User:alice", ex.outcome().principal());
            } finally {
                ex.close();
                pool.shutdown();
                assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aRegistryCountsCallsByThreadAndCloseWaitsForThem() throws Exception {
        // The registry's guard counts calls in cells by thread: close() must still wait for a
        // call in progress (here a factory held inside new ServerExchange), and refuse later ones.
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MechanismRegistry r = new MechanismRegistry().addServerMechanism("X-HOLD", () -> {
            inFactory.countDown();
            try {
                assertTrue(release.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return (response, now) -> HostServerStep.done("alice");
        });
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<ServerExchange> made = pool.submit(() -> new ServerExchange(r, "X-HOLD"));
            assertTrue(inFactory.await(30, TimeUnit.SECONDS));
            Future<?> closing = pool.submit(r::close);
            Thread.sleep(100);
            assertFalse(closing.isDone(), "close() returned during a call");
            assertTrue(r.isClosed());
            assertThrows(IllegalStateException.class, () -> new ServerExchange(r, "X-HOLD"));
            release.countDown();
            try (ServerExchange ex = made.get(30, TimeUnit.SECONDS)) {
                assertEquals(ServerStep.Kind.DONE, ex.step(new byte[0], NOW).kind());
            }
            closing.get(30, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            pool.shutdown();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
        // Threads making exchanges while another closes the registry: each either gets an
        // exchange or IllegalStateException.
        for (int round = 0; round < 20; round++) {
            MechanismRegistry shared = new MechanismRegistry().addPasswordServers();
            useWhileClosing(shared, () -> new ServerExchange(shared, "PLAIN").close());
        }
    }

    @Test
    void closeWhileOtherThreadsUseTheObjectIsSafe() throws Exception {
        // Threads hammer a shared refresher while another closes it: every call either works
        // or fails with IllegalStateException; nothing crashes.
        for (int round = 0; round < 20; round++) {
            Refresher r = new Refresher();
            r.poll(NOW);
            r.setToken(OAuthBearerToken.unsecured("u", 3600, null, NOW), NOW);
            useWhileClosing(r, () -> r.current(NOW));
        }
    }

    /**
     * 4 threads make 2000 calls each of {@code use} while this thread closes {@code target}:
     * every call either works or fails with IllegalStateException (any other failure fails the
     * test), and none is lost.
     */
    private static void useWhileClosing(NativeHandle target, Use use) throws Exception {
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<Void>> calls = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            calls.add(pool.submit(() -> {
                for (int i = 0; i < 2000; i++) {
                    try {
                        use.run();
                        ok.incrementAndGet();
                    } catch (IllegalStateException e) {
                        refused.incrementAndGet();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
                return null;
            }));
        }
        Thread.yield();
        target.close();
        pool.shutdown();
        assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
        for (Future<Void> f : calls) {
            f.get(); // an AssertionError of a thread fails the test here
        }
        assertEquals(8000, ok.get() + refused.get());
    }

    @Test
    void versionsMatchAndTheLibraryCameFromTheJar() {
        assertEquals(Ksasl.version(), Ksasl.nativeVersion());
        assertFalse(Ksasl.version().isEmpty());
        assertEquals("jar", Ksasl.nativeSource());
    }
}
