package org.ksasl;

import java.util.Map;

/** Raised when a credential is missing, malformed or expired (4xx codes). */
public final class KsaslCredentialException extends KsaslException {
    private static final long serialVersionUID = 1L;

    KsaslCredentialException(int code, String codeName, String message, Map<String, String> details) {
        super(code, codeName, ErrorKind.CREDENTIAL, message, details);
    }
}
