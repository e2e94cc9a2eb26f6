package org.ksasl;

/** The server's verdict on one application request of an authenticated connection. */
public enum Gate {
    /** Handle the request. */
    PROCESS,
    /** A SaslHandshake: the client starts re-authenticating; hand the frame to {@link ServerConnection#handleFrame}. */
    BEGIN_REAUTHENTICATION,
    /** The session has expired: close the connection without answering (Kafka's rule). */
    CLOSE_EXPIRED;

    private static final WireEnum<Gate> WIRE = WireEnum.of(Gate.class, "Gate");

    static Gate fromNumber(int n) {
        return WIRE.of(n);
    }
}
