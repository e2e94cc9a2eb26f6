package org.ksasl;

import java.util.Objects;

/**
 * One client-side mechanism exchange, without Kafka framing: {@link #start} gives the first
 * message, {@link #step} answers each server challenge. Calls are serialized; one exchange is
 * meant to be driven by one thread at a time.
 */
public final class ClientAuthenticator extends NativeHandle {
    /** Creates the client side of {@code mechanism} from the registry's client mechanisms. */
    public ClientAuthenticator(MechanismRegistry registry, String mechanism) throws KsaslException {
        super(create(registry, mechanism), Native::clientAuthFree);
    }

    private static long create(MechanismRegistry registry, String mechanism) throws KsaslException {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(mechanism, "mechanism");
        return registry.with(r -> Native.clientAuthNew(r, mechanism));
    }

    /** The first message. */
    public ClientStep start(long nowMs) throws KsaslException {
        boolean[] done = new boolean[1];
        byte[] m = with(h -> Native.clientAuthStart(h, nowMs, done));
        return new ClientStep(m, done[0]);
    }

    /** Evaluates a server challenge. */
    public ClientStep step(byte[] challenge, long nowMs) throws KsaslException {
        Objects.requireNonNull(challenge, "challenge");
        boolean[] done = new boolean[1];
        byte[] m = with(h -> Native.clientAuthStep(h, challenge, nowMs, done));
        return new ClientStep(m, done[0]);
    }

    /**
     * Reports that the server failed the exchange (with the server's error message, if any)
     * and throws the resulting exception; the authenticator is then failed.
     */
    public void serverFailed(String serverMessage) throws KsaslException {
        run(h -> Native.clientAuthServerFailed(h, serverMessage));
    }

    /** The mechanism name. */
    public String mechanism() {
        return with(Native::clientAuthMechanism);
    }

    /** Whether the client side has completed. */
    public boolean isComplete() {
        return with(Native::clientAuthComplete);
    }
}
