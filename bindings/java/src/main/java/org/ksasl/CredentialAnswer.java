package org.ksasl;

import java.util.Objects;

/**
 * The answer to a {@link CredentialRequest}: a password, a SCRAM credential in Kafka's string
 * form ({@code salt=...,stored_key=...,server_key=...,iterations=...}), "unknown user",
 * "unavailable" (the lookup failed; the client is refused without learning why), or, from a
 * {@link CredentialLookup} only, "later" (the host answers through {@code provideCredential}).
 * Optional: an absolute expiry (ms since the epoch) that caps the KIP-368 session, and the owner
 * of a delegation token. {@link #toString()} never shows the secret. The core reads the answer
 * ({@code CredentialAnswer::decode}); the kind crosses JNI as its stable number.
 */
public final class CredentialAnswer {
    /** The kind of answer; each has the stable number of the core's table. */
    public enum Kind {
        PASSWORD, SCRAM, UNKNOWN, UNAVAILABLE, LATER;

        private static final WireEnum<Kind> WIRE = WireEnum.of(Kind.class, "CredentialAnswerKind");

        /** The stable number the core knows this kind by. */
        int number() {
            return WIRE.number(this);
        }
    }

    private final Kind kind;
    private final String value;
    private final long expiryMs;
    private final String tokenOwner;

    private CredentialAnswer(Kind kind, String value, long expiryMs, String tokenOwner) {
        this.kind = kind;
        this.value = value;
        this.expiryMs = expiryMs;
        this.tokenOwner = tokenOwner;
    }

    /** The user (or token) does not exist. */
    public static CredentialAnswer unknown() {
        return new CredentialAnswer(Kind.UNKNOWN, null, Native.NONE, null);
    }

    /** The user's password (PLAIN compares it; SCRAM derives keys from it). */
    public static CredentialAnswer password(String password) {
        return new CredentialAnswer(Kind.PASSWORD, Objects.requireNonNull(password, "password"), Native.NONE, null);
    }

    /** A SCRAM credential in Kafka's string form, for the requested SCRAM mechanism. */
    public static CredentialAnswer scram(String kafkaCredential) {
        return new CredentialAnswer(Kind.SCRAM, Objects.requireNonNull(kafkaCredential, "kafkaCredential"),
                Native.NONE, null);
    }

    /** The lookup failed; {@code reason} is logged by the host, not sent to the client. */
    public static CredentialAnswer unavailable(String reason) {
        return new CredentialAnswer(Kind.UNAVAILABLE, Objects.requireNonNull(reason, "reason"), Native.NONE, null);
    }

    /**
     * From a {@link CredentialLookup}: the host answers later, through {@code provideCredential}
     * after the exchange asked for the credential ({@code NEED_CREDENTIAL}). Not an answer to a
     * pending request (refused there).
     */
    public static CredentialAnswer later() {
        return new CredentialAnswer(Kind.LATER, null, Native.NONE, null);
    }

    /** The same answer with an absolute expiry in ms since the epoch. */
    public CredentialAnswer withExpiryMs(long expiryMs) {
        return new CredentialAnswer(kind, value, expiryMs, tokenOwner);
    }

    /** The same answer for a delegation token owned by {@code owner}. */
    public CredentialAnswer withTokenOwner(String owner) {
        return new CredentialAnswer(kind, value, expiryMs, Objects.requireNonNull(owner, "owner"));
    }

    public Kind kind() {
        return kind;
    }

    String value() {
        return value;
    }

    long expiryMs() {
        return expiryMs;
    }

    String tokenOwner() {
        return tokenOwner;
    }

    @Override
    public String toString() {
        return "CredentialAnswer[" + kind + (value != null && kind != Kind.UNAVAILABLE ? ", <redacted>" : "")
                + (kind == Kind.UNAVAILABLE ? ", " + value : "")
                + (expiryMs != Native.NONE ? ", expiryMs=" + expiryMs : "")
                + (tokenOwner != null ? ", owner=" + tokenOwner : "") + "]";
    }
}
