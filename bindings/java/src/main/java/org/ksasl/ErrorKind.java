package org.ksasl;

/** The group a ksasl result code belongs to (the hundreds digit of the code). */
public enum ErrorKind {
    /** 1xx: the caller used the API wrongly. Raised as {@link KsaslArgumentException} or {@link KsaslStateException}. */
    MISUSE,
    /** 2xx: the peer broke the protocol. */
    PROTOCOL,
    /** 3xx: authentication failed. */
    AUTHENTICATION,
    /** 4xx: a credential is missing, malformed or expired. */
    CREDENTIAL,
    /** 5xx: a bug or an environment failure inside ksasl. */
    INTERNAL;

    /** The constant for the core's kind name ({@code "misuse"} is {@link #MISUSE}). */
    static ErrorKind fromName(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }
}
