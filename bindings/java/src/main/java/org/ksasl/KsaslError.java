package org.ksasl;

import java.util.Map;

/**
 * What every exception raised by ksasl carries: the stable numeric code (the same number as
 * the C ABI's {@code ksasl_result} and Python's {@code KsaslError.code}), its name, its kind
 * and structured details (for example an OAUTHBEARER server's {@code status}). Messages and
 * details never contain passwords, tokens, salts or proofs.
 */
public interface KsaslError {
    /** The stable numeric code, e.g. 301. */
    int code();

    /** The code's name, e.g. {@code "UNKNOWN_USER"}. */
    String codeName();

    /** The code's group. */
    ErrorKind kind();

    /** Structured details; empty when there are none. */
    Map<String, String> details();
}
