package org.ksasl;

import java.util.List;

/**
 * Validates signed JWTs (RS*, PS*, ES*, EdDSA) against a JWKS the host supplies and refreshes
 * (ksasl does no HTTP): expiry and not-before with clock skew, issuer, audience, the
 * {@code sub} claim as principal. Safe to share between threads.
 */
public final class JwksValidator extends NativeHandle {
    /** A validator with no issuer or audience check and 30 s of clock skew. */
    public JwksValidator() throws KsaslException {
        this(null, null, 30_000);
    }

    /** A validator requiring {@code issuer} and {@code audience} when not null. */
    public JwksValidator(String issuer, String audience, long clockSkewMs) throws KsaslException {
        super(create(issuer, audience, clockSkewMs), Native::jwksFree);
    }

    private static long create(String issuer, String audience, long clockSkewMs) throws KsaslException {
        Native.init();
        return Native.jwksNew(issuer, audience, clockSkewMs);
    }

    /** Replaces the key set from its JSON; returns how many keys are usable. */
    public int setJwks(String jwksJson, long nowMs) throws KsaslException {
        java.util.Objects.requireNonNull(jwksJson, "jwksJson");
        return with(h -> Native.jwksSet(h, jwksJson, nowMs));
    }

    /**
     * When the host should fetch the JWKS again (ms since the epoch): a time in the past
     * ({@link Long#MIN_VALUE}) while no key set is loaded, earlier than the periodic refresh
     * after a token named an unknown key.
     */
    public long nextRefreshMs() {
        return with(Native::jwksNextRefresh);
    }

    /**
     * Validates a token.
     *
     * @throws KsaslAuthenticationException with the reason, and the OAUTHBEARER {@code status}
     *     in {@link KsaslException#details()}
     */
    public ValidatedToken validate(String token, long nowMs) throws KsaslException {
        java.util.Objects.requireNonNull(token, "token");
        Object[] v = with(h -> Native.jwksValidate(h, token, nowMs));
        return new ValidatedToken((String) v[0], (Long) v[1], List.of((String[]) v[2]));
    }
}
