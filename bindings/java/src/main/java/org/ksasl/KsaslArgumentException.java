package org.ksasl;

import java.util.Collections;
import java.util.Map;

/** An invalid argument or configuration (codes 100, 104, 105, 106). */
public final class KsaslArgumentException extends IllegalArgumentException implements KsaslError {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String codeName;
    private final Map<String, String> details;

    KsaslArgumentException(int code, String codeName, String message, Map<String, String> details) {
        super(message);
        this.code = code;
        this.codeName = codeName;
        this.details = Collections.unmodifiableMap(details);
    }

    @Override public int code() { return code; }
    @Override public String codeName() { return codeName; }
    @Override public ErrorKind kind() { return ErrorKind.MISUSE; }
    @Override public Map<String, String> details() { return details; }
}
