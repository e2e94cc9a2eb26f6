package org.ksasl;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * One server-side mechanism exchange, without Kafka framing. Credentials come from the
 * registry's store or lookup, or from the host through {@link #provideCredential} when a step
 * returns {@link ServerStep.Kind#NEED_CREDENTIAL}. When a host mechanism answers
 * {@link HostServerStep#later}, the step is {@link ServerStep.Kind#PENDING}: wait for
 * {@link #pendingWork()} and continue with {@link #resume} or {@link #resumeWithError}.
 */
public final class ServerExchange extends NativeHandle {
    /** The session, from the step that completed the exchange. */
    private volatile ServerSession session;

    /** Creates the server side of {@code mechanism} from the registry's server mechanisms. */
    public ServerExchange(MechanismRegistry registry, String mechanism) throws KsaslException {
        super(create(registry, mechanism), Native::serverExchangeFree, true);
    }

    private static long create(MechanismRegistry registry, String mechanism) throws KsaslException {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(mechanism, "mechanism");
        // The name as UTF-8 bytes: cheaper to cross than a String.
        byte[] name = mechanism.getBytes(StandardCharsets.UTF_8);
        return registry.with(r -> Native.serverExchangeNew(r, name));
    }

    /** Evaluates one client message. */
    public ServerStep step(byte[] response, long nowMs) throws KsaslException {
        Objects.requireNonNull(response, "response");
        return step(with(h -> Native.serverExchangeStep(h, response, nowMs)));
    }

    /** The pending credential request, or {@code null}. */
    public CredentialRequest credentialRequest() {
        return CredentialRequest.of(with(Native::serverExchangePendingRequest));
    }

    /** Answers the pending credential request. */
    public ServerStep provideCredential(CredentialAnswer answer, long nowMs) throws KsaslException {
        Objects.requireNonNull(answer, "answer");
        return step(with(h -> Native.serverExchangeProvide(h, answer.kind().number(), answer.value(),
                answer.expiryMs(), answer.tokenOwner(), nowMs)));
    }

    /**
     * After {@link ServerStep.Kind#PENDING}: the stage of the mechanism's step; otherwise
     * {@code null}.
     *
     * @return the stage the mechanism's {@link HostServerStep#later} step waits for, or
     *     {@code null} when nothing is pending
     */
    @SuppressWarnings("unchecked")
    public CompletionStage<HostServerStep> pendingWork() {
        return (CompletionStage<HostServerStep>) with(Native::serverExchangePendingWork);
    }

    /**
     * Continues after {@link ServerStep.Kind#PENDING} with the step the stage completed with,
     * taken as if the mechanism had returned it: a challenge, completion, or another
     * {@link HostServerStep#later} (the result is {@code PENDING} again).
     *
     * @param step the stage's value ({@code null} fails the exchange with
     *     {@code HOST_MECHANISM_FAILED})
     * @param nowMs the current time, ms since the epoch
     * @return the next step
     * @throws KsaslException if the exchange fails; {@link #clientMessage()} then has the text
     *     for the client
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ServerStep resume(HostServerStep step, long nowMs) throws KsaslException {
        return resume(step, null, nowMs);
    }

    /**
     * Continues after {@link ServerStep.Kind#PENDING} with the exception the stage completed
     * with: the exchange fails as if the mechanism had thrown it (see
     * {@link HostServerMechanism}; {@link java.util.concurrent.CompletionException} and
     * {@link java.util.concurrent.ExecutionException} are unwrapped).
     *
     * @param error the stage's exception
     * @param nowMs the current time, ms since the epoch
     * @return never returns normally; declared like {@link #resume} so that both fit one
     *     {@code handle((step, error) -> ...)} callback
     * @throws KsaslException always, the failure {@code error} became
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ServerStep resumeWithError(Throwable error, long nowMs) throws KsaslException {
        Objects.requireNonNull(error, "error");
        return resume(null, error, nowMs);
    }

    private ServerStep resume(HostServerStep step, Throwable error, long nowMs) throws KsaslException {
        return step(with(h -> Native.serverExchangeResume(h, step, error, nowMs)));
    }

    /**
     * Sets {@code connections.max.reauth.ms} for the session of this exchange (default 0: the
     * session is bounded only by the credential's expiry, if it has one). Call before the last
     * step; {@link #session()} then has the lifetime a Kafka broker grants.
     *
     * @param ms the maximum session lifetime; 0 or less sets none
     */
    public void setMaxReauthMs(long ms) {
        run(h -> Native.serverExchangeSetMaxReauthMs(h, ms));
    }

    /** After {@link ServerStep.Kind#DONE}: who authenticated; otherwise {@code null}. */
    public AuthOutcome outcome() {
        ServerSession s = session();
        return s == null ? null : s.outcome();
    }

    /**
     * After {@link ServerStep.Kind#DONE}: the KIP-368 session Kafka grants (the lifetime by
     * Kafka's formula over the credential's expiry and {@link #setMaxReauthMs}); otherwise
     * {@code null}. A host that frames the exchange itself sends {@code lifetimeMs()} in the
     * last SaslAuthenticate response.
     *
     * @return the session, or {@code null}
     */
    public ServerSession session() {
        ensureOpen();
        return session;
    }

    /** A step record; the last step's also has the session. */
    private ServerStep step(byte[] record) {
        Fields f = new Fields(record);
        ServerStep step = ServerStep.read(f);
        if (f.bool()) {
            session = ServerSession.read(f);
        }
        return step;
    }

    /**
     * After a failure: the text a Kafka broker sends the client (no secrets, no reason for
     * unknown users); {@code null} before. The exception of the failure has the same text as
     * {@link KsaslException#clientMessage()}.
     */
    public String clientMessage() {
        return with(Native::serverExchangeClientMessage);
    }
}
