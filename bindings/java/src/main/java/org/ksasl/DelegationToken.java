package org.ksasl;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A delegation token (KIP-48) with its HMAC: what {@link TokenAuthority#create} and
 * {@link TokenAuthority#describe} hand out, and what a CreateDelegationToken or
 * DescribeDelegationToken response carries ({@link DelegationTokenCodec}). A client logs in with SCRAM,
 * username {@link #tokenId()}, password {@link #hmacBase64()} and {@code tokenauth=true}
 * ({@link MechanismRegistry#addTokenClients}, or {@link Refresher#setDelegationToken} with
 * {@link MechanismRegistry#addRefreshingPasswordClients}).
 *
 * <p>Immutable. The HMAC and its base64 are secrets: {@link #toString()} never shows them, and
 * {@link #hmac()} returns a copy.
 */
public final class DelegationToken {
    private final String tokenId;
    private final byte[] hmac;
    private final String hmacBase64;
    private final String owner;
    private final String requester;
    private final List<String> renewers;
    private final long issueMs;
    private final long expiryMs;
    private final long maxMs;

    private DelegationToken(String tokenId, byte[] hmac, String hmacBase64, String owner, String requester,
            List<String> renewers, long issueMs, long expiryMs, long maxMs) {
        this.tokenId = tokenId;
        this.hmac = hmac;
        this.hmacBase64 = hmacBase64;
        this.owner = owner;
        this.requester = requester;
        this.renewers = List.copyOf(renewers);
        this.issueMs = issueMs;
        this.expiryMs = expiryMs;
        this.maxMs = maxMs;
    }

    /** From the native record of one token. */
    static DelegationToken of(byte[] record) {
        return read(new Fields(record));
    }

    /** From the native record of a count and the tokens. */
    static List<DelegationToken> all(byte[] record) {
        Fields f = new Fields(record);
        int n = f.i32();
        List<DelegationToken> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(read(f));
        }
        return List.copyOf(out);
    }

    /** Id, HMAC, its base64, owner, requester, renewers, issue, expiry and maximum times. */
    private static DelegationToken read(Fields f) {
        String id = f.str();
        byte[] hmac = f.bytes();
        String base64 = new String(f.bytes(), java.nio.charset.StandardCharsets.US_ASCII);
        String owner = f.str();
        String requester = f.str();
        List<String> renewers = f.strs();
        return new DelegationToken(id, hmac, base64, owner, requester, renewers, f.i64(), f.i64(), f.i64());
    }

    /**
     * A token received elsewhere (e.g. from Kafka's {@code Admin.createDelegationToken()}), to
     * install in a {@link Refresher}. Principals are {@code TYPE:NAME} ({@code User:alice}); a bare
     * name means {@code User:<name>}.
     *
     * @param requester the principal that asked for it, or {@code null} for the owner
     * @param renewers who else may renew it (may be empty)
     */
    public static DelegationToken of(String tokenId, byte[] hmac, String owner, String requester,
            List<String> renewers, long issueMs, long expiryMs, long maxMs) throws KsaslException {
        Objects.requireNonNull(tokenId, "tokenId");
        Objects.requireNonNull(hmac, "hmac");
        Objects.requireNonNull(owner, "owner");
        Native.init();
        return of(Native.tokenNew(tokenId, hmac, principals(owner, requester == null ? owner : requester,
                renewers == null ? List.of() : renewers), new long[] {issueMs, expiryMs, maxMs}));
    }

    private static String[] principals(String owner, String requester, List<String> renewers) {
        String[] p = new String[2 + renewers.size()];
        p[0] = owner;
        p[1] = requester;
        for (int i = 0; i < renewers.size(); i++) {
            p[2 + i] = Objects.requireNonNull(renewers.get(i), "renewer");
        }
        return p;
    }

    /** {@code {owner, requester, renewers...}} for the native layer. */
    String[] principals() {
        return principals(owner, requester, renewers);
    }

    /** {@code {issue, expiry, max}} for the native layer. */
    long[] times() {
        return new long[] {issueMs, expiryMs, maxMs};
    }

    /** The raw HMAC without a copy, for the native layer. */
    byte[] hmacRaw() {
        return hmac;
    }

    /** The token id (22 characters of base64url): the SCRAM username with {@code tokenauth=true}. */
    public String tokenId() {
        return tokenId;
    }

    /** A copy of the 64-byte HMAC-SHA512 (a secret): what renew and expire requests identify the token by. */
    public byte[] hmac() {
        return hmac.clone();
    }

    /** The SCRAM password of the token: standard base64 of the HMAC, with padding (a secret). */
    public String hmacBase64() {
        return hmacBase64;
    }

    /** Whom a login with the token authenticates as, e.g. {@code User:alice}. */
    public String owner() {
        return owner;
    }

    /** Who asked for the token (the owner unless created on someone's behalf). */
    public String requester() {
        return requester;
    }

    /** Who else may renew or expire it ({@code TYPE:NAME}). */
    public List<String> renewers() {
        return renewers;
    }

    /** When it was issued (ms since the epoch). */
    public long issueMs() {
        return issueMs;
    }

    /** When it expires unless renewed (ms since the epoch). */
    public long expiryMs() {
        return expiryMs;
    }

    /** The latest expiry any renewal can reach (ms since the epoch). */
    public long maxMs() {
        return maxMs;
    }

    /** The same token with a new expiry: the one a renew returned. */
    public DelegationToken renewed(long newExpiryMs) {
        return new DelegationToken(tokenId, hmac, hmacBase64, owner, requester, renewers, issueMs, newExpiryMs, maxMs);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof DelegationToken)) {
            return false;
        }
        DelegationToken t = (DelegationToken) o;
        return tokenId.equals(t.tokenId) && MessageDigest.isEqual(hmac, t.hmac) && owner.equals(t.owner)
                && requester.equals(t.requester) && renewers.equals(t.renewers) && issueMs == t.issueMs
                && expiryMs == t.expiryMs && maxMs == t.maxMs;
    }

    @Override
    public int hashCode() {
        // The HMAC is left out: a hash code should not leak anything about a secret.
        return Objects.hash(tokenId, owner, requester, renewers, issueMs, expiryMs, maxMs);
    }

    @Override
    public String toString() {
        return "DelegationToken[tokenId=" + tokenId + ", hmac=<redacted>, owner=" + owner + ", requester=" + requester
                + ", renewers=" + renewers + ", issueMs=" + issueMs + ", expiryMs=" + expiryMs + ", maxMs=" + maxMs
                + "]";
    }
}
