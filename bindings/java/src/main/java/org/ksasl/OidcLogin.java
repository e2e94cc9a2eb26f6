package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A token login at an identity provider's token endpoint (OAuth 2 client credentials, or the
 * JWT-bearer grant; KIP-768, KIP-1139) over HTTPS, configured by Kafka's property names:
 * {@code sasl.oauthbearer.token.endpoint.url}, {@code sasl.oauthbearer.client.credentials.client.id}
 * (or the JAAS option {@code clientId}), {@code ...client.secret} (or {@code clientSecret}),
 * {@code sasl.oauthbearer.scope}, {@code sasl.oauthbearer.assertion.*} for a signed client
 * assertion, {@code sasl.login.retry.backoff.ms} / {@code .max.ms},
 * {@code sasl.login.connect.timeout.ms} / {@code sasl.login.read.timeout.ms}, and
 * {@code ssl.truststore.location} (a PEM file of CA certificates; {@code ssl.truststore.type}
 * may only be {@code PEM}); ksasl's own {@code ksasl.oauthbearer.client.auth}
 * ({@code client_secret_basic}, {@code client_secret_post}, {@code private_key_jwt},
 * {@code none}) and {@code ksasl.oauthbearer.grant.type}.
 *
 * <p>Fetches block the calling thread, bounded by the timeouts and the retry budget. A refused
 * request is {@code OIDC_REQUEST_REFUSED} with the provider's {@code error_description} in
 * {@link KsaslException#details()}; an unreachable provider {@code OIDC_PROVIDER_UNAVAILABLE};
 * a certificate from an unknown CA {@code TLS_CERTIFICATE_REFUSED}. Safe to share between threads.
 */
public final class OidcLogin extends NativeHandle {
    /**
     * A login from {@code settings}, checked now (URL, client id and secret or key, CA file).
     *
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) naming the setting to fix
     */
    public OidcLogin(Map<String, String> settings) throws KsaslException {
        super(create(settings), Native::oidcLoginFree);
    }

    private static long create(Map<String, String> settings) throws KsaslException {
        Objects.requireNonNull(settings, "settings");
        Native.init();
        return Native.oidcLoginNew(flatten(settings));
    }

    static String[] flatten(Map<String, String> pairs) {
        List<String> flat = new ArrayList<>(pairs.size() * 2);
        pairs.forEach((k, v) -> {
            flat.add(Objects.requireNonNull(k, "setting name"));
            flat.add(Objects.requireNonNull(v, "value of " + k));
        });
        return flat.toArray(new String[0]);
    }

    /** Gets a token now (blocking, retried on {@code sasl.login.retry.backoff.*}). */
    public OAuthBearerToken fetch(long nowMs) throws KsaslException {
        return OAuthBearerToken.of(with(h -> Native.oidcLoginFetch(h, nowMs)));
    }

    /**
     * Installs a first token in {@code refresher} now (or throws the provider's reason), then
     * keeps it fresh on the core's thread on Kafka's refresh schedule, each token with
     * {@code extensions}. Close the returned object to stop the thread (one that becomes
     * unreachable is stopped when collected); it keeps the login and the refresher alive.
     */
    public Refresh start(Refresher refresher, Map<String, String> extensions) throws KsaslException {
        Objects.requireNonNull(refresher, "refresher");
        String[] ext = flatten(extensions == null ? Map.of() : extensions);
        return new Refresh(with(h -> refresher.with(r -> Native.oidcLoginStart(h, r, ext))));
    }

    /** A running refresh thread ({@link #start}); {@link #close()} stops it and waits for it. */
    public static final class Refresh extends NativeHandle {
        private Refresh(long handle) {
            super(handle, Native::oidcRefreshStop);
        }
    }
}
