package org.ksasl;

import java.util.LinkedHashMap;
import java.util.Map;

/** Builds the Java exception for a core error; called by the native code. */
final class Errors {
    private Errors() {}

    /**
     * The exception for a core error: the class of its kind ({@code kindName}), and for misuse
     * {@link KsaslStateException} when the core classifies the code as state misuse
     * ({@code ErrorCode::is_state_misuse}), else {@link KsaslArgumentException}.
     * {@code details} alternates keys and values; {@code clientMessage} is the core's client
     * text (or null); {@code cause} is the host's exception behind the error (or null).
     */
    static Throwable create(int code, String codeName, String kindName, boolean stateMisuse, String message,
            String clientMessage, String[] details, Throwable cause) {
        Map<String, String> d = new LinkedHashMap<>();
        for (int i = 0; i + 1 < details.length; i += 2) {
            d.put(details[i], details[i + 1]);
        }
        Throwable t;
        switch (ErrorKind.fromName(kindName)) {
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
