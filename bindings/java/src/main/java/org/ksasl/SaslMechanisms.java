package org.ksasl;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;

/**
 * Adapters that plug existing JVM SASL implementations ({@link SaslClient}, {@link SaslServer},
 * for example from {@link javax.security.sasl.Sasl#createSaslClient}) into ksasl as host
 * mechanisms, driven the way Kafka's own authenticators drive them:
 *
 * <pre>{@code
 * registry.addClientMechanism("CRAM-MD5", SaslMechanisms.client(() -> newCramMd5Client()));
 * registry.addServerMechanism("CRAM-MD5", SaslMechanisms.server(() -> newCramMd5Server()));
 * }</pre>
 *
 * <p>Each exchange gets a new object from the supplier. Exceptions ({@link SaslException} and
 * others) fail the exchange with {@code HOST_MECHANISM_FAILED} and the exception's message, as
 * for any host mechanism. The adapter disposes of the SASL object when the exchange completes
 * or fails; wrap/unwrap (SASL security layers) are not used by Kafka and are not available.
 */
public final class SaslMechanisms {
    private SaslMechanisms() {}

    /**
     * The negotiated property Kafka reads from a {@link SaslServer} for the credential's
     * absolute expiry in ms since the epoch ({@code CREDENTIAL.LIFETIME.MS}, a {@code Long}).
     */
    public static final String CREDENTIAL_LIFETIME_MS = "CREDENTIAL.LIFETIME.MS";

    /**
     * A factory of client mechanisms, each wrapping a new {@link SaslClient} from
     * {@code factory}. The first message is the initial response
     * ({@code evaluateChallenge(new byte[0])}) if the client has one, else an empty message (as
     * Kafka's client sends); each server challenge is evaluated until {@code isComplete()}.
     */
    public static Supplier<HostClientMechanism> client(Supplier<? extends SaslClient> factory) {
        Objects.requireNonNull(factory, "factory");
        return () -> client(factory.get());
    }

    /** A client mechanism for one exchange with {@code client}. */
    public static HostClientMechanism client(SaslClient client) {
        return new SaslClientMechanism(Objects.requireNonNull(client, "the SaslClient factory returned null"));
    }

    /**
     * A factory of server mechanisms, each wrapping a new {@link SaslServer} from
     * {@code factory}. The authorization id is {@code getAuthorizationID()}; the credential
     * expiry is the negotiated property {@link #CREDENTIAL_LIFETIME_MS} if the server sets it
     * (a {@code Number} or a decimal string, as Kafka's OAUTHBEARER server does), else none.
     */
    public static Supplier<HostServerMechanism> server(Supplier<? extends SaslServer> factory) {
        return server(factory, SaslMechanisms::negotiatedExpiry);
    }

    /**
     * As {@link #server(Supplier)}, the credential expiry of a completed exchange coming from
     * {@code credentialExpiry} (called once, before the server is disposed of).
     */
    public static Supplier<HostServerMechanism> server(Supplier<? extends SaslServer> factory,
            Function<? super SaslServer, OptionalLong> credentialExpiry) {
        Objects.requireNonNull(factory, "factory");
        Objects.requireNonNull(credentialExpiry, "credentialExpiry");
        return () -> new SaslServerMechanism(
                Objects.requireNonNull(factory.get(), "the SaslServer factory returned null"), credentialExpiry);
    }

    /** The {@link #CREDENTIAL_LIFETIME_MS} negotiated property of a completed server, if any. */
    public static OptionalLong negotiatedExpiry(SaslServer server) {
        Object v = server.getNegotiatedProperty(CREDENTIAL_LIFETIME_MS);
        if (v instanceof Number) {
            return OptionalLong.of(((Number) v).longValue());
        }
        if (v instanceof String) {
            return OptionalLong.of(Long.parseLong((String) v));
        }
        return OptionalLong.empty();
    }

    private static void dispose(SaslClient c) {
        try {
            c.dispose();
        } catch (SaslException | RuntimeException ignored) {
            // Disposal is best effort: the exchange is over either way.
        }
    }

    private static void dispose(SaslServer s) {
        try {
            s.dispose();
        } catch (SaslException | RuntimeException ignored) {
            // As for clients.
        }
    }

    private static final class SaslClientMechanism implements HostClientMechanism {
        private final SaslClient client;
        private boolean complete;

        SaslClientMechanism(SaslClient client) {
            this.client = client;
        }

        @Override
        public byte[] start(long nowMs) throws SaslException {
            if (!client.hasInitialResponse()) {
                return new byte[0];
            }
            return evaluate(new byte[0]);
        }

        @Override
        public byte[] step(byte[] challenge, long nowMs) throws SaslException {
            if (complete) {
                return null;
            }
            return evaluate(challenge);
        }

        private byte[] evaluate(byte[] challenge) throws SaslException {
            try {
                byte[] out = client.evaluateChallenge(challenge);
                if (client.isComplete()) {
                    complete = true;
                    dispose(client);
                }
                return out;
            } catch (SaslException | RuntimeException e) {
                complete = true;
                dispose(client);
                throw e;
            }
        }

        @Override
        public boolean isComplete() {
            return complete;
        }
    }

    private static final class SaslServerMechanism implements HostServerMechanism {
        private final SaslServer server;
        private final Function<? super SaslServer, OptionalLong> credentialExpiry;

        SaslServerMechanism(SaslServer server, Function<? super SaslServer, OptionalLong> credentialExpiry) {
            this.server = server;
            this.credentialExpiry = credentialExpiry;
        }

        @Override
        public HostServerStep step(byte[] response, long nowMs) throws SaslException {
            try {
                byte[] challenge = server.evaluateResponse(response);
                if (!server.isComplete()) {
                    return HostServerStep.challenge(challenge == null ? new byte[0] : challenge);
                }
                String who = server.getAuthorizationID();
                OptionalLong expiry = credentialExpiry.apply(server);
                dispose(server);
                return HostServerStep.done(challenge, who, expiry == null ? OptionalLong.empty() : expiry);
            } catch (SaslException | RuntimeException e) {
                dispose(server);
                throw e;
            }
        }
    }
}
