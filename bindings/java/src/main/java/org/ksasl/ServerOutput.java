package org.ksasl;

/**
 * What a {@link ServerConnection} produced for one frame.
 *
 * @param action what the host does next
 * @param frames the frames to write (each with its length prefix); may be empty
 * @param deadlineMs for {@link ServerAction#FAIL_AT}: when to write {@code frames} and close
 * @param error for {@link ServerAction#FAIL_AT}, {@link ServerAction#CLOSE_NOW} and
 *     {@link ServerAction#REAUTH_FAILED}: why the connection ends (or the re-authentication
 *     failed), with {@link KsaslException#clientMessage()} the text the client was told
 */
public record ServerOutput(ServerAction action, byte[] frames, long deadlineMs, KsaslException error) {
    /** Called by native code. */
    static ServerOutput of(int action, byte[] frames, long deadlineMs, Throwable error) {
        return new ServerOutput(ServerAction.fromNumber(action), frames, deadlineMs, (KsaslException) error);
    }

    @Override
    public String toString() {
        return "ServerOutput[" + action + ", " + frames.length + " bytes"
                + (action == ServerAction.FAIL_AT ? ", at " + deadlineMs : "") + (error != null ? ", " + error : "") + "]";
    }
}
