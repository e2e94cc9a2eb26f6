package org.ksasl;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

/**
 * One Kafka server connection's SASL state. Before authentication the host hands every frame
 * to {@link #handleFrame} and writes what it returns; afterwards it asks {@link #gate} for
 * each request: {@link Gate#BEGIN_REAUTHENTICATION} sends the frame back to
 * {@link #handleFrame}, {@link Gate#CLOSE_EXPIRED} closes. Calls are serialized on the object.
 *
 * <p>The exchange stops for the host in two ways: {@link ServerOutput.Action#NEED_CREDENTIAL}
 * (answer with {@link #provideCredential}) and {@link ServerOutput.Action#PENDING}, when a host
 * mechanism answers {@link HostServerStep#later} (wait for {@link #pendingWork()}, then
 * {@link #resume} or {@link #resumeWithError}). {@link #handleFrameAsync} does both without
 * blocking. While the exchange waits, hand it no frames: Kafka clients send the next SASL
 * request only after the response to the last one.
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
     *     the host should have closed it), or waits for a credential or a mechanism's pending work
     *     ({@code WRONG_STATE}: the frame is refused, the exchange still waits and can be
     *     continued; a client that does not wait for responses should be disconnected)
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
     * After {@link ServerOutput.Action#PENDING}: the stage the mechanism's
     * {@link HostServerStep#later} step waits for; otherwise {@code null}.
     *
     * @return the stage of the mechanism's step, or {@code null} when nothing is pending
     */
    @SuppressWarnings("unchecked")
    public CompletionStage<HostServerStep> pendingWork() {
        return (CompletionStage<HostServerStep>) with(Native::serverConnPendingWork);
    }

    /**
     * Continues after {@link ServerOutput.Action#PENDING} with the step the stage completed
     * with, taken as if the mechanism had returned it (another {@link HostServerStep#later}
     * gives {@code PENDING} again; {@code null} fails the exchange). Failures come back as
     * {@link ServerOutput.Action#FAIL_AT}, as from {@link #handleFrame}.
     *
     * @param step the stage's value
     * @param nowMs the current time, ms since the epoch
     * @return what to do next
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ServerOutput resume(HostServerStep step, long nowMs) {
        return resume(step, null, nowMs);
    }

    /**
     * Continues after {@link ServerOutput.Action#PENDING} with the exception the stage completed
     * with: the exchange fails as if the mechanism had thrown it ({@link ServerOutput.Action#FAIL_AT}
     * with Kafka's authentication-failed response; the output's error keeps a
     * {@link KsaslError}'s code, anything else is {@code HOST_MECHANISM_FAILED} with the
     * exception as cause; {@link CompletionException} and
     * {@link java.util.concurrent.ExecutionException} are unwrapped).
     *
     * @param error the stage's exception
     * @param nowMs the current time, ms since the epoch
     * @return what to do next
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ServerOutput resumeWithError(Throwable error, long nowMs) {
        Objects.requireNonNull(error, "error");
        return resume(null, error, nowMs);
    }

    private ServerOutput resume(HostServerStep step, Throwable error, long nowMs) {
        long[] out = new long[2];
        Object[] err = new Object[1];
        byte[] frames = with(h -> Native.serverConnResume(h, step, error, nowMs, out, err));
        return ServerOutput.of(frames, out, err);
    }

    /**
     * Handles a frame and continues without blocking for as long as the exchange stops for the
     * host: a credential request is answered by {@code lookup}, a mechanism's pending work is
     * awaited and resumed with its result. The output's frames are those of every step, in
     * order; its action is the first that is neither {@code NEED_CREDENTIAL} nor
     * {@code PENDING}. The future fails with the lookup's exception if the lookup fails.
     * Failures of the exchange are outputs ({@code FAIL_AT}, {@code CLOSE_NOW}); a frame that
     * {@link #handleFrame} refuses with an exception is refused the same way, by this call.
     * {@code clock} gives the time of each step.
     *
     * @param frame the frame, without its length prefix
     * @param lookup answers credential requests
     * @param clock the current time, ms since the epoch
     * @return the output
     */
    public CompletableFuture<ServerOutput> handleFrameAsync(byte[] frame, AsyncCredentialLookup lookup,
            LongSupplier clock) {
        Objects.requireNonNull(lookup, "lookup");
        return drive(frame, lookup, clock);
    }

    /**
     * As {@link #handleFrameAsync(byte[], AsyncCredentialLookup, LongSupplier)} for a registry
     * without an asynchronous credential lookup: only a mechanism's pending work is awaited; a
     * {@link ServerOutput.Action#NEED_CREDENTIAL} output is returned for the host to answer with
     * {@link #provideCredential}.
     *
     * @param frame the frame, without its length prefix
     * @param clock the current time, ms since the epoch
     * @return the output
     */
    public CompletableFuture<ServerOutput> handleFrameAsync(byte[] frame, LongSupplier clock) {
        return drive(frame, null, clock);
    }

    private CompletableFuture<ServerOutput> drive(byte[] frame, AsyncCredentialLookup lookup, LongSupplier clock) {
        Objects.requireNonNull(frame, "frame");
        Objects.requireNonNull(clock, "clock");
        ServerOutput first = handleFrame(frame, clock.getAsLong());
        return untilAnswered(first, lookup, clock);
    }

    private CompletableFuture<ServerOutput> untilAnswered(ServerOutput sofar, AsyncCredentialLookup lookup,
            LongSupplier clock) {
        if (sofar.action() == ServerOutput.Action.NEED_CREDENTIAL && lookup != null) {
            CredentialRequest request = credentialRequest();
            return lookup.lookup(request).toCompletableFuture().thenCompose(answer -> {
                try {
                    return untilAnswered(append(sofar, provideCredential(answer, clock.getAsLong())), lookup, clock);
                } catch (KsaslException e) {
                    throw new CompletionException(e);
                }
            });
        }
        if (sofar.action() == ServerOutput.Action.PENDING) {
            CompletionStage<HostServerStep> work = pendingWork();
            if (work == null) {
                return CompletableFuture.failedFuture(new IllegalStateException("pending without work"));
            }
            return Stages.settled(work).thenCompose(done -> {
                ServerOutput next = done.error() == null
                        ? resume(done.value(), clock.getAsLong())
                        : resumeWithError(done.error(), clock.getAsLong());
                return untilAnswered(append(sofar, next), lookup, clock);
            });
        }
        return CompletableFuture.completedFuture(sofar);
    }

    /** {@code next} with the frames of {@code before} first. */
    private static ServerOutput append(ServerOutput before, ServerOutput next) {
        return new ServerOutput(next.action(), concat(before.frames(), next.frames()), next.deadlineMs(),
                next.error());
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
