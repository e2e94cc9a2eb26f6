package org.ksasl;

/** What the host does after a {@link ServerConnection} handled a frame (see {@link ServerOutput}). */
public enum ServerAction {
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
    /** Authentication failed: at {@link ServerOutput#deadlineMs()} write the frames and close. */
    FAIL_AT,
    /** Close now without writing. */
    CLOSE_NOW,
    /**
     * A host mechanism answers later ({@link HostServerStep#later}); nothing to write yet:
     * wait for {@link ServerConnection#pendingWork()} and continue with
     * {@link ServerConnection#resume} or {@link ServerConnection#resumeWithError}.
     */
    PENDING;

    private static final WireEnum<ServerAction> WIRE = WireEnum.of(ServerAction.class, "ServerActionKind");

    static ServerAction fromNumber(int n) {
        return WIRE.of(n);
    }
}
