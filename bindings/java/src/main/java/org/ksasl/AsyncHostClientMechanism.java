package org.ksasl;

import java.util.concurrent.CompletionStage;

/**
 * The client half of a SASL mechanism written in Java whose answers come later: each call
 * returns a {@link CompletionStage} (a request to a remote signer or a token service, say)
 * instead of the message itself. Registered with
 * {@link MechanismRegistry#addAsyncClientMechanism}; the factory makes one instance per exchange,
 * as for {@link HostClientMechanism}.
 *
 * <p>When {@link #start} or {@link #step} returns, the exchange waits: a
 * {@link ClientConnection} reports {@link ClientEvent.Kind#PENDING} (a
 * {@link ClientExchange} a {@link ClientStep#pending()} step), {@code pendingWork()} gives
 * the stage, and the host hands its result back with {@code resume} (its message) or
 * {@code resumeWithError} (its exception). {@link ClientConnection#handleFrameAsync} does all of
 * this itself. No call reaches the mechanism while its stage is pending.
 *
 * <p>The rules of {@link HostClientMechanism} apply to the value a stage completes with: when it
 * is resumed, ksasl asks {@link #isComplete()}; before completion the message must not be
 * {@code null} (that fails the exchange with {@code HOST_MECHANISM_FAILED}); once complete, a
 * {@code null} message means nothing more to send.
 *
 * <p>Errors: an exception thrown by {@code start}/{@code step}, a stage completed exceptionally
 * (a {@link java.util.concurrent.CompletionException} or
 * {@link java.util.concurrent.ExecutionException} is unwrapped to its cause), or a {@code null}
 * stage fails the exchange, with the core's message "the NAME mechanism's start failed: " (or
 * {@code step}, or for a stage's exception {@code late answer}) followed by the text of the
 * throwable. A {@link KsaslError} keeps its code and gives its message as the text; any other
 * {@link Throwable} becomes {@code HOST_MECHANISM_FAILED} (325) with its {@code toString()} as
 * the text, and is the cause of the exception the host sees.
 *
 * <p>{@code start}, {@code step} and {@code isComplete} are called with the connection locked, on
 * the thread that drives it (for {@code isComplete}, the thread that resumes): they must not call
 * back into that connection. The stage may complete on any thread.
 */
public interface AsyncHostClientMechanism {
    /**
     * Begins the first message (Kafka always starts with a client message): the stage completes
     * with the initial response, or an empty array for a mechanism without one.
     *
     * @param nowMs the current time, ms since the epoch
     * @return the stage of the message; not {@code null}
     * @throws Exception to fail the exchange at once
     */
    CompletionStage<byte[]> start(long nowMs) throws Exception;

    /**
     * Begins the answer to one server challenge: the stage completes with the answer, or
     * {@code null} once complete with nothing more to send.
     *
     * @param challenge the server's challenge
     * @param nowMs the current time, ms since the epoch
     * @return the stage of the answer; not {@code null}
     * @throws Exception to fail the exchange at once
     */
    CompletionStage<byte[]> step(byte[] challenge, long nowMs) throws Exception;

    /**
     * Whether the client side has completed; asked each time a stage's message is resumed.
     *
     * @return {@code true} once the last message has been produced
     */
    boolean isComplete();
}
