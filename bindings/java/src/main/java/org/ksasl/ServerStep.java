package org.ksasl;

/**
 * The result of one server step.
 *
 * @param kind what happened
 * @param message the challenge (or the final server message) to send; {@code null} when none
 */
public record ServerStep(Kind kind, byte[] message) {
    /** The order is shared with the native code. */
    public enum Kind {
        /** Send {@link #message()} and wait for the next client message. */
        CHALLENGE,
        /** Look up a credential and answer with {@code provideCredential}. */
        NEED_CREDENTIAL,
        /** Authenticated; send {@link #message()} if present. */
        DONE,
        /**
         * A host mechanism answers later ({@link HostServerStep#later}): wait for
         * {@link ServerAuthenticator#pendingWork()} and resume.
         */
        PENDING
    }

    @Override
    public String toString() {
        return "ServerStep[" + kind + ", " + (message == null ? "no message" : message.length + " bytes") + "]";
    }
}
