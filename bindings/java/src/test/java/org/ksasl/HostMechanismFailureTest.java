package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Misbehaving host mechanisms: each failure is a ksasl error with the host's message (or the
 * host's own ksasl code), the driver ends in a defined failed state, and the JVM survives.
 */
class HostMechanismFailureTest {
    static final long T0 = Wire.T0;
    static final String NAME = "X-FAULTY";

    enum Fault { NONE, THROW, THROW_KSASL, THROW_ERROR, NULL_MESSAGE, AFTER_END, NULL_STEP, EMPTY_ID }

    static final RuntimeException BOOM = new RuntimeException("token service unreachable");

    /** A two-step client: sends "hello", answers the challenge with "proof". */
    static final class Client implements HostClientMechanism {
        final Fault fault;
        int steps;
        boolean complete;

        Client(Fault fault) {
            this.fault = fault;
        }

        @Override
        public byte[] start(long nowMs) throws Exception {
            switch (fault) {
                case THROW: throw BOOM;
                case THROW_KSASL: throw KsaslException.of(400, "the keytab is unreadable");
                case THROW_ERROR: throw new AssertionError("host bug");
                case NULL_MESSAGE: return null;
                default: return "hello".getBytes(StandardCharsets.UTF_8);
            }
        }

        @Override
        public byte[] step(byte[] challenge, long nowMs) {
            steps++;
            if (steps == 1) {
                complete = fault != Fault.AFTER_END;
                return "proof".getBytes(StandardCharsets.UTF_8);
            }
            // Only AFTER_END gets here: it keeps talking after the server's verdict.
            return "more".getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public boolean isComplete() {
            return complete;
        }
    }

    /** The matching server: challenges once, then authenticates "alice". */
    static final class Server implements HostServerMechanism {
        final Fault fault;
        final AtomicInteger calls;

        Server(Fault fault, AtomicInteger calls) {
            this.fault = fault;
            this.calls = calls;
        }

        @Override
        public HostServerStep step(byte[] response, long nowMs) {
            calls.incrementAndGet();
            String r = new String(response, StandardCharsets.UTF_8);
            switch (fault) {
                case THROW: throw new RuntimeException("ldap down");
                case NULL_STEP: return null;
                default: break;
            }
            if (r.equals("hello")) {
                return HostServerStep.challenge("nonce".getBytes(StandardCharsets.UTF_8));
            }
            return HostServerStep.done(fault == Fault.EMPTY_ID ? "" : "alice");
        }
    }

    static Wire.Pair pair(Supplier<? extends HostClientMechanism> client, Supplier<? extends HostServerMechanism> server)
            throws KsaslException {
        try (MechanismRegistry cr = new MechanismRegistry().addClientMechanism(NAME, client);
                MechanismRegistry sr = new MechanismRegistry().addServerMechanism(NAME, server);
                ClientConfig cc = ClientConfig.builder(cr, NAME).build();
                ServerConfig sc = ServerConfig.builder(sr).setFailedAuthenticationDelayMs(100).build()) {
            return new Wire.Pair(cc, sc);
        }
    }

    static Wire.Pair clientFault(Fault f) throws KsaslException {
        return pair(() -> new Client(f), () -> new Server(Fault.NONE, new AtomicInteger()));
    }

    /** The client connection is failed, not stuck: nothing to send, a restart is refused. */
    static void assertClientFailed(Wire.Pair p) {
        assertEquals(0, p.client.transmit().length);
        assertFalse(p.client.isReady());
        assertNull(p.client.session());
        RuntimeException again = assertThrows(RuntimeException.class, () -> p.client.start(T0));
        assertInstanceOf(KsaslStateException.class, again, again.toString());
    }

    @Test
    void aClientMechanismThatThrowsFailsWithItsMessage() throws Exception {
        Wire.Pair p = clientFault(Fault.THROW);
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertEquals(325, e.code());
        assertEquals("the X-FAULTY mechanism's start failed: java.lang.RuntimeException: token service unreachable",
                e.getMessage());
        assertSame(BOOM, e.getCause());
        assertClientFailed(p);
        assertNull(p.server.session());
    }

    @Test
    void aKsaslExceptionFromAClientMechanismKeepsItsCode() throws Exception {
        Wire.Pair p = clientFault(Fault.THROW_KSASL);
        p.client.start(T0);
        KsaslCredentialException e = assertThrows(KsaslCredentialException.class, () -> p.pump(T0));
        assertEquals(400, e.code());
        assertEquals("INVALID_CREDENTIAL_FORMAT", e.codeName());
        assertEquals("the X-FAULTY mechanism's start failed: the keytab is unreadable", e.getMessage());
        assertInstanceOf(KsaslCredentialException.class, e.getCause());
        assertClientFailed(p);
    }

