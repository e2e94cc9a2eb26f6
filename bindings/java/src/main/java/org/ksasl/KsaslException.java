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

    KsaslException(int code, String codeName, ErrorKind kind, String message, Map<String, String> details) {
        super(message);
        this.code = code;
        this.codeName = codeName;
        this.kind = kind;
        this.details = Collections.unmodifiableMap(details);
    }

    @Override public int code() { return code; }
    @Override public String codeName() { return codeName; }
    @Override public ErrorKind kind() { return kind; }
    @Override public Map<String, String> details() { return details; }

    @Override
    public String toString() {
        return getClass().getName() + ": [" + codeName + " " + code + "] " + getMessage();
    }
}
