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
    /** Kafka's defaults: window factor 0.8, jitter 0.05, minimum period 60 s, buffer 300 s. */
    public Refresher() throws KsaslException {
        this(0.8, 0.05, 60, 300);
    }

    /** The {@code sasl.login.refresh.*} settings. */
    public Refresher(double windowFactor, double windowJitter, long minPeriodSeconds, long bufferSeconds)
            throws KsaslException {
        super(create(windowFactor, windowJitter, minPeriodSeconds, bufferSeconds), Native::refresherFree);
    }

    private static long create(double f, double j, long min, long buffer) throws KsaslException {
        Native.init();
        return Native.refresherNew(f, j, min, buffer);
    }

    /** {@code true} when a new token must be fetched now (the refresh is then outstanding). */
    public boolean poll(long nowMs) {
        return with(h -> Native.refresherPoll(h, nowMs));
    }

    /** Installs a token with its absolute expiry (ms since the epoch); returns its generation. */
    public long setToken(String token, long expiryMs, String principal, Map<String, String> extensions, long nowMs)
            throws KsaslException {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(principal, "principal");
        String[] ext = Decode.flatten(extensions == null ? Map.of() : extensions);
        return with(h -> Native.refresherSetToken(h, token, expiryMs, principal, ext, nowMs));
    }

    /** Installs a token made by {@link OAuthToken#unsecured} or fetched elsewhere. */
    public long setToken(OAuthToken token, long nowMs) throws KsaslException {
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
    public OAuthToken current(long nowMs) throws KsaslException {
        Object[] t = with(h -> Native.refresherCurrent(h, nowMs));
        return new OAuthToken((String) t[0], (Long) t[1], (String) t[2], Decode.pairs((String[]) t[3]), (Long) t[4]);
    }
}
