package org.ksasl;

import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * One server-side mechanism exchange, without Kafka framing. Credentials come from the
 * registry's store or lookup, or from the host through {@link #provideCredential} when a step
 * returns {@link ServerStep.Kind#NEED_CREDENTIAL}. When a host mechanism answers
 * {@link HostServerStep#later}, the step is {@link ServerStep.Kind#PENDING}: wait for
 * {@link #pendingWork()} and continue with {@link #resume} or {@link #resumeWithError}.
 */
public final class ServerAuthenticator extends NativeHandle {
    private static final ServerStep.Kind[] KINDS = ServerStep.Kind.values();

    /** Creates the server side of {@code mechanism} from the registry's server mechanisms. */
    public ServerAuthenticator(MechanismRegistry registry, String mechanism) throws KsaslException {
        super(create(registry, mechanism), Native::serverAuthFree);
    }

    private static long create(MechanismRegistry registry, String mechanism) throws KsaslException {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(mechanism, "mechanism");
        return registry.with(r -> Native.serverAuthNew(r, mechanism));
    }

    /** Evaluates one client message. */
    public ServerStep step(byte[] response, long nowMs) throws KsaslException {
        Objects.requireNonNull(response, "response");
        int[] kind = new int[1];
        byte[] m = with(h -> Native.serverAuthStep(h, response, nowMs, kind));
        return new ServerStep(KINDS[kind[0]], m);
    }

    /** The pending credential request, or {@code null}. */
    public CredentialRequest credentialRequest() {
        return Decode.request(with(Native::serverAuthRequest));
    }

    /** Answers the pending credential request. */
    public ServerStep provideCredential(CredentialAnswer answer, long nowMs) throws KsaslException {
        Objects.requireNonNull(answer, "answer");
        int[] kind = new int[1];
        byte[] m = with(h -> Native.serverAuthProvide(h, answer.kind().ordinal(), answer.value(), answer.expiryMs(),
                answer.tokenOwner(), nowMs, kind));
        return new ServerStep(KINDS[kind[0]], m);
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
        return (CompletionStage<HostServerStep>) with(Native::serverAuthPendingWork);
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
        int[] kind = new int[1];
        byte[] m = with(h -> Native.serverAuthResume(h, step, error, nowMs, kind));
        return new ServerStep(KINDS[kind[0]], m);
    }

    /** After {@link ServerStep.Kind#DONE}: who authenticated; otherwise {@code null}. */
    public AuthenticationOutcome outcome() {
        return Decode.outcome(with(Native::serverAuthOutcome));
    }

    /** After a failure: the text a Kafka broker sends the client (no secrets, no reason for unknown users). */
    public String clientMessage() {
        return with(Native::serverAuthClientMessage);
    }
}
