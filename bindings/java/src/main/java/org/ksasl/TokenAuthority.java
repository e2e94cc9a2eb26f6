package org.ksasl;

import java.util.List;
import java.util.Objects;

/**
 * Creates, renews, expires, describes and sweeps delegation tokens (KIP-48) with Apache Kafka's
 * rules, serves Kafka's token APIs (38-41, {@link #handleRequest}), and answers
 * {@code tokenauth} SCRAM logins ({@link MechanismRegistry#addPasswordServers(CredentialStore,
 * TokenAuthority)}). Safe to share between threads.
 *
 * <p>A token's HMAC is HMAC-SHA512 of its id under the secret key
 * ({@code delegation.token.secret.key}); it is never stored, so {@link #exportRecords()} holds
 * no secret. The authority never reads the clock: every call takes {@code nowMs}, and
 * {@link #nextSweepMs()} says when to call {@link #sweep}. Principals are {@code TYPE:NAME}
 * ({@code User:alice}); a bare name means {@code User:<name>}. Only {@code User} principals can
 * own or renew tokens.
 *
 * <p>Failures of an operation are {@link KsaslCredentialException}s with the codes
 * {@code DELEGATION_TOKEN_NOT_FOUND}, {@code DELEGATION_TOKEN_OWNER_MISMATCH},
 * {@code DELEGATION_TOKEN_EXPIRED}, {@code INVALID_PRINCIPAL_TYPE} and
 * {@code INVALID_CREDENTIAL_FORMAT} (malformed records).
 */
public final class TokenAuthority extends NativeHandle {
    private static final long[] DEFAULTS = defaults();

    private static long[] defaults() {
        Native.init();
        return Native.tokenAuthorityDefaults();
    }

    /** Kafka's default {@code delegation.token.max.lifetime.ms} (7 days), from the core. */
    public static final long DEFAULT_MAX_LIFETIME_MS = DEFAULTS[0];
    /** Kafka's default {@code delegation.token.expiry.time.ms} (1 day), from the core. */
    public static final long DEFAULT_EXPIRY_TIME_MS = DEFAULTS[1];
    /** Kafka's default {@code delegation.token.expiry.check.interval.ms} (1 hour), from the core. */
    public static final long DEFAULT_EXPIRY_CHECK_INTERVAL_MS = DEFAULTS[2];

    /**
     * An authority with Kafka's default lifetimes (the core's).
     *
     * @throws KsaslArgumentException when the key is empty
     */
    public TokenAuthority(String secretKey) throws KsaslException {
        super(create(secretKey, null), Native::tokenAuthorityFree);
    }

    /**
     * An authority with Kafka's {@code delegation.token.*} settings.
     *
     * @param secretKey {@code delegation.token.secret.key} (identical on every broker of a cluster)
     * @param maxLifetimeMs {@code delegation.token.max.lifetime.ms}: the hard cap from issue time
     * @param expiryTimeMs {@code delegation.token.expiry.time.ms}: the default and largest renewal
     * @param expiryCheckIntervalMs {@code delegation.token.expiry.check.interval.ms}: the sweep period
     * @throws KsaslArgumentException when the key is empty or a setting is below 1
     */
    public TokenAuthority(String secretKey, long maxLifetimeMs, long expiryTimeMs, long expiryCheckIntervalMs)
            throws KsaslException {
        super(create(secretKey, new long[] {maxLifetimeMs, expiryTimeMs, expiryCheckIntervalMs}),
                Native::tokenAuthorityFree);
    }

    /** Owns an authority handle the native side made (a listener's, {@link ServerSetup#tokens()}). */
    TokenAuthority(long handle) {
        super(handle, Native::tokenAuthorityFree);
    }

    private static long create(String secretKey, long[] settings) throws KsaslException {
        Objects.requireNonNull(secretKey, "secretKey");
        Native.init();
        return Native.tokenAuthorityNew(secretKey, settings);
    }

    /** Creates a token owned and requested by {@code owner}, with the default lifetimes and no renewers. */
    public DelegationToken create(String owner, long nowMs) throws KsaslException {
        return create(owner, null, List.of(), -1, nowMs);
    }

    /**
     * Creates a token.
     *
     * @param owner whom a login with the token authenticates as
     * @param requester who asks for it ({@code null}: the owner)
     * @param renewers who else may renew or expire it ({@code null}: nobody)
     * @param maxLifetimeMs a positive value shortens the maximum lifetime below
     *     {@code delegation.token.max.lifetime.ms}; 0 or less takes the default
     * @throws KsaslCredentialException {@code INVALID_PRINCIPAL_TYPE} for a non-User owner or renewer
     */
    public DelegationToken create(String owner, String requester, List<String> renewers, long maxLifetimeMs,
            long nowMs) throws KsaslException {
        Objects.requireNonNull(owner, "owner");
        String[] r = renewers == null ? new String[0] : renewers.toArray(new String[0]);
        return DelegationToken.of(with(h -> Native.tokenAuthorityCreate(h, owner, requester, r, maxLifetimeMs, nowMs)));
    }

