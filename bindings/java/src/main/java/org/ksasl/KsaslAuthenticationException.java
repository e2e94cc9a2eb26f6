package org.ksasl;

import java.util.Map;

/** Raised when authentication failed (3xx codes). */
public final class KsaslAuthenticationException extends KsaslException {
    private static final long serialVersionUID = 1L;

    KsaslAuthenticationException(int code, String codeName, String message, Map<String, String> details) {
        super(code, codeName, ErrorKind.AUTHENTICATION, message, details);
    }
}
