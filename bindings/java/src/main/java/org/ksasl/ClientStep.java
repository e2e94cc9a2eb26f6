package org.ksasl;

/**
 * A client message.
 *
 * @param message the bytes to send, or {@code null} when there is nothing to send
 * @param done whether the exchange is complete on the client side
 */
public record ClientStep(byte[] message, boolean done) {
    @Override
    public String toString() {
        return "ClientStep[" + (message == null ? "no message" : message.length + " bytes") + ", done=" + done + "]";
    }
}
