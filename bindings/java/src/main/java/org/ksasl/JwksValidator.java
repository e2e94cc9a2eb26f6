package org.ksasl;

import java.util.List;
import java.util.Objects;

/**
 * Validates signed JWTs (RS*, PS*, ES*, EdDSA, and HS* with a shared secret) against a JWKS the
 * host supplies and refreshes (ksasl does no HTTP): expiry and not-before with clock skew,
 * issuer, audience, the subject claim as principal, the scope claim. Every option of the
 * core's {@code JwtValidatorConfig} is a {@link Builder} setter; unset options keep the core's
 * defaults (Kafka's). Safe to share between threads.
 */
public final class JwksValidator extends NativeHandle {
    /** A validator with the core's defaults: no issuer or audience check, 30 s of clock skew. */
    public JwksValidator() throws KsaslException {
        this(builder().setters);
    }

    /** A validator requiring {@code issuer} and {@code audience} when not null, with a clock skew. */
    public JwksValidator(String issuer, String audience, long clockSkewMs) throws KsaslException {
        this(withIssuerAndAudience(issuer, audience).setClockSkewMs(clockSkewMs).setters);
    }

    private static Builder withIssuerAndAudience(String issuer, String audience) {
        Builder b = builder();
        if (issuer != null) {
            b.setIssuer(issuer);
        }
        if (audience != null) {
            b.setAudiences(List.of(audience));
        }
        return b;
    }

    private JwksValidator(Setters setters) throws KsaslException {
        super(create(setters), Native::jwksFree);
    }

    private static long create(Setters setters) throws KsaslException {
        Native.init();
        long c = Native.jwtConfigNew();
        try {
            return Native.jwksNew(setters.apply(c));
        } finally {
            Native.jwtConfigFree(c);
        }
    }

    /** Starts a validator with the core's defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Replaces the key set from its JSON; returns how many keys are usable. */
    public int setJwks(String jwksJson, long nowMs) throws KsaslException {
        Objects.requireNonNull(jwksJson, "jwksJson");
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
        Objects.requireNonNull(token, "token");
        return ValidatedToken.of(with(h -> Native.jwksValidate(h, token, nowMs)));
    }

    /**
     * The options of a {@link JwksValidator} ({@code sasl.oauthbearer.*}); {@link #build()}
     * checks them with the core's rules ({@code INVALID_CONFIG}).
     */
    public static final class Builder {
        private final Setters setters = new Setters();

        private Builder() {}

        /** The required {@code iss} ({@code sasl.oauthbearer.expected.issuer}; default: not checked). */
        public Builder setIssuer(String issuer) {
            Objects.requireNonNull(issuer, "issuer");
            setters.add(c -> Native.jwtConfigSetIssuer(c, issuer));
            return this;
        }

        /**
         * The accepted audiences ({@code sasl.oauthbearer.expected.audience}; default none: as
         * in Kafka, a token that carries {@code aud} is then refused).
         */
        public Builder setAudiences(List<String> audiences) {
            String[] a = audiences.toArray(new String[0]);
            setters.add(c -> Native.jwtConfigSetAudiences(c, a));
            return this;
        }

        /** The allowed clock skew for {@code exp}, {@code nbf} and {@code iat} (default 30 s). */
        public Builder setClockSkewMs(long ms) {
            setters.add(c -> Native.jwtConfigSetClockSkewMs(c, ms));
            return this;
        }

        /** The principal claim ({@code sasl.oauthbearer.sub.claim.name}, default {@code sub}). */
        public Builder setSubjectClaimName(String name) {
            Objects.requireNonNull(name, "name");
            setters.add(c -> Native.jwtConfigSetSubjectClaimName(c, name));
            return this;
        }

        /** The scope claim ({@code sasl.oauthbearer.scope.claim.name}, default {@code scope}). */
        public Builder setScopeClaimName(String name) {
            Objects.requireNonNull(name, "name");
            setters.add(c -> Native.jwtConfigSetScopeClaimName(c, name));
            return this;
        }

        /** Also refuse an {@code iat} further in the future than the skew (default off, as Kafka). */
        public Builder setValidateIat(boolean validate) {
            setters.add(c -> Native.jwtConfigSetValidateIat(c, validate));
            return this;
        }

        /**
         * The accepted algorithms by JOSE name ({@code RS256}, {@code ES384}, {@code EdDSA},
         * {@code HS256}, ...; default every asymmetric one). An unknown name is refused by
         * {@link #build()}; HMAC algorithms need {@link #setHmacSecret}.
         */
        public Builder setAlgorithms(List<String> names) {
            String[] a = names.toArray(new String[0]);
            setters.add(c -> Native.jwtConfigSetAlgorithms(c, a));
            return this;
        }

        /** The shared secret of HS256/384/512 (default none: HMAC tokens are refused). */
        public Builder setHmacSecret(byte[] secret) {
            byte[] s = Objects.requireNonNull(secret, "secret").clone();
            setters.add(c -> Native.jwtConfigSetHmacSecret(c, s));
            return this;
        }

        /** The largest token accepted, in bytes (default 512 KiB). */
        public Builder setMaxTokenSize(long bytes) {
            setters.add(c -> Native.jwtConfigSetMaxTokenSize(c, bytes));
            return this;
        }

        /** How often the JWKS should be fetched again ({@code sasl.oauthbearer.jwks.endpoint.refresh.ms}, default 1 h). */
        public Builder setRefreshPeriodMs(long ms) {
            setters.add(c -> Native.jwtConfigSetRefreshPeriodMs(c, ms));
            return this;
        }

        /** The smallest interval between refetches asked for by the same unknown {@code kid} (default 1 min). */
        public Builder setUnknownKidIntervalMs(long ms) {
            setters.add(c -> Native.jwtConfigSetUnknownKidIntervalMs(c, ms));
            return this;
        }

        /** The validator, if every option is valid. */
        public JwksValidator build() throws KsaslException {
            return new JwksValidator(setters);
        }
    }
}
