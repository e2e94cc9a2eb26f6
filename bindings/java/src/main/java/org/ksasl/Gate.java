package org.ksasl;

/**
 * The server's verdict on one request a connection received. Only {@link #PROCESS} lets a
 * request reach the host's handlers, and only under a live session.
 */
public enum Gate {
    /** Handle the request. */
    PROCESS,
    /** A SaslHandshake: the client starts re-authenticating; hand the frame to {@link ServerConnection#handleFrame}. */
    BEGIN_REAUTHENTICATION,
    /** The session has expired: close the connection without answering (Kafka's rule). */
    CLOSE_EXPIRED,
    /**
     * No session to serve the request under: the first authentication has not finished, or a
     * re-authentication is in progress. Hand the frame to {@link ServerConnection#handleFrame},
     * which answers what belongs to the exchange and refuses anything else as Kafka does.
     */
    NOT_AUTHENTICATED,
    /** The connection failed (its authentication or a re-authentication): close it without answering. */
    CLOSE;

    private static final WireEnum<Gate> WIRE = WireEnum.of(Gate.class, "Gate");

    static Gate fromNumber(int n) {
        return WIRE.of(n);
    }
}
