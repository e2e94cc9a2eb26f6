package org.ksasl;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * One Kafka server connection's SASL state. Before authentication the host hands every frame
 * to {@link #handleFrame} and writes what it returns; afterwards it asks {@link #gate} for
 * each request: {@link Gate#BEGIN_REAUTHENTICATION} sends the frame back to
 * {@link #handleFrame}, {@link Gate#CLOSE_EXPIRED} closes. Calls are serialized on the object.
 */
public final class ServerConnection extends NativeHandle {
    private static final Gate[] GATES = Gate.values();

    public ServerConnection(ServerConfig config) {
        super(create(config), Native::serverConnFree);
    }

    private static long create(ServerConfig config) {
        Objects.requireNonNull(config, "config");
        return config.with(Native::serverConnNew);
    }

    /**
     * Handles one authentication frame (without its length prefix). Failures come back as
     * {@link ServerOutput.Action#FAIL_AT} or {@link ServerOutput.Action#CLOSE_NOW}; only an
     * exception thrown by a credential or token callback is thrown (unchanged). (Failures of
     * host mechanisms, {@link HostServerMechanism}, are failures like the others.)
     *
     * @throws KsaslStateException if the connection has already failed ({@code STEP_AFTER_FAILURE}:
     *     the host should have closed it)
     */
    public ServerOutput handleFrame(byte[] frame, long nowMs) {
        Objects.requireNonNull(frame, "frame");
        long[] out = new long[2];
        Object[] err = new Object[1];
        byte[] frames = with(h -> Native.serverConnHandleFrame(h, frame, nowMs, out, err));
        return ServerOutput.of(frames, out, err);
    }

    /** {@link #handleFrame(byte[], long)} at the wall clock. */
    public ServerOutput handleFrame(byte[] frame) {
        return handleFrame(frame, System.currentTimeMillis());
    }

    /** The pending credential request, or {@code null}. */
    public CredentialRequest credentialRequest() {
        return Decode.request(with(Native::serverConnRequest));
    }

    /** Answers the pending credential request. */
    public ServerOutput provideCredential(CredentialAnswer answer, long nowMs) throws KsaslException {
        Objects.requireNonNull(answer, "answer");
        long[] out = new long[2];
        Object[] err = new Object[1];
        byte[] frames = with(h -> Native.serverConnProvide(h, answer.kind().ordinal(), answer.value(),
                answer.expiryMs(), answer.tokenOwner(), nowMs, out, err));
        return ServerOutput.of(frames, out, err);
    }

    /**
     * Handles a frame and, when a credential is needed, asks {@code lookup} without blocking
     * and answers with its result. The future fails with the lookup's exception if it fails.
     */
    public CompletableFuture<ServerOutput> handleFrameAsync(byte[] frame, AsyncCredentialLookup lookup,
            LongSupplier clock) {
        Objects.requireNonNull(lookup, "lookup");
        Objects.requireNonNull(clock, "clock");
        ServerOutput first = handleFrame(frame, clock.getAsLong());
        if (first.action() != ServerOutput.Action.NEED_CREDENTIAL) {
            return CompletableFuture.completedFuture(first);
        }
        CredentialRequest request = credentialRequest();
        return lookup.lookup(request).toCompletableFuture().thenApply(answer -> {
            try {
                ServerOutput second = provideCredential(answer, clock.getAsLong());
                return new ServerOutput(second.action(), concat(first.frames(), second.frames()),
                        second.deadlineMs(), second.error());
            } catch (KsaslException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = new byte[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** The verdict on one request with API key {@code apiKey} of an authenticated connection. */
    public Gate gate(short apiKey, long nowMs) {
        int g = with(h -> Native.serverConnGate(h, apiKey, nowMs));
        return GATES[g];
    }

    /** {@link #gate(short, long)} at the wall clock. */
    public Gate gate(short apiKey) {
        return gate(apiKey, System.currentTimeMillis());
    }

    /**
     * Kafka's ILLEGAL_SASL_STATE answer (with its length prefix) to a SaslHandshake or
     * SaslAuthenticate request that reaches the request handlers; {@code null} for other APIs.
     */
    public static byte[] illegalStateResponse(byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        Native.init();
        return Native.serverConnIllegalState(frame);
    }

    /** Whether authenticated with no exchange in progress. */
    public boolean isReady() {
        return with(Native::serverConnReady);
    }

    /** When the session expires, if ever: a host may close an idle expired connection then (Kafka closes on the next request). */
    public OptionalLong nextDeadline() {
        return Time.opt(with(Native::serverConnNextDeadline));
    }

    /** The session, or {@code null} before authentication. */
    public ServerSession session() {
        Object[] s = with(Native::serverConnSession);
        if (s == null) {
            return null;
        }
        long[] times = (long[]) s[3];
        AuthenticationOutcome o = new AuthenticationOutcome((String) s[0], (String) s[1], (String) s[2],
                Time.opt(times[2]), Decode.pairs((String[]) s[4]), (Boolean) s[5]);
        return new ServerSession(o, times[0], Time.opt(times[1]));
    }
}
