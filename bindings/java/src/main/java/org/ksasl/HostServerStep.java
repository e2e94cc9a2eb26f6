package org.ksasl;

import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What a {@link HostServerMechanism} answers to one client message: a challenge to send, or
 * completion with the authenticated authorization id, an optional last message and an optional
 * absolute credential expiry.
 */
public final class HostServerStep {
    private final boolean done;
    private final byte[] message;
    private final String authorizationId;
    private final OptionalLong credentialExpiryMs;

    private HostServerStep(boolean done, byte[] message, String authorizationId, OptionalLong expiry) {
        this.done = done;
        this.message = message;
        this.authorizationId = authorizationId;
        this.credentialExpiryMs = expiry;
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

    /** The challenge (not done). */
    public byte[] challenge() {
        return done ? null : message.clone();
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
                && credentialExpiryMs.equals(s.credentialExpiryMs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(done, Arrays.hashCode(message), authorizationId, credentialExpiryMs);
    }
}
