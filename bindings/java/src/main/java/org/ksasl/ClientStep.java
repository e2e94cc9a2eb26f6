package org.ksasl;

/**
 * A client message.
 *
 * @param message the bytes to send, or {@code null} when there is nothing to send
 * @param done whether the exchange is complete on the client side
 * @param pending whether the mechanism answers later ({@link AsyncHostClientMechanism}): there is
 *     no message yet; wait for {@link ClientExchange#pendingWork()} and resume
 */
public record ClientStep(byte[] message, boolean done, boolean pending) {
    /**
     * A step that is not pending.
     *
     * @param message the bytes to send, or {@code null} when there is nothing to send
     * @param done whether the exchange is complete on the client side
     */
    public ClientStep(byte[] message, boolean done) {
        this(message, done, false);
    }

    /** From the native record: done, pending, the message. */
    static ClientStep of(byte[] record) {
        Fields f = new Fields(record);
        boolean done = f.bool();
        boolean pending = f.bool();
        return new ClientStep(f.bytes(), done, pending);
    }

    @Override
    public String toString() {
        if (pending) {
            return "ClientStep[pending]";
        }
        return "ClientStep[" + (message == null ? "no message" : message.length + " bytes") + ", done=" + done + "]";
    }
}
