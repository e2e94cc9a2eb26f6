package org.ksasl;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * One Kafka client connection's SASL state (ApiVersions, SaslHandshake, SaslAuthenticate, and
 * KIP-368 re-authentication). The host owns the socket: it writes {@link #transmit()}, hands
 * every received frame (without its 4-byte length) to {@link #handleFrame}, asks
 * {@link #beforeRequest} before each application request and calls {@link #handleTimeout} at
 * {@link #nextDeadline()}. Calls are serialized on the object; one connection is normally
 * driven by one thread.
 */
public final class ClientConnection extends NativeHandle {
    private static final ClientEvent.Kind[] EVENTS = ClientEvent.Kind.values();

    public ClientConnection(ClientConfig config) {
        super(create(config), Native::clientConnFree);
    }

    private static long create(ClientConfig config) {
        Objects.requireNonNull(config, "config");
        return config.with(Native::clientConnNew);
    }

    /** Starts the initial authentication; then write {@link #transmit()}. */
    public void start(long nowMs) throws KsaslException {
        run(h -> Native.clientConnStart(h, nowMs));
    }

    /** The bytes to write (length-prefixed frames); empty when there is nothing. */
    public byte[] transmit() {
        return with(Native::clientConnTransmit);
    }

    /**
     * Handles one received frame (without its length prefix).
     *
     * @throws KsaslException when authentication failed; close the connection
     */
    public synchronized ClientEvent handleFrame(byte[] frame, long nowMs) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        int[] event = new int[1];
        long[] times = new long[1];
        Object[] err = new Object[1];
        byte[] app = with(h -> Native.clientConnHandleFrame(h, frame, nowMs, event, times, err));
        ClientEvent.Kind kind = EVENTS[event[0]];
        ClientSession session = kind == ClientEvent.Kind.AUTHENTICATED || kind == ClientEvent.Kind.REAUTHENTICATED
                ? session() : null;
        return new ClientEvent(kind, app, session, (KsaslException) err[0],
                kind == ClientEvent.Kind.REAUTH_FAILED ? Time.opt(times[0]) : OptionalLong.empty());
    }

    /** The broker closed the connection: returns the exception that explains it (expired session, ...). */
    public KsaslException closed(long nowMs) {
        Throwable t = with(h -> Native.clientConnClosed(h, nowMs));
        if (t instanceof KsaslException) {
            return (KsaslException) t;
        }
        throw (RuntimeException) t;
    }

    /** When to call {@link #handleTimeout} next. */
    public OptionalLong nextDeadline() {
        return Time.opt(with(Native::clientConnNextDeadline));
    }

    /** Starts a due re-authentication (then write {@link #transmit()}); returns whether one started. */
    public boolean handleTimeout(long nowMs) throws KsaslException {
        return with(h -> Native.clientConnHandleTimeout(h, nowMs));
    }

    /** Whether a re-authentication is due (for hosts that check before each request). */
    public boolean reauthPending(long nowMs) {
        return with(h -> Native.clientConnReauthPending(h, nowMs));
    }

    /** Before an application request: {@code true} to send it now, {@code false} to hold it until re-authenticated. */
    public boolean beforeRequest(long nowMs) throws KsaslException {
        return with(h -> Native.clientConnBeforeRequest(h, nowMs));
    }

    /** Starts a re-authentication now (deferred, returning {@code false}, within a second of the last). */
    public boolean startReauthentication(long nowMs) throws KsaslException {
        return with(h -> Native.clientConnStartReauth(h, nowMs));
    }

    /** The current session, or {@code null} before authentication. */
    public ClientSession session() {
        return ClientSession.of(with(Native::clientConnSession));
    }

    /** Whether a re-authentication is in progress. */
    public boolean isReauthenticating() {
        return with(Native::clientConnReauthenticating);
    }

    /** Whether authenticated with no exchange in progress. */
    public boolean isReady() {
        return with(Native::clientConnReady);
    }
}
