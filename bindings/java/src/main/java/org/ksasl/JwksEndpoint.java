package org.ksasl;

import java.util.Map;
import java.util.Objects;

/**
 * A JWKS endpoint ({@code sasl.oauthbearer.jwks.endpoint.url}) keeping a {@link JwksValidator}'s
 * keys fresh over HTTPS: at start, every refresh period, at once for an unknown {@code kid}
 * (at most once a minute per kid), and on a retry backoff after a failed fetch. HTTPS settings
 * by Kafka's names: {@code ssl.truststore.location} (PEM), {@code sasl.login.connect.timeout.ms},
 * {@code sasl.login.read.timeout.ms}. Given to {@link MechanismRegistry#addOAuthBearerServer(JwksEndpoint)},
 * it holds a token signed by a key it does not know yet for one fetch instead of refusing it.
 * Safe to share between threads.
 */
public final class JwksEndpoint extends NativeHandle {
    /**
     * An endpoint for {@code url} (http or https) feeding {@code validator}.
     *
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) for a bad URL or setting
     */
    public JwksEndpoint(String url, JwksValidator validator, Map<String, String> settings) throws KsaslException {
        super(create(url, validator, settings), Native::jwksEndpointFree);
    }

    /** Owns an endpoint handle the native side made (a listener's, {@link ServerSetup#jwks()}). */
    JwksEndpoint(long handle) {
        super(handle, Native::jwksEndpointFree);
    }

    private static long create(String url, JwksValidator validator, Map<String, String> settings)
            throws KsaslException {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(validator, "validator");
        Native.init();
        String[] flat = OidcLogin.flatten(settings == null ? Map.of() : settings);
        return validator.with(v -> Native.jwksEndpointNew(url, v, flat));
    }

    /** Fetches the JWKS now (blocking); the number of usable keys. On failure the keys stay. */
    public long fetch(long nowMs) throws KsaslException {
        return with(h -> Native.jwksEndpointFetch(h, nowMs));
    }

    /** Fetches if a fetch is due at {@code nowMs} (blocking then); when to poll next (ms). */
    public long poll(long nowMs) {
        return with(h -> Native.jwksEndpointPoll(h, nowMs));
    }

    /**
     * Starts the core's thread keeping the keys fresh. Close the returned object to stop it (one
     * that becomes unreachable is stopped when collected); it keeps the endpoint alive.
     */
    public Fetching start() throws KsaslException {
        return new Fetching(with(Native::jwksEndpointStart));
    }

    /** A running fetch thread ({@link #start}); {@link #close()} stops it and waits for it. */
    public static final class Fetching extends NativeHandle {
        private Fetching(long handle) {
            super(handle, Native::jwksFetchingStop);
        }
    }
}
