package org.ksasl;

import java.util.Collections;
import java.util.Map;

/**
 * A checked failure from ksasl: the peer broke the protocol, authentication failed, a
 * credential is unusable, or an internal error. Misuse of the API is not a checked exception:
 * it raises {@link KsaslArgumentException} or {@link KsaslStateException}.
 */
public class KsaslException extends Exception implements KsaslError {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String codeName;
    private final ErrorKind kind;
    private final Map<String, String> details;
    /** Set by {@link Errors#create}. */
    String clientMessage;

    KsaslException(int code, String codeName, ErrorKind kind, String message, Map<String, String> details) {
        super(message);
        this.code = code;
        this.codeName = codeName;
        this.kind = kind;
        this.details = Collections.unmodifiableMap(details);
    }

    /**
     * The ksasl exception for {@code code} with a message of the host's: for example a
     * {@link HostServerMechanism} refusing a client with {@code UNKNOWN_USER} (301) or
     * {@code INVALID_CREDENTIALS} (300), which the library then reports with that code. The
     * class is the one ksasl uses for the code ({@link KsaslAuthenticationException}, ...).
     *
     * @throws IllegalArgumentException if {@code code} is not a ksasl code, or is the code of a
     *     misuse ({@link KsaslArgumentException}, {@link KsaslStateException}), which are not
     *     {@code KsaslException}s
     */
    public static KsaslException of(int code, String message) {
        java.util.Objects.requireNonNull(message, "message");
        Native.init();
        Throwable t = Native.errorNew(code, message);
        if (t instanceof KsaslException) {
            return (KsaslException) t;
        }
        throw new IllegalArgumentException(code + " (" + ((KsaslError) t).codeName() + ") is a misuse code");
    }

    @Override public int code() { return code; }
    @Override public String codeName() { return codeName; }
    @Override public ErrorKind kind() { return kind; }
    @Override public Map<String, String> details() { return details; }

    /**
     * The text a Kafka broker sends (or sent) the client for this failure, when there is one:
     * for the error of a failed server exchange or connection ({@link ServerOutput#error()},
     * {@link ServerExchange}), Kafka's client-facing sentence (the specific text Kafka
     * discloses, such as "Authentication failed: Invalid username or password", or its generic
     * "Authentication failed during authentication due to invalid credentials with SASL
     * mechanism ..."); otherwise {@code null}.
     *
     * @return the client's text, or {@code null}
     */
    public String clientMessage() {
        return clientMessage;
    }

    /** The class, the code's name and number once, and the message. */
    @Override
    public String toString() {
        return getClass().getName() + ": [" + codeName + " " + code + "] " + getMessage();
    }
}
