package org.ksasl.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * What the server saw on one connection. Written by the connection's thread, read by anyone
 * (the tests, the summary printed at exit): every method is synchronized.
 */
public final class ConnectionStats {
    /** Why a connection ended. */
    public enum CloseReason {
        /** The client closed it. */
        CLIENT,
        /** A request arrived after the session expired: closed without an answer (Kafka's rule). */
        EXPIRED,
        /** An authentication or re-authentication failed. */
        AUTHENTICATION_FAILED,
        /** A malformed request, an oversize frame, or an API or version this server does not implement. */
        PROTOCOL,
        /** The server stopped. */
        STOPPED,
        /** An unexpected error (logged). */
        ERROR
    }

    /**
     * One successful authentication.
     *
     * @param atMs when it completed (server clock)
     * @param reauthentication whether it was a KIP-368 re-authentication
     * @param principal the principal, e.g. {@code User:alice}
     * @param lifetimeMs the session lifetime sent to the client (0: none)
     * @param credentialExpiryMs the credential's own expiry (an OAuth token's {@code exp}, a
     *     delegation token's expiry), if any
     * @param tokenAuthenticated whether the client logged in with a delegation token
     */
    public record Authentication(long atMs, boolean reauthentication, String principal, long lifetimeMs,
            OptionalLong credentialExpiryMs, boolean tokenAuthenticated) {}

    private final long id;
    private final String peer;
    private final long openedMs;
    private String clientId;
    private String mechanism;
    private String principal;
    private boolean tokenAuthenticated;
    private final List<Authentication> authentications = new ArrayList<>();
    private final List<Long> reauthenticationStarts = new ArrayList<>();
    private int failedAuthentications;
    private int failedReauthentications;
    private String lastFailure;
    private final Map<Short, Integer> requests = new TreeMap<>();
    private final Map<Short, Integer> authenticationFrames = new TreeMap<>();
    private long lastRequestMs = -1;
    private long records;
    private long closedMs = -1;
    private CloseReason closeReason;

    ConnectionStats(long id, String peer, long openedMs) {
        this.id = id;
        this.peer = peer;
        this.openedMs = openedMs;
    }

    public long id() {
        return id;
    }

    public String peer() {
        return peer;
    }

    public long openedMs() {
        return openedMs;
    }

    public synchronized String clientId() {
        return clientId;
    }

    /** The mechanism of the last successful authentication, or {@code null}. */
    public synchronized String mechanism() {
        return mechanism;
    }

    /** The principal of the last successful authentication, or {@code null}. */
    public synchronized String principal() {
        return principal;
    }

    /** Whether the last successful authentication used a delegation token ({@code tokenauth=true}). */
    public synchronized boolean tokenAuthenticated() {
        return tokenAuthenticated;
    }

    /** Every successful authentication, the first one and then each re-authentication. */
    public synchronized List<Authentication> authentications() {
        return List.copyOf(authentications);
    }

    /** Successful re-authentications. */
    public synchronized int reauthentications() {
        return (int) authentications.stream().filter(Authentication::reauthentication).count();
    }

    /** Re-authentications the client began (SaslHandshake on an authenticated connection). */
    public synchronized int reauthenticationsStarted() {
        return reauthenticationStarts.size();
    }

    /** When each re-authentication began (server clock), in order. */
    public synchronized List<Long> reauthenticationStarts() {
        return List.copyOf(reauthenticationStarts);
    }

    public synchronized int failedAuthentications() {
        return failedAuthentications;
    }

    public synchronized int failedReauthentications() {
        return failedReauthentications;
    }

    /** The server-side reason of the last failure (never sent to the client as such), or {@code null}. */
    public synchronized String lastFailure() {
        return lastFailure;
    }

    /** Frames of (re-)authentication exchanges handed to ksasl, by API key (e.g. 36: SaslAuthenticate). */
    public synchronized Map<Short, Integer> authenticationFrames() {
        return Map.copyOf(authenticationFrames);
    }

    /** Requests answered after authentication, by API key. */
    public synchronized Map<Short, Integer> requests() {
        return Map.copyOf(requests);
    }

    /** When the last request after authentication arrived, or -1. */
    public synchronized long lastRequestMs() {
        return lastRequestMs;
    }

    /** Records received in Produce requests. */
    public synchronized long records() {
        return records;
    }

    public synchronized boolean isOpen() {
        return closeReason == null;
    }

    /** When the connection closed, or -1 while it is open. */
    public synchronized long closedMs() {
        return closedMs;
    }

    /** Why the connection closed, or {@code null} while it is open. */
    public synchronized CloseReason closeReason() {
        return closeReason;
    }

    /** Whether the server closed the connection because its session had expired. */
    public synchronized boolean closedForExpiry() {
        return closeReason == CloseReason.EXPIRED;
    }

    synchronized void authenticated(long nowMs, boolean reauthentication, String mechanism, String principal,
            long lifetimeMs, OptionalLong credentialExpiryMs, boolean tokenAuthenticated) {
        this.mechanism = mechanism;
        this.principal = principal;
        this.tokenAuthenticated = tokenAuthenticated;
        authentications.add(new Authentication(nowMs, reauthentication, principal, lifetimeMs, credentialExpiryMs,
                tokenAuthenticated));
    }

    synchronized void reauthenticationStarted(long nowMs) {
        reauthenticationStarts.add(nowMs);
    }

    synchronized void failed(String why) {
        if (authentications.isEmpty()) {
            failedAuthentications++;
        } else {
            failedReauthentications++;
        }
        lastFailure = why;
    }

    /** A frame of an exchange (SaslHandshake, SaslAuthenticate, ApiVersions) handed to ksasl. */
    synchronized void authenticationFrame(short apiKey) {
        authenticationFrames.merge(apiKey, 1, Integer::sum);
    }

    synchronized void request(short apiKey, String clientId, long nowMs) {
        this.clientId = clientId;
        requests.merge(apiKey, 1, Integer::sum);
        lastRequestMs = nowMs;
    }

    synchronized void records(long n) {
        records += n;
    }

    synchronized void closed(CloseReason reason, long nowMs) {
        if (closeReason == null) {
            closeReason = reason;
            closedMs = nowMs;
        }
    }

    @Override
    public synchronized String toString() {
        return "connection " + id + " (" + peer + ", client " + clientId + "): " + principal + " with " + mechanism
                + (tokenAuthenticated ? " (delegation token)" : "") + ", " + authentications.size()
                + " authentications (" + reauthentications() + " re-authentications, "
                + failedAuthentications + "+" + failedReauthentications + " failed), requests " + requests
                + (closeReason == null ? ", open" : ", closed: " + closeReason);
    }
}