    @Test
    void anErrorFromAClientMechanismIsReportedToo() throws Exception {
        Wire.Pair p = clientFault(Fault.THROW_ERROR);
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertTrue(e.getMessage().endsWith("start failed: java.lang.AssertionError: host bug"), e.getMessage());
        assertInstanceOf(AssertionError.class, e.getCause());
        assertClientFailed(p);
    }

    @Test
    void aClientMechanismWithNothingToSendFails() throws Exception {
        Wire.Pair p = clientFault(Fault.NULL_MESSAGE);
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertEquals("the X-FAULTY mechanism's start set no message before it was done", e.getMessage());
        assertNull(e.getCause());
        assertClientFailed(p);
    }

    @Test
    void aClientMechanismTalkingAfterTheEndFails() throws Exception {
        // As with Kafka's client, a client mechanism that is not complete after the server's last
        // message sends another SaslAuthenticate; the authenticated server answers it with
        // ILLEGAL_SASL_STATE (as Kafka's request handlers do), and the client fails.
        Wire.Pair p = clientFault(Fault.AFTER_END);
        p.client.start(T0);
        byte[] data = p.client.transmit();
        KsaslException error = null;
        while (data.length > 0 && error == null) {
            byte[] out = new byte[0];
            for (byte[] f : Wire.frames(data)) {
                if (p.server.isReady()) {
                    assertEquals(Gate.PROCESS, p.server.gate(ByteBuffer.wrap(f).getShort(), T0));
                    out = Wire.concat(out, ServerConnection.illegalStateResponse(f));
                } else {
                    out = Wire.concat(out, p.server.handleFrame(f, T0).frames());
                }
            }
            for (byte[] f : Wire.frames(out)) {
                try {
                    p.client.handleFrame(f, T0);
                } catch (KsaslException e) {
                    error = e;
                }
            }
            data = p.client.transmit();
        }
        assertTrue(error != null, "the client must fail");
        assertEquals("ILLEGAL_SASL_STATE", error.codeName(), error.toString());
        assertTrue(p.server.isReady());
        assertClientFailed(p);
    }

    @Test
    void aClientFactoryThatThrowsOrReturnsNullFails() throws Exception {
        Wire.Pair p = pair(() -> {
            throw new IllegalStateException("no ticket");
        }, () -> new Server(Fault.NONE, new AtomicInteger()));
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("HOST_MECHANISM_FAILED", e.codeName());
        assertEquals("the X-FAULTY mechanism's factory failed: java.lang.IllegalStateException: no ticket", e.getMessage());
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertClientFailed(p);

        Wire.Pair q = pair(() -> null, () -> new Server(Fault.NONE, new AtomicInteger()));
        q.client.start(T0);
        e = assertThrows(KsaslAuthenticationException.class, () -> q.pump(T0));
        assertEquals("the X-FAULTY mechanism's factory returned null", e.getMessage());
        assertClientFailed(q);
    }

    /** A failed server connection refuses further frames and authenticates nobody. */
    static void assertServerFailed(Wire.Pair p) {
        KsaslStateException e = assertThrows(KsaslStateException.class,
                () -> p.server.handleFrame(new byte[] {0, 36, 0, 1, 0, 0, 0, 9, 0, 0}, T0 + 200));
        assertEquals("STEP_AFTER_FAILURE", e.codeName());
        assertFalse(p.server.isReady());
        assertNull(p.server.session());
    }

    /** Runs a server fault; returns the server's failing output after checking the client failed. */
    static ServerOutput serverFault(Supplier<? extends HostServerMechanism> server) throws Exception {
        Wire.Pair p = pair(() -> new Client(Fault.NONE), server);
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("SERVER_REJECTED_AUTHENTICATION", e.codeName(), e.toString());
        ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
        assertEquals(ServerAction.FAIL_AT, last.action(), last.toString());
        assertEquals(T0 + 100, last.deadlineMs());
        assertNull(p.server.session());
        assertFalse(p.server.isReady());
        assertServerFailed(p);
        return last;
    }

