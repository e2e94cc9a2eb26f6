package org.ksasl;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * One client-side mechanism exchange, without Kafka framing: {@link #start} gives the first
 * message, {@link #step} answers each server challenge. Calls are serialized; one exchange is
 * meant to be driven by one thread at a time.
 *
 * <p>With a mechanism that answers later ({@link AsyncHostClientMechanism}), {@code start} and
 * {@code step} return a {@link ClientStep#pending()} step: wait for {@link #pendingWork()} and
 * continue with {@link #resume} (its message) or {@link #resumeWithError} (its exception), which
 * return the step {@code start}/{@code step} would have returned.
 */
public final class ClientExchange extends NativeHandle {
    /** Creates the client side of {@code mechanism} from the registry's client mechanisms. */
    public ClientExchange(MechanismRegistry registry, String mechanism) throws KsaslException {
        super(create(registry, mechanism), Native::clientExchangeFree, true);
    }

    private static long create(MechanismRegistry registry, String mechanism) throws KsaslException {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(mechanism, "mechanism");
        // The name as UTF-8 bytes: cheaper to cross than a String.
        byte[] name = mechanism.getBytes(StandardCharsets.UTF_8);
        return registry.with(r -> Native.clientExchangeNew(r, name));
    }

    /** The first message. */
    public ClientStep start(long nowMs) throws KsaslException {
        return ClientStep.of(with(h -> Native.clientExchangeStart(h, nowMs)));
    }

    /** Evaluates a server challenge. */
    public ClientStep step(byte[] challenge, long nowMs) throws KsaslException {
        Objects.requireNonNull(challenge, "challenge");
        return ClientStep.of(with(h -> Native.clientExchangeStep(h, challenge, nowMs)));
    }

    /**
     * After a {@link ClientStep#pending()} step: the stage the mechanism returned; otherwise
     * {@code null}.
     *
     * @return the stage of the mechanism's message, or {@code null} when nothing is pending
     */
    @SuppressWarnings("unchecked")
    public CompletionStage<byte[]> pendingWork() {
        return (CompletionStage<byte[]>) with(Native::clientExchangePendingWork);
    }

    /**
     * Continues after a {@link ClientStep#pending()} step with the message the stage completed
     * with, judged as a {@link HostClientMechanism}'s answer (see
     * {@link AsyncHostClientMechanism}).
     *
     * @param message the stage's value; {@code null} only once the mechanism is complete
     * @return the step, as {@link #step} returns it (pending again is not possible for a client)
     * @throws KsaslException if the answer fails the exchange (a {@code null} message before
     *     completion, an exception from {@code isComplete})
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ClientStep resume(byte[] message) throws KsaslException {
        return resume(message, null);
    }

    /**
     * Continues after a {@link ClientStep#pending()} step with the exception the stage completed
     * with: the exchange fails as if the mechanism had thrown it (a {@link KsaslError} keeps its
     * code, anything else is {@code HOST_MECHANISM_FAILED}, with the exception as cause;
     * {@link java.util.concurrent.CompletionException} and
     * {@link java.util.concurrent.ExecutionException} are unwrapped).
     *
     * @param error the stage's exception
     * @return never returns normally; declared like {@link #resume} so that both fit one
     *     {@code handle((message, error) -> ...)} callback
     * @throws KsaslException always, the failure {@code error} became
     * @throws KsaslStateException ({@code WRONG_STATE}) if nothing is pending; nothing changes
     */
    public ClientStep resumeWithError(Throwable error) throws KsaslException {
        Objects.requireNonNull(error, "error");
        return resume(null, error);
    }

    private ClientStep resume(byte[] message, Throwable error) throws KsaslException {
        return ClientStep.of(with(h -> Native.clientExchangeResume(h, message, error)));
    }

    /**
     * Reports that the server failed the exchange (with the server's error message, if any)
     * and throws the resulting exception; the exchange is then failed.
     */
    public void serverFailed(String serverMessage) throws KsaslException {
        run(h -> Native.clientExchangeServerFailed(h, serverMessage));
    }

    /** The mechanism name. */
    public String mechanism() {
        return with(Native::clientExchangeMechanism);
    }

    /** Whether the client side has completed. */
    public boolean isComplete() {
        return with(Native::clientExchangeComplete);
    }
}
