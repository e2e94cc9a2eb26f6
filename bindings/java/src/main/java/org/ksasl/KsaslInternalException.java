package org.ksasl;

import java.util.Map;

/** Raised when an internal failure inside ksasl (5xx codes), including a caught Rust panic. */
public final class KsaslInternalException extends KsaslException {
    private static final long serialVersionUID = 1L;

    KsaslInternalException(int code, String codeName, String message, Map<String, String> details) {
        super(code, codeName, ErrorKind.INTERNAL, message, details);
    }
}