    @Test
    void aServerMechanismThatThrowsFailsTheConnection() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ServerOutput o = serverFault(() -> new Server(Fault.THROW, calls));
        assertEquals("HOST_MECHANISM_FAILED", o.error().codeName());
        assertEquals("the X-FAULTY mechanism's step failed: java.lang.RuntimeException: ldap down", o.error().getMessage());
        assertInstanceOf(RuntimeException.class, o.error().getCause());
        assertEquals("ldap down", o.error().getCause().getMessage());
        assertEquals(1, calls.get());
    }

    @Test
    void aServerMechanismReturningNullFails() throws Exception {
        ServerOutput o = serverFault(() -> new Server(Fault.NULL_STEP, new AtomicInteger()));
        assertEquals("HOST_MECHANISM_FAILED", o.error().codeName());
        assertEquals("the X-FAULTY mechanism's step returned null", o.error().getMessage());
    }

    @Test
    void aServerMechanismAuthenticatingNobodyFails() throws Exception {
        ServerOutput o = serverFault(() -> new Server(Fault.EMPTY_ID, new AtomicInteger()));
        assertEquals("HOST_MECHANISM_FAILED", o.error().codeName());
        assertTrue(o.error().getMessage().contains("the authorization id must not be empty"), o.error().getMessage());
    }

    /**
     * The server makes the mechanism while handling SaslHandshake; if that fails it closes the
     * connection without a response (as Kafka's broker does when it cannot create its
     * SaslServer), and the client learns it from the closed connection.
     */
    static ServerOutput serverFactoryFault(Supplier<? extends HostServerMechanism> server) throws Exception {
        Wire.Pair p = pair(() -> new Client(Fault.NONE), server);
        p.client.start(T0);
        p.pump(T0);
        assertEquals("FAIL_AT", p.closed);
        ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
        assertEquals(0, last.frames().length);
        assertServerFailed(p);
        KsaslException why = p.client.closed(T0 + 100);
        assertTrue(why.getMessage() != null && !why.getMessage().isEmpty());
        assertClientFailed(p);
        return last;
    }

    @Test
    void aServerFactoryThatThrowsOrReturnsNullFails() throws Exception {
        ServerOutput o = serverFactoryFault(() -> {
            throw new UnsupportedOperationException("no realm");
        });
        assertEquals("HOST_MECHANISM_FAILED", o.error().codeName());
        assertEquals("the X-FAULTY mechanism's factory failed: java.lang.UnsupportedOperationException: no realm",
                o.error().getMessage());
        assertInstanceOf(UnsupportedOperationException.class, o.error().getCause());
        o = serverFactoryFault(() -> null);
        assertEquals("the X-FAULTY mechanism's factory returned null", o.error().getMessage());
    }

    @Test
    void failedAuthenticatorsRefuseFurtherStepsWithoutCallingTheMechanism() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (MechanismRegistry r = new MechanismRegistry()
                .addClientMechanism(NAME, () -> new Client(Fault.THROW))
                .addServerMechanism(NAME, () -> new Server(Fault.THROW, calls));
                ClientExchange c = new ClientExchange(r, NAME);
                ServerExchange s = new ServerExchange(r, NAME)) {
            KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> c.start(T0));
            assertSame(BOOM, e.getCause());
            KsaslStateException again = assertThrows(KsaslStateException.class, () -> c.step(new byte[0], T0));
            assertEquals("STEP_AFTER_FAILURE", again.codeName());

            e = assertThrows(KsaslAuthenticationException.class, () -> s.step(new byte[0], T0));
            assertEquals("HOST_MECHANISM_FAILED", e.codeName());
            again = assertThrows(KsaslStateException.class, () -> s.step(new byte[0], T0));
            assertEquals("STEP_AFTER_FAILURE", again.codeName());
            assertEquals(1, calls.get());
            assertNull(s.outcome());
        }
    }

    @Test
    void manyThreadsDriveJavaMechanismsAtOnce() throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger ok = new AtomicInteger();
        for (int i = 0; i < 4; i++) {
            Fault f = i % 2 == 0 ? Fault.NONE : Fault.THROW;
            Thread t = new Thread(() -> {
                try {
                    for (int round = 0; round < 25; round++) {
                        Wire.Pair p = clientFault(f);
                        p.client.start(T0);
                        if (f == Fault.NONE) {
                            p.pump(T0);
                            assertEquals("User:alice", p.server.session().principal());
                            ok.incrementAndGet();
                        } else {
                            KsaslException e = assertThrows(KsaslException.class, () -> p.pump(T0));
                            assertSame(BOOM, e.getCause());
                        }
                        p.client.close();
                        p.server.close();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), failures);
        assertEquals(50, ok.get());
    }
}
