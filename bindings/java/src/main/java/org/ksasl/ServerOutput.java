package org.ksasl;

/**
 * What a {@link ServerConnection} produced for one frame.
 *
 * @param action what the host does next
 * @param frames the frames to write (each with its length prefix); may be empty
 * @param deadlineMs for {@link Action#FAIL_AT}: when to write {@code frames} and close
 * @param error for the failure actions: why
 */
public record ServerOutput(Action action, byte[] frames, long deadlineMs, KsaslException error) {
    /** The order is shared with the native code. */
    public enum Action {
        /** Write the frames and keep reading authentication frames. */
        CONTINUE,
        /** Look up a credential and answer with {@link ServerConnection#provideCredential}. */
        NEED_CREDENTIAL,
        /** Write the frames; the connection is authenticated. */
        AUTHENTICATED,
        /** Write the frames; the connection re-authenticated. */
        REAUTHENTICATED,
        /** Write the frames; the re-authentication failed but the old session holds (retry policy). */
        REAUTH_FAILED,
        /** Authentication failed: at {@link #deadlineMs()} write the frames and close. */
        FAIL_AT,
        /** Close now without writing. */
        CLOSE_NOW,
        /**
         * A host mechanism answers later ({@link HostServerStep#later}); nothing to write yet:
         * wait for {@link ServerConnection#pendingWork()} and continue with
         * {@link ServerConnection#resume} or {@link ServerConnection#resumeWithError}.
         */
        PENDING
    }

    private static final Action[] ACTIONS = Action.values();

    static ServerOutput of(byte[] frames, long[] out, Object[] err) {
        if (err[0] instanceof RuntimeException) {
            // A misuse (a frame for a connection that has already failed): refused, as a call.
            throw (RuntimeException) err[0];
        }
        return new ServerOutput(ACTIONS[(int) out[0]], frames, out[1], (KsaslException) err[0]);
    }

    @Override
    public String toString() {
        return "ServerOutput[" + action + ", " + frames.length + " bytes"
                + (action == Action.FAIL_AT ? ", at " + deadlineMs : "") + (error != null ? ", " + error : "") + "]";
    }
}
