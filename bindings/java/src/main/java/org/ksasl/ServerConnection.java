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
 * <p>The exchange stops for the host in two ways: {@link ServerAction#NEED_CREDENTIAL}
 * (answer with {@link #provideCredential}) and {@link ServerAction#PENDING}, when a host
 * mechanism answers {@link HostServerStep#later} (wait for {@link #pendingWork()}, then
 * {@link #resume} or {@link #resumeWithError}). {@link #handleFrameAsync} does both without
 * blocking. While the exchange waits, hand it no frames: Kafka clients send the next SASL
 * request only after the response to the last one.
 */
public final class ServerConnection extends NativeHandle {
    public ServerConnection(ServerConfig config) {
        super(create(config), Native::serverConnFree, true);
    }

    private static long create(ServerConfig config) {
        Objects.requireNonNull(config, "config");
        return config.with(Native::serverConnNew);
    }

    /**
     * Handles one authentication frame (without its length prefix). Failures come back as
     * {@link ServerAction#FAIL_AT} or {@link ServerAction#CLOSE_NOW}; only an
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
        return with(h -> Native.serverConnHandleFrame(h, frame, nowMs, false));
    }

    /** {@link #handleFrame(byte[], long)} at the wall clock. */
    public ServerOutput handleFrame(byte[] frame) {
        return handleFrame(frame, System.currentTimeMillis());
    }

    /** The pending credential request, or {@code null}. */
    public CredentialRequest credentialRequest() {
        return CredentialRequest.of(with(Native::serverConnPendingRequest));
    }

    /** Answers the pending credential request. */
    public ServerOutput provideCredential(CredentialAnswer answer, long nowMs) throws KsaslException {
        return provide(answer, nowMs, false);
    }

    /**
     * After {@link ServerAction#PENDING}: the stage the mechanism's
     * {@link HostServerStep#later} step waits for; otherwise {@code null}.
     *
     * @return the stage of the mechanism's step, or {@code null} when nothing is pending
     */
    @SuppressWarnings("unchecked")
    public CompletionStage<HostServerStep> pendingWork() {
        return (CompletionStage<HostServerStep>) with(Native::serverConnPendingWork);
    }

    /**
     * Continues after {@link ServerAction#PENDING} with the step the stage completed
     * with, taken as if the mechanism had returned it (another {@link HostServerStep#later}
     * gives {@code PENDING} again; {@code null} fails the exchange). Failures come back as
     * {@link ServerAction#FAIL_AT}, as from {@link #handleFrame}.
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
     * Continues after {@link ServerAction#PENDING} with the exception the stage completed
     * with: the exchange fails as if the mechanism had thrown it ({@link ServerAction#FAIL_AT}
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
        return with(h -> Native.serverConnResume(h, step, error, nowMs, false));
    }

    private ServerOutput provide(CredentialAnswer answer, long nowMs, boolean hold) throws KsaslException {
        Objects.requireNonNull(answer, "answer");
        return with(h -> Native.serverConnProvide(h, answer.kind().number(), answer.value(), answer.expiryMs(),
                answer.tokenOwner(), nowMs, hold));
    }

    /**
     * Handles a frame and continues without blocking for as long as the exchange waits for the
     * host (the core's {@code host_task}): a credential request is answered by {@code lookup},
     * a mechanism's pending work is awaited and resumed with its result. The output's frames are
     * those of every step, in order (the connection's outbox, read once at the end), and its
     * action the last. The future fails with the lookup's exception if the lookup
     * fails. Failures of the exchange are outputs ({@code FAIL_AT}, {@code CLOSE_NOW}); a frame
     * that {@link #handleFrame} refuses with an exception is refused the same way, by this call.
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
     * {@link ServerAction#NEED_CREDENTIAL} output is returned for the host to answer with
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
        run(h -> Native.serverConnHandleFrame(h, frame, clock.getAsLong(), true));
        return settle(lookup, clock);
    }

    /** Awaits what the core says the connection waits for, answers it, and repeats. */
    private CompletableFuture<ServerOutput> settle(AsyncCredentialLookup lookup, LongSupplier clock) {
        Object task = with(Native::serverConnHostTask);
        if (task instanceof CompletionStage) {
            @SuppressWarnings("unchecked")
            CompletionStage<HostServerStep> work = (CompletionStage<HostServerStep>) task;
            return Stages.settled(work).thenCompose(done -> {
                run(h -> Native.serverConnResume(h, done.value(), done.error(), clock.getAsLong(), true));
                return settle(lookup, clock);
            });
        }
        if (task instanceof byte[] && lookup != null) {
            return lookup.lookup(CredentialRequest.of((byte[]) task)).toCompletableFuture().thenCompose(answer -> {
                try {
                    provide(answer, clock.getAsLong(), true);
                } catch (KsaslException e) {
                    throw new CompletionException(e);
                }
                return settle(lookup, clock);
            });
        }
        return CompletableFuture.completedFuture(with(Native::serverConnTakeHeld));
    }

    /**
     * Checks a frame's declared length (its 4-byte prefix) before the body is read, as Kafka
     * does: at most {@code sasl.server.max.receive.size} until a session is live, then at most
     * {@code socket.request.max.bytes}. Returns the body's size; on an exception close the
     * connection without reading the body (the gate then says {@link Gate#CLOSE}).
     */
    public int checkFrameSize(int declared, long nowMs) throws KsaslException {
        return (int) (long) with(h -> Native.serverConnCheckFrameSize(h, declared, nowMs));
    }

    /**
     * The request that interrupted the exchange when ksasl has no schema for its API: after the
     * {@link ServerAction#FAIL_AT} (with no frames) it caused, the host writes that API's error
     * response, built from this, at the deadline, as Kafka does, or nothing if it cannot read
     * the request either. {@code null} otherwise (ksasl answered, or nothing was refused).
     */
    public RefusedRequest refusedRequest() {
        return RefusedRequest.of(with(Native::serverConnRefusedRequest));
    }

    /** The verdict on one request with API key {@code apiKey}: {@link Gate#PROCESS} only under a live session. */
    public Gate gate(short apiKey, long nowMs) {
        return Gate.fromNumber(with(h -> Native.serverConnGate(h, apiKey, nowMs)));
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
        return ServerSession.of(with(Native::serverConnSession));
    }
}
