package org.ksasl;

/**
 * The server half of a SASL mechanism written in Java (KIP-43 pluggability), registered with
 * {@link MechanismRegistry#addServerMechanism}. The registry's factory makes one instance per
 * exchange, which the server connection driver negotiates (it is listed in the
 * {@code SaslHandshake} response next to the built-ins) and drives: {@link #step} for every
 * client message until it answers {@link HostServerStep#done}. The principal is
 * {@code User:<authorization id>}; the optional credential expiry bounds the KIP-368 session
 * (with {@code connections.max.reauth.ms} 0, the session lifetime is expiry minus now), and a
 * re-authentication must keep the principal. See {@link SaslMechanisms#server} to plug in an
 * existing {@link javax.security.sasl.SaslServer}.
 *
 * <p>A step whose answer comes later (a remote check) returns {@link HostServerStep#later} with
 * the {@link java.util.concurrent.CompletionStage} of the real step; the exchange waits for the
 * host to resume it (see there, and {@link ServerConnection#handleFrameAsync}).
 *
 * <p>Errors: to refuse a client, throw a {@link KsaslException} (for example one caught from
 * ksasl) or any other exception: the error's message is the core's "the NAME mechanism's step
 * failed: " followed by the text of the throwable. A {@link KsaslError} keeps its code and gives
 * its message as the text; any other {@link Throwable} becomes {@code HOST_MECHANISM_FAILED}
 * (325) with its {@code toString()} as the text. A {@code null} step ("the NAME mechanism's
 * step returned null") or an empty authorization id is also {@code HOST_MECHANISM_FAILED}. The server driver
 * then fails the connection as for a wrong password ({@code FAIL_AT}, with Kafka's
 * authentication-failed text for the client); a step after completion or failure is refused by
 * ksasl without calling the mechanism.
 *
 * <p>Calls come from the thread that drives the connection, one at a time, with the
 * connection locked: implementations must not call back into that connection.
 */
@FunctionalInterface
public interface HostServerMechanism {
    /** Evaluates one client message (the first one may be empty). */
    HostServerStep step(byte[] response, long nowMs) throws Exception;
}
