package org.ksasl;

import java.util.Objects;

/**
 * One server-side mechanism exchange, without Kafka framing. Credentials come from the
 * registry's store or lookup, or from the host through {@link #provideCredential} when a step
 * returns {@link ServerStep.Kind#NEED_CREDENTIAL}.
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

    /** After {@link ServerStep.Kind#DONE}: who authenticated; otherwise {@code null}. */
    public AuthenticationOutcome outcome() {
        return Decode.outcome(with(Native::serverAuthOutcome));
    }

    /** After a failure: the text a Kafka broker sends the client (no secrets, no reason for unknown users). */
    public String clientMessage() {
        return with(Native::serverAuthClientMessage);
    }
}
