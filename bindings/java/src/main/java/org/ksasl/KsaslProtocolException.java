package org.ksasl;

import java.util.Map;

/** Raised when the peer broke the SASL or Kafka protocol (2xx codes). */
public final class KsaslProtocolException extends KsaslException {
    private static final long serialVersionUID = 1L;

    KsaslProtocolException(int code, String codeName, String message, Map<String, String> details) {
        super(code, codeName, ErrorKind.PROTOCOL, message, details);
    }
}
