package org.ksasl;

import java.util.LinkedHashMap;
import java.util.Map;

/** Builds the exception for a core error; called by the native code. */
final class Errors {
    private Errors() {}

    /** The codes whose misuse is about state rather than an argument. */
    private static boolean isStateMisuse(String codeName) {
        return codeName.equals("STEP_AFTER_DONE") || codeName.equals("STEP_AFTER_FAILURE")
                || codeName.equals("WRONG_STATE");
    }

    /** Called from native code: {@code details} alternates keys and values. */
    static Throwable create(int code, String codeName, String kindName, String message, String[] details) {
        Map<String, String> d = new LinkedHashMap<>();
        for (int i = 0; i + 1 < details.length; i += 2) {
            d.put(details[i], details[i + 1]);
        }
        switch (ErrorKind.fromName(kindName)) {
            case MISUSE:
                return isStateMisuse(codeName)
                        ? new KsaslStateException(code, codeName, message, d)
                        : new KsaslArgumentException(code, codeName, message, d);
            case PROTOCOL: return new KsaslProtocolException(code, codeName, message, d);
            case AUTHENTICATION: return new KsaslAuthenticationException(code, codeName, message, d);
            case CREDENTIAL: return new KsaslCredentialException(code, codeName, message, d);
            default: return new KsaslInternalException(code, codeName, message, d);
        }
    }
}
