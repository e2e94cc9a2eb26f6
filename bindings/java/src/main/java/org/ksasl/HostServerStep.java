package org.ksasl;

import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;

/**
 * What a {@link HostServerMechanism} answers to one client message: a challenge to send,
 * completion with the authenticated authorization id, an optional last message and an optional
 * absolute credential expiry, or {@link #later} (the answer is the value of a
 * {@link CompletionStage}).
 */
public final class HostServerStep {
    private final boolean done;
    private final byte[] message;
    private final String authorizationId;
    private final OptionalLong credentialExpiryMs;
    private final CompletionStage<HostServerStep> work;

    private HostServerStep(boolean done, byte[] message, String authorizationId, OptionalLong expiry,
            CompletionStage<HostServerStep> work) {
        this.done = done;
        this.message = message;
        this.authorizationId = authorizationId;
        this.credentialExpiryMs = expiry;
        this.work = work;
    }

    private HostServerStep(boolean done, byte[] message, String authorizationId, OptionalLong expiry) {
        this(done, message, authorizationId, expiry, null);
    }

    /**
     * The answer comes later: it is the step {@code work} completes with (a password check
     * against a directory service, say). The exchange waits: a {@link ServerConnection} reports
     * {@link ServerAction#PENDING} (a {@link ServerExchange}
     * {@link ServerStep.Kind#PENDING}), {@code pendingWork()} gives {@code work}, and the host
     * hands its result back with {@code resume} or its exception with {@code resumeWithError};
     * {@link ServerConnection#handleFrameAsync} does this itself. The mechanism is not called
     * again for this message.
     *
     * <p>The step {@code work} completes with is taken as if {@link HostServerMechanism#step}
     * had returned it: a challenge, completion, or another {@code later} step (which waits
     * again). Completing with {@code null}, exceptionally (a
     * {@link java.util.concurrent.CompletionException} or
     * {@link java.util.concurrent.ExecutionException} is unwrapped to its cause) or with a
     * {@code done} step for an empty id fails the exchange as the synchronous forms do (see
     * {@link HostServerMechanism}).
     *
     * @param work the stage of the real answer
     * @return a step that waits for {@code work}
     */
    public static HostServerStep later(CompletionStage<HostServerStep> work) {
        Objects.requireNonNull(work, "work");
        return new HostServerStep(false, null, null, OptionalLong.empty(), work);
    }

    /** Sends {@code challenge} and waits for the client's next message. */
    public static HostServerStep challenge(byte[] challenge) {
        Objects.requireNonNull(challenge, "challenge");
        return new HostServerStep(false, challenge.clone(), null, OptionalLong.empty());
    }

    /** The client is authenticated as {@code authorizationId}; no last message, no expiry. */
    public static HostServerStep done(String authorizationId) {
        return done(null, authorizationId, OptionalLong.empty());
    }

    /**
     * The client is authenticated as {@code authorizationId} (the principal is
     * {@code User:<authorizationId>}). {@code message}, if not {@code null}, is sent in the final
     * {@code SaslAuthenticate} response; {@code credentialExpiryMs} is the absolute expiry (ms
     * since the epoch) of the credential used, which bounds the KIP-368 session.
     */
    public static HostServerStep done(byte[] message, String authorizationId, OptionalLong credentialExpiryMs) {
        Objects.requireNonNull(authorizationId, "authorizationId");
        Objects.requireNonNull(credentialExpiryMs, "credentialExpiryMs");
        if (authorizationId.isEmpty()) {
            throw new IllegalArgumentException("the authorization id must not be empty");
        }
        return new HostServerStep(true, message == null ? null : message.clone(), authorizationId,
                credentialExpiryMs);
    }

    /** Whether the exchange is complete. */
    public boolean isDone() {
        return done;
    }

    /** Whether the answer comes later ({@link #later}). */
    public boolean isLater() {
        return work != null;
    }

    /** The stage of a {@link #later} step, else {@code null}. */
    public CompletionStage<HostServerStep> work() {
        return work;
    }

    /** The challenge (a challenge step), else {@code null}. */
    public byte[] challenge() {
        return done || work != null ? null : message.clone();
    }

    /** The last message, or {@code null} (done). */
    public byte[] message() {
        return message == null ? null : message.clone();
    }

    /** The authorization id (done), else {@code null}. */
    public String authorizationId() {
        return authorizationId;
    }

    /** The credential expiry (done), else empty. */
    public OptionalLong credentialExpiryMs() {
        return credentialExpiryMs;
    }

    @Override
    public String toString() {
        if (work != null) {
            return "HostServerStep.later(" + work + ")";
        }
        return done
                ? "HostServerStep.done(" + authorizationId + ", message="
                        + (message == null ? "none" : message.length + " bytes") + ", expiry=" + credentialExpiryMs + ")"
                : "HostServerStep.challenge(" + message.length + " bytes)";
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof HostServerStep)) {
            return false;
        }
        HostServerStep s = (HostServerStep) o;
        return done == s.done && Arrays.equals(message, s.message) && Objects.equals(authorizationId, s.authorizationId)
                && credentialExpiryMs.equals(s.credentialExpiryMs) && work == s.work;
    }

    @Override
    public int hashCode() {
        return Objects.hash(done, Arrays.hashCode(message), authorizationId, credentialExpiryMs,
                System.identityHashCode(work));
    }
}
