package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * An in-memory credential store for the PLAIN and SCRAM servers: users (a password, or SCRAM
 * credentials in Kafka's string form) and delegation tokens. Safe to share between threads.
 * It also serves Kafka's SCRAM credential APIs (KIP-554, {@link #handleScramRequest}).
 */
public final class CredentialStore extends NativeHandle {
    public CredentialStore() {
        super(create(), Native::storeFree);
    }

    private static long create() {
        Native.init();
        return Native.storeNew();
    }

    /**
     * Adds or replaces a user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, with SCRAM keys
     * derived at the core's minimum iteration count (4096, Kafka's).
     */
    public void addUser(String username, String password) throws KsaslException {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        run(h -> Native.storeAddUser(h, username, password, 0, false));
    }

    /** Adds or replaces a user; SCRAM keys are derived at {@code iterations} (at least 4096). */
    public void addUser(String username, String password, int iterations) throws KsaslException {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        run(h -> Native.storeAddUser(h, username, password, iterations, true));
    }

    /** Sets a user's SCRAM credential for one mechanism from Kafka's string form. */
    public void setScram(String username, String mechanism, String kafkaCredential) throws KsaslException {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(mechanism, "mechanism");
        Objects.requireNonNull(kafkaCredential, "kafkaCredential");
        run(h -> Native.storeSetScram(h, username, mechanism, kafkaCredential));
    }

    /** Sets (or with an empty value clears) an absolute expiry on a user's credentials. */
    public void setUserExpiry(String username, OptionalLong expiryMs) throws KsaslException {
        Objects.requireNonNull(username, "username");
        run(h -> Native.storeSetUserExpiry(h, username, Time.raw(expiryMs)));
    }

    /** Removes a user; returns whether it existed. */
    public boolean removeUser(String username) throws KsaslException {
        Objects.requireNonNull(username, "username");
        return with(h -> Native.storeRemoveUser(h, username));
    }

    /** Adds a delegation token's SCRAM credential, owned by {@code owner}, with an optional expiry. */
    public void setToken(String tokenId, String mechanism, String kafkaCredential, String owner, OptionalLong expiryMs)
            throws KsaslException {
        Objects.requireNonNull(tokenId, "tokenId");
        Objects.requireNonNull(mechanism, "mechanism");
        Objects.requireNonNull(kafkaCredential, "kafkaCredential");
        Objects.requireNonNull(owner, "owner");
        run(h -> Native.storeSetToken(h, tokenId, mechanism, kafkaCredential, owner, Time.raw(expiryMs)));
    }

    /**
     * Serves one KIP-554 request, DescribeUserScramCredentials (api key 50) or
     * AlterUserScramCredentials (51), from a connection the host has authenticated and
     * authorized (Kafka requires DESCRIBE or ALTER on the cluster). Refusals are Kafka error
     * codes inside the response, with Kafka's texts; a changed credential is what the next
     * login or re-authentication of that user is checked against.
     *
     * @param frame the request frame without its length prefix
     * @return the response frame, length-prefixed
     * @throws KsaslException when the request cannot be parsed ({@code INVALID_REQUEST}, or
     *     {@code UNSUPPORTED_VERSION}; Kafka closes such connections); nothing is changed then
     */
    public byte[] handleScramRequest(byte[] frame) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        return with(h -> Native.storeHandleScramRequest(h, frame));
    }

    /**
     * The versions of the SCRAM credential APIs that {@link #handleScramRequest} serves, as a
     * Kafka 4 broker advertises them, for an ApiVersions answer
     * ({@link ServerConfig.Builder#addScramCredentialApiVersions()} adds them to a builder).
     */
    public static List<DelegationTokenCodec.ApiRange> scramCredentialApiVersions() {
        Native.init();
        short[] t = Native.storeScramApiVersions();
        List<DelegationTokenCodec.ApiRange> out = new ArrayList<>();
        for (int i = 0; i + 2 < t.length; i += 3) {
            out.add(new DelegationTokenCodec.ApiRange(t[i], t[i + 1], t[i + 2]));
        }
        return List.copyOf(out);
    }
}
