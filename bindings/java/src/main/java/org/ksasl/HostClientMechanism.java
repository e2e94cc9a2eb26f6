package org.ksasl;

/**
 * The client half of a SASL mechanism written in Java (KIP-43 pluggability), registered with
 * {@link MechanismRegistry#addClientMechanism}. The registry's factory makes one instance per
 * exchange (each authentication and each re-authentication), which ksasl drives like its
 * built-in mechanisms: {@link #start} once, then {@link #step} for every server challenge until
 * {@link #isComplete()}. It is the same contract as {@link javax.security.sasl.SaslClient}
 * (see {@link SaslMechanisms#client} to plug in an existing one). A mechanism whose answers
 * come later implements {@link AsyncHostClientMechanism} instead.
 *
 * <p>After {@code start} and after every {@code step}, ksasl asks {@link #isComplete()}:
 * <ul>
 *   <li>not complete: the returned message is sent and the next server challenge awaited; it
 *       must not be {@code null} (an empty array is an empty message);
 *   <li>complete: the returned message, if not {@code null}, is the last one sent; the server's
 *       verdict is then read by the connection driver, and no further {@code step} is made.
 * </ul>
 *
 * <p>Errors: anything thrown here fails the exchange, with the core's message
 * "the NAME mechanism's start failed: " (or {@code step}) followed by the text of the
 * throwable. A {@link KsaslError} (for example a {@link KsaslException}) keeps its code and
 * gives its message as the text; any other {@link Throwable} becomes a
 * {@link KsaslAuthenticationException} with code {@code HOST_MECHANISM_FAILED} (325) and its
 * {@code toString()} as the text. The original throwable is the cause of the exception the
 * caller of ksasl sees. A {@code null} message before completion is also
 * {@code HOST_MECHANISM_FAILED} (the core's "... set no message before it was done"). The exchange is failed
 * afterwards: further calls are refused with {@link KsaslStateException}, a connection reports
 * the failure.
 *
 * <p>Calls come from the thread that drives the connection, one at a time, with the
 * connection locked: implementations must not call back into that connection.
 */
public interface HostClientMechanism {
    /**
     * The first message (Kafka always starts with a client message): the initial response, or
     * an empty array for a mechanism without one.
     */
    byte[] start(long nowMs) throws Exception;

    /** Evaluates one server challenge and returns the answer (or {@code null} once complete). */
    byte[] step(byte[] challenge, long nowMs) throws Exception;

    /** Whether the client side has completed; asked after {@code start} and every {@code step}. */
    boolean isComplete();
}
