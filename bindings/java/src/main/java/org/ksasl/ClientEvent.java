package org.ksasl;

import java.util.OptionalLong;

/**
 * What a received frame meant to a {@link ClientConnection}.
 *
 * @param kind what happened
 * @param frame for {@link Kind#APPLICATION}, the response frame to process
 * @param session for the authentication kinds, the new session
 * @param error for {@link Kind#REAUTH_FAILED}, why the re-authentication failed
 * @param retryAtMs for {@link Kind#REAUTH_FAILED}, when the next attempt is due
 */
public record ClientEvent(Kind kind, byte[] frame, ClientSession session, KsaslException error, OptionalLong retryAtMs) {
    /** What happened (a failure is thrown, not reported as an event). */
    public enum Kind {
        /** A SASL response was consumed; write {@link ClientConnection#transmit()}. */
        CONTINUE,
        /** A response to an application request (responses come back in arrival order). */
        APPLICATION,
        /** Authenticated for the first time. */
        AUTHENTICATED,
        /** Re-authenticated; held requests may be sent again. */
        REAUTHENTICATED,
        /** A re-authentication failed but the old session holds (retry policy). */
        REAUTH_FAILED,
        /**
         * The mechanism answers later ({@link AsyncHostClientMechanism}): wait for
         * {@link ClientConnection#pendingWork()} and continue with
         * {@link ClientConnection#resume} or {@link ClientConnection#resumeWithError}.
         */
        PENDING;

        private static final WireEnum<Kind> WIRE = WireEnum.of(Kind.class, "ClientEventKind");

        static Kind fromNumber(int n) {
            return WIRE.of(n);
        }
    }

    /** Called by native code: a failed re-authentication ({@code retryAtMs} {@link Native#NONE}: none). */
    static ClientEvent reauthFailed(Throwable error, long retryAtMs) {
        return new ClientEvent(Kind.REAUTH_FAILED, null, null, (KsaslException) error, Time.opt(retryAtMs));
    }

    @Override
    public String toString() {
        return "ClientEvent[" + kind + (frame != null ? ", " + frame.length + " bytes" : "")
                + (session != null ? ", " + session : "") + (error != null ? ", " + error : "") + "]";
    }
}
