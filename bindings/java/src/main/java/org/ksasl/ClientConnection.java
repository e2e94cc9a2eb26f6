package org.ksasl;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

/**
 * One Kafka client connection's SASL state (ApiVersions, SaslHandshake, SaslAuthenticate, and
 * KIP-368 re-authentication). The host owns the socket: it writes {@link #transmit()}, hands
 * every received frame (without its 4-byte length) to {@link #handleFrame}, asks
 * {@link #beforeRequest} before each application request and calls {@link #handleTimeout} at
 * {@link #nextDeadline()}. Calls are serialized on the object; one connection is normally
 * driven by one thread.
 *
 * <p>With a mechanism that answers later ({@link AsyncHostClientMechanism}), a frame may give
 * {@link ClientEvent.Kind#PENDING}: wait for {@link #pendingWork()} and continue with
 * {@link #resume} or {@link #resumeWithError}, or let {@link #handleFrameAsync} do it. While the
 * work is pending the broker has nothing to say: a SASL response then fails the connection
 * ({@code CORRELATION_MISMATCH}); responses to application requests sent before a
 * re-authentication still come back as {@link ClientEvent.Kind#APPLICATION}.
 */
public final class ClientConnection extends NativeHandle {
    public ClientConnection(ClientConfig config) {
        super(create(config), Native::clientConnFree, true);
    }

    private static long create(ClientConfig config) {
        Objects.requireNonNull(config, "config");
        return config.with(Native::clientConnNew);
    }

    /** Starts the initial authentication; then write {@link #transmit()}. */
    public void start(long nowMs) throws KsaslException {
        run(h -> Native.clientConnStart(h, nowMs));
    }

    /** The bytes to write (length-prefixed frames); empty when there is nothing. */
    public byte[] transmit() {
        return with(Native::clientConnTransmit);
    }