    /**
     * Renews the token with this HMAC for {@code caller} (its owner or a renewer): the new expiry
     * is {@code now + period} capped by the token's maximum, where the period is
     * {@code delegation.token.expiry.time.ms} or the smaller {@code periodMs} when positive.
     *
     * @return the new expiry
     * @throws KsaslCredentialException {@code DELEGATION_TOKEN_NOT_FOUND},
     *     {@code DELEGATION_TOKEN_OWNER_MISMATCH} or {@code DELEGATION_TOKEN_EXPIRED}
     */
    public long renew(byte[] hmac, String caller, long periodMs, long nowMs) throws KsaslException {
        Objects.requireNonNull(hmac, "hmac");
        Objects.requireNonNull(caller, "caller");
        return with(h -> Native.tokenAuthorityRenew(h, hmac, caller, periodMs, nowMs));
    }

    /**
     * Expires the token with this HMAC for {@code caller}: a negative period removes it now
     * (returning {@code nowMs}); otherwise its expiry becomes {@code now + period} capped by its
     * maximum.
     *
     * @return the new expiry
     * @throws KsaslCredentialException as {@link #renew}
     */
    public long expire(byte[] hmac, String caller, long periodMs, long nowMs) throws KsaslException {
        Objects.requireNonNull(hmac, "hmac");
        Objects.requireNonNull(caller, "caller");
        return with(h -> Native.tokenAuthorityExpire(h, hmac, caller, periodMs, nowMs));
    }

    /**
     * The tokens owned by one of {@code owners} ({@code null}: every token), with their HMACs,
     * in token-id order. Who may see what is the host's decision.
     */
    public List<DelegationToken> describe(List<String> owners) throws KsaslException {
        String[] o = owners == null ? null : owners.toArray(new String[0]);
        return DelegationToken.all(with(h -> Native.tokenAuthorityDescribe(h, o)));
    }

    /** Removes every expired token; returns their ids. Call at {@link #nextSweepMs()}. */
    public List<String> sweep(long nowMs) throws KsaslException {
        return new Fields(with(h -> Native.tokenAuthoritySweep(h, nowMs))).strs();
    }

    /**
     * When the next sweep is due: one check interval after the last one; {@link Long#MIN_VALUE}
     * (at once) before the first.
     */
    public long nextSweepMs() {
        return with(Native::tokenAuthorityNextSweep);
    }

    /** The HMAC of a token id under this authority's secret key (a secret). */
    public byte[] hmac(String tokenId) {
        Objects.requireNonNull(tokenId, "tokenId");
        return with(h -> Native.tokenAuthorityHmac(h, tokenId));
    }

    /** Every token as a JSON array of records (Kafka's DelegationTokenRecord fields), for persistence; no secrets. */
    public String exportRecords() throws KsaslException {
        return with(Native::tokenAuthorityExport);
    }

    /**
     * Loads records written by {@link #exportRecords()} (replacing tokens with the same id);
     * returns how many. Nothing is loaded if any record is malformed.
     *
     * @throws KsaslCredentialException {@code INVALID_CREDENTIAL_FORMAT} for malformed records
     */
    public int importRecords(String json) throws KsaslException {
        Objects.requireNonNull(json, "json");
        return with(h -> Native.tokenAuthorityImport(h, json));
    }

    /**
     * Serves one delegation-token request (CreateDelegationToken, RenewDelegationToken,
     * ExpireDelegationToken or DescribeDelegationToken; {@code frame} without its length
     * prefix) of a connection authenticated as {@code principal}. Returns the response frame,
     * length-prefixed, with Kafka's error codes (64, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, when
     * the connection itself logged in with a token). Authorization beyond that is the host's.
     *
     * @param tokenAuthenticated whether the connection logged in with a delegation token
     *     ({@link AuthOutcome#tokenAuthenticated()})
     * @throws KsaslException when the request cannot be parsed (Kafka closes such connections)
     */
    public byte[] handleRequest(byte[] frame, String principal, boolean tokenAuthenticated, long nowMs)
            throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        Objects.requireNonNull(principal, "principal");
        return with(h -> Native.tokenAuthorityHandleRequest(h, frame, principal, tokenAuthenticated, nowMs));
    }

    /** {@link #handleRequest(byte[], String, boolean, long)} for the session of an authenticated connection. */
    public byte[] handleRequest(byte[] frame, ServerSession session, long nowMs) throws KsaslException {
        Objects.requireNonNull(session, "session");
        return handleRequest(frame, session.principal(), session.outcome().tokenAuthenticated(), nowMs);
    }
}
