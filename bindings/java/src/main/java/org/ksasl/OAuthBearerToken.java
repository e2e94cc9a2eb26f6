package org.ksasl;

import java.util.List;
import java.util.Map;

/**
 * An OAUTHBEARER token with what the client needs to present it. {@link #toString()} never
 * shows the token itself.
 *
 * @param value the compact token
 * @param expiryMs absolute expiry, ms since the epoch
 * @param principal the principal name
 * @param extensions SASL extensions sent with it
 * @param generation the refresher's generation of this token (0 when not from a refresher)
 */
public record OAuthBearerToken(String value, long expiryMs, String principal, Map<String, String> extensions,
        long generation) {
    public OAuthBearerToken {
        extensions = Map.copyOf(extensions);
    }

    /** From the native record: value, expiry, principal, extensions, generation. */
    static OAuthBearerToken of(byte[] record) {
        Fields f = new Fields(record);
        return new OAuthBearerToken(f.str(), f.i64(), f.str(), f.pairs(), f.i64());
    }

    /**
     * An unsecured ({@code alg: none}) token as Kafka's development login module makes them,
     * for tests and for brokers running Kafka's unsecured validator.
     */
    public static OAuthBearerToken unsecured(String principal, long lifetimeSeconds, List<String> scope, long nowMs)
            throws KsaslException {
        java.util.Objects.requireNonNull(principal, "principal");
        Native.init();
        return of(Native.unsecuredToken(principal, lifetimeSeconds,
                scope == null ? null : scope.toArray(new String[0]), nowMs));
    }

    @Override
    public String toString() {
        return "OAuthBearerToken[<redacted>, expiryMs=" + expiryMs + ", principal=" + principal + ", extensions="
                + extensions + ", generation=" + generation + "]";
    }
}