    /**
     * Handles one received frame (without its length prefix). For
     * {@link ClientEvent.Kind#APPLICATION}, the event's frame is {@code frame} itself: once the
     * connection is authenticated the frame's bytes are not even read, whatever its size.
     *
     * @throws KsaslException when authentication failed; close the connection
     */
    public ClientEvent handleFrame(byte[] frame, long nowMs) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        return event(with(h -> Native.clientConnHandleFrame(h, frame, nowMs)), frame);
    }

    /**
     * The event of kind number {@code kind}: an application response is {@code frame} itself;
     * a new session and a failed re-authentication's error are read from the connection.
     */
    private ClientEvent event(int kind, byte[] frame) {
        ClientEvent.Kind k = ClientEvent.Kind.fromNumber(kind);
        switch (k) {
            case APPLICATION: return new ClientEvent(k, frame, null, null, OptionalLong.empty());
            case AUTHENTICATED:
            case REAUTHENTICATED: return new ClientEvent(k, null, session(), null, OptionalLong.empty());
            case REAUTH_FAILED: return with(Native::clientConnReauthFailure);
            default: return new ClientEvent(k, null, null, null, OptionalLong.empty());
        }
    }

    /**
     * After {@link ClientEvent.Kind#PENDING}: the stage the mechanism returned; otherwise
     * {@code null}.
     *
     * @return the stage of the mechanism's message, or {@code null} when nothing is pending
     */
    @SuppressWarnings("unchecked")
    public CompletionStage<byte[]> pendingWork() {
        return (CompletionStage<byte[]>) with(Native::clientConnPendingWork);
    }

    /**
     * Continues after {@link ClientEvent.Kind#PENDING} with the message the stage completed
     * with (judged as described in {@link AsyncHostClientMechanism}); then write
     * {@link #transmit()}.
     *
     * @param message the stage's value; {@code null} only once the mechanism is complete
     * @param nowMs the current time, ms since the epoch
     * @return the event, as {@link #handleFrame} returns it
     * @throws KsaslException when authentication failed; close the connection
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ClientEvent resume(byte[] message, long nowMs) throws KsaslException {
        return resume(message, null, nowMs);
    }

    /**
     * Continues after {@link ClientEvent.Kind#PENDING} with the exception the stage completed
     * with: the authentication fails as if the mechanism had thrown it (a {@link KsaslError}
     * keeps its code, anything else is {@code HOST_MECHANISM_FAILED} with the exception as
     * cause; {@link CompletionException} and {@link java.util.concurrent.ExecutionException}
     * are unwrapped). A re-authentication under the retry policy reports
     * {@link ClientEvent.Kind#REAUTH_FAILED} instead of throwing.
     *
     * @param error the stage's exception
     * @param nowMs the current time, ms since the epoch
     * @return the event, when the failure is not fatal
     * @throws KsaslException when authentication failed; close the connection
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ClientEvent resumeWithError(Throwable error, long nowMs) throws KsaslException {
        Objects.requireNonNull(error, "error");
        return resume(null, error, nowMs);
    }

    private ClientEvent resume(byte[] message, Throwable error, long nowMs) throws KsaslException {
        return event(with(h -> Native.clientConnResume(h, message, error, nowMs)), null);
    }

    /**
     * Handles one received frame and, while the mechanism answers later, waits for its stage
     * without blocking and resumes with its result, as often as it takes. The future completes
     * with the first event that is not {@link ClientEvent.Kind#PENDING} (after
     * {@link ClientEvent.Kind#CONTINUE}, write {@link #transmit()}), or fails with the
     * {@link KsaslException} of a failed authentication. {@code clock} gives the time of each
     * call. A misuse of the connection (a frame after it failed) is thrown, not reported in the
     * future.
     *
     * @param frame the frame, without its length prefix
     * @param clock the current time, ms since the epoch
     * @return the event
     */
    public CompletableFuture<ClientEvent> handleFrameAsync(byte[] frame, LongSupplier clock) {
        Objects.requireNonNull(frame, "frame");
        Objects.requireNonNull(clock, "clock");
        ClientEvent first;
        try {
            first = handleFrame(frame, clock.getAsLong());
        } catch (KsaslException e) {
            return CompletableFuture.failedFuture(e);
        }
        return untilAnswered(first, clock);
    }

    private CompletableFuture<ClientEvent> untilAnswered(ClientEvent event, LongSupplier clock) {
        if (event.kind() != ClientEvent.Kind.PENDING) {
            return CompletableFuture.completedFuture(event);
        }
        CompletionStage<byte[]> work = pendingWork();
        if (work == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("pending without work"));
        }
        return Stages.settled(work).thenCompose(done -> {
            try {
                ClientEvent next = done.error() == null
                        ? resume(done.value(), clock.getAsLong())
                        : resumeWithError(done.error(), clock.getAsLong());
                return untilAnswered(next, clock);
            } catch (KsaslException e) {
                throw new CompletionException(e);
            }
        });
    }

    /** The broker closed the connection: returns the exception that explains it (expired session, ...). */
    public KsaslException closed(long nowMs) {
        Throwable t = with(h -> Native.clientConnClosed(h, nowMs));
        if (t instanceof KsaslException) {
            return (KsaslException) t;
        }
        throw (RuntimeException) t;
    }

    /** When to call {@link #handleTimeout} next. */
    public OptionalLong nextDeadline() {
        return Time.opt(with(Native::clientConnNextDeadline));
    }

    /** Starts a due re-authentication (then write {@link #transmit()}); returns whether one started. */
    public boolean handleTimeout(long nowMs) throws KsaslException {
        return with(h -> Native.clientConnHandleTimeout(h, nowMs));
    }

    /** Whether a re-authentication is due (for hosts that check before each request). */
    public boolean reauthPending(long nowMs) {
        return with(h -> Native.clientConnReauthPending(h, nowMs));
    }

    /** Before an application request: {@code true} to send it now, {@code false} to hold it until re-authenticated. */
    public boolean beforeRequest(long nowMs) throws KsaslException {
        return with(h -> Native.clientConnBeforeRequest(h, nowMs));
    }

    /** Starts a re-authentication now (deferred, returning {@code false}, within a second of the last). */
    public boolean startReauthentication(long nowMs) throws KsaslException {
        return with(h -> Native.clientConnStartReauth(h, nowMs));
    }

    /** The current session, or {@code null} before authentication. */
    public ClientSession session() {
        return ClientSession.of(with(Native::clientConnSession));
    }

    /** Whether a re-authentication is in progress. */
    public boolean isReauthenticating() {
        return with(Native::clientConnReauthenticating);
    }

    /** Whether authenticated with no exchange in progress. */
    public boolean isReady() {
        return with(Native::clientConnReady);
    }
}
