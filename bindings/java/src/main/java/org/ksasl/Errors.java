package org.ksasl;

import java.util.Map;

/** Builds the Java exception for a core error; called by the native code. */
final class Errors {
    private Errors() {}

    /**
     * The exception for a core error: the class of its kind, and for misuse
     * {@link KsaslStateException} when the core classifies the code as state misuse
     * ({@code ErrorCode::is_state_misuse}), else {@link KsaslArgumentException}.
     * {@code fields} is a record of the code's name, the kind's name, the message, the client
     * text (or null) and the details (alternating keys and values); {@code cause} is the host's
     * exception behind the error (or null). Called by native code.
     */
    static Throwable create(int code, boolean stateMisuse, byte[] fields, Throwable cause) {
        Fields f = new Fields(fields);
        String codeName = f.str();
        ErrorKind kind = ErrorKind.fromName(f.str());
        String message = f.str();
        String clientMessage = f.str();
        Map<String, String> d = f.pairs();
        Throwable t;
        switch (kind) {
            case MISUSE:
                t = stateMisuse ? new KsaslStateException(code, codeName, message, d)
                        : new KsaslArgumentException(code, codeName, message, d);
                break;
            case PROTOCOL: t = new KsaslProtocolException(code, codeName, message, d); break;
            case AUTHENTICATION: t = new KsaslAuthenticationException(code, codeName, message, d); break;
            case CREDENTIAL: t = new KsaslCredentialException(code, codeName, message, d); break;
            default: t = new KsaslInternalException(code, codeName, message, d); break;
        }
        if (t instanceof KsaslException) {
            ((KsaslException) t).clientMessage = clientMessage;
        }
        if (cause != null) {
            t.initCause(cause);
        }
        return t;
    }
}
