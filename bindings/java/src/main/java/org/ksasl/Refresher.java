package org.ksasl;

import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Refreshes OAUTHBEARER tokens (or delegation tokens, {@link #setDelegationToken}) on Kafka's
 * {@code sasl.login.refresh.*} schedule, in librdkafka's shape: {@link #poll} says when a new
 * token must be fetched, the host fetches it and calls {@link #setToken} (or
 * {@link #setTokenFailure}). Clients registered with
 * {@link MechanismRegistry#addOAuthBearerClient} always present the current token, never an
 * expired one. Safe to share between threads.
 */
public final class Refresher extends NativeHandle {
    /** A refresher with Kafka's defaults (the core's: window factor 0.8, jitter 0.05, minimum period 60 s, buffer 300 s). */
    public Refresher() throws KsaslException {
        this(builder().setters);
    }

    /** The four {@code sasl.login.refresh.*} settings (see {@link Builder} for all of them). */
    public Refresher(double windowFactor, double windowJitter, long minPeriodSeconds, long bufferSeconds)
            throws KsaslException {
        this(builder().setWindowFactor(windowFactor).setWindowJitter(windowJitter)
                .setMinPeriodSeconds(minPeriodSeconds).setBufferSeconds(bufferSeconds).setters);
    }

    private Refresher(Setters setters) throws KsaslException {
        super(create(setters), Native::refresherFree);
    }

    /** Owns a refresher handle the native side made (a {@link ClientSetup}'s). */
    Refresher(long handle) {
        super(handle, Native::refresherFree);
    }

    private static long create(Setters setters) throws KsaslException {
        Native.init();
        long c = Native.refreshConfigNew();
        try {
            return Native.refresherNew(setters.apply(c));
        } finally {
            Native.refreshConfigFree(c);
        }
    }

    /** Starts a refresher with Kafka's defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** {@code true} when a new token must be fetched now (the refresh is then outstanding). */
    public boolean poll(long nowMs) {
        return with(h -> Native.refresherPoll(h, nowMs));
    }

    /**
     * Callback form: if a refresh is due, runs the refresher's own login and returns
     * {@code true}. Only a refresher of a {@link ClientSetup} has one (Kafka's unsecured tokens
     * made in the core; an OIDC login at the identity provider, which blocks the calling thread
     * for the HTTPS request); for any other refresher a due refresh is answered as a failure
     * ("no refresh callback is set") and {@code false} returned: answer {@link #poll} yourself.
     * Call it at {@link #nextDeadline()}.
     */
    public boolean runDue(long nowMs) {
        return with(h -> Native.refresherRunDue(h, nowMs));
    }

    /** Installs a token with its absolute expiry (ms since the epoch); returns its generation. */
    public long setToken(String token, long expiryMs, String principal, Map<String, String> extensions, long nowMs)
            throws KsaslException {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(principal, "principal");
        String[] ext = Decode.flatten(extensions == null ? Map.of() : extensions);
        return with(h -> Native.refresherSetToken(h, token, expiryMs, principal, ext, nowMs));
    }

    /** Installs a token made by {@link OAuthBearerToken#unsecured} or fetched elsewhere. */
    public long setToken(OAuthBearerToken token, long nowMs) throws KsaslException {
        return setToken(token.value(), token.expiryMs(), token.principal(), token.extensions(), nowMs);
    }

    /**
     * Installs a delegation token as the refresher's credential: clients registered with
     * {@link MechanismRegistry#addRefreshingPasswordClients} log in with it (SCRAM,
     * {@code tokenauth=true}). A refresh is due on Kafka's schedule before its expiry, never past
     * its maximum lifetime: answer {@link #poll} with the renewed token
     * ({@link DelegationToken#renewed}) or a new one. Returns the generation.
     */
    public long setDelegationToken(DelegationToken token, long nowMs) throws KsaslException {
        Objects.requireNonNull(token, "token");
        String[] principals = token.principals();
        long[] times = token.times();
        return with(h -> Native.refresherSetDelegationToken(h, token.tokenId(), token.hmacRaw(), principals, times,
                nowMs));
    }

    /**
     * Installs AWS credentials as the refresher's credential, for clients registered with
     * {@link MechanismRegistry#addAwsMskIamClient(String, String, Refresher, String, String)} or
     * {@link MechanismRegistry#addMskOAuthBearerClient(String, Refresher, String)}: they sign
     * with them from their next (re-)authentication on. The credentials must carry their expiry,
     * which schedules the next refresh as for a token.
     *
     * @param credentials the new credentials (the refresher keeps its own copy)
     * @param principal the principal they stand for
     * @param nowMs the current time, ms since the epoch
     * @return the new generation
     * @throws KsaslException ({@code INVALID_CREDENTIAL_EXPIRY}) for credentials without an expiry
     */
    public long setAwsCredentials(AwsCredentials credentials, String principal, long nowMs) throws KsaslException {
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(principal, "principal");
        return with(h -> credentials.with(c -> Native.refresherSetAwsCredentials(h, c, principal, nowMs)));
    }

    /**
     * MSK's presigned OAUTHBEARER token for {@code region} at {@code nowMs}, signed with the AWS
     * credentials the refresher currently holds (see {@link AwsCredentials#mskToken}).
     *
     * @param region the cluster's region
     * @param userAgent the user agent the token reports; {@code null}: ksasl's
     * @param nowMs the signing time, ms since the epoch
     * @return the token (its generation is 0)
     * @throws KsaslException when the refresher holds no valid AWS credentials
     */
    public OAuthBearerToken mskToken(String region, String userAgent, long nowMs) throws KsaslException {
        Objects.requireNonNull(region, "region");
        return OAuthBearerToken.of(with(r -> Native.mskToken(region, 0, r, userAgent, nowMs)));
    }

    /** Reports a failed refresh: the old token stays while valid; the next attempt is scheduled. */
    public void setTokenFailure(String reason, long nowMs) throws KsaslException {
        Objects.requireNonNull(reason, "reason");
        run(h -> Native.refresherSetTokenFailure(h, reason, nowMs));
    }

    /** When a refresh is next due; empty while one is outstanding. */
    public OptionalLong nextDeadline() {
        return Time.opt(with(Native::refresherNextDeadline));
    }

    /** The generation of the current token (0: none yet). */
    public long generation() {
        return with(Native::refresherGeneration);
    }

    /**
     * The current token.
     *
     * @throws KsaslCredentialException when no valid token is installed
     */
    public OAuthBearerToken current(long nowMs) throws KsaslException {
        return OAuthBearerToken.of(with(h -> Native.refresherCurrent(h, nowMs)));
    }

    /**
     * The {@code sasl.login.refresh.*} and {@code sasl.login.retry.backoff.*} settings; unset ones
     * keep Kafka's defaults, and {@link #build()} checks them with Kafka's ranges
     * ({@code INVALID_CONFIG}).
     */
    public static final class Builder {
        private final Setters setters = new Setters();

        private Builder() {}

        /** {@code sasl.login.refresh.window.factor} (0.8, in [0.5, 1.0]). */
        public Builder setWindowFactor(double v) {
            setters.add(c -> Native.refreshConfigSetWindowFactor(c, v));
            return this;
        }

        /** {@code sasl.login.refresh.window.jitter} (0.05, in [0.0, 0.25]). */
        public Builder setWindowJitter(double v) {
            setters.add(c -> Native.refreshConfigSetWindowJitter(c, v));
            return this;
        }

        /** {@code sasl.login.refresh.min.period.seconds} (60, in [0, 900]). */
        public Builder setMinPeriodSeconds(long v) {
            setters.add(c -> Native.refreshConfigSetMinPeriodSeconds(c, v));
            return this;
        }

        /** {@code sasl.login.refresh.buffer.seconds} (300, in [0, 3600]). */
        public Builder setBufferSeconds(long v) {
            setters.add(c -> Native.refreshConfigSetBufferSeconds(c, v));
            return this;
        }

        /** Whether to keep trying after the credential expired (true: OAUTHBEARER's relogin before logout). */
        public Builder setReloginAllowedBeforeLogout(boolean v) {
            setters.add(c -> Native.refreshConfigSetReloginAllowedBeforeLogout(c, v));
            return this;
        }

        /** {@code sasl.login.retry.backoff.ms} (10 000): the wait after a failed refresh. */
        public Builder setRetryBackoffMs(long v) {
            setters.add(c -> Native.refreshConfigSetRetryBackoffMs(c, v));
            return this;
        }

        /** {@code sasl.login.retry.backoff.max.ms}: above the backoff, the wait doubles per failure up to it. */
        public Builder setRetryBackoffMaxMs(long v) {
            setters.add(c -> Native.refreshConfigSetRetryBackoffMaxMs(c, v));
            return this;
        }

        /** The refresher, if every setting is valid. */
        public Refresher build() throws KsaslException {
            return new Refresher(setters);
        }
    }
}
