package org.ksasl;

import java.util.Collections;
import java.util.Map;

/**
 * A call made in the wrong state (codes 101, 102, 103): a step after the exchange ended, an
 * answer nobody asked for. Use of a closed object raises a plain {@link IllegalStateException}.
 */
public final class KsaslStateException extends IllegalStateException implements KsaslError {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String codeName;
    private final Map<String, String> details;

    KsaslStateException(int code, String codeName, String message, Map<String, String> details) {
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
