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
public record OAuthToken(String value, long expiryMs, String principal, Map<String, String> extensions,
        long generation) {
    public OAuthToken {
        extensions = Map.copyOf(extensions);
    }

    /**
     * An unsecured ({@code alg: none}) token as Kafka's development login module makes them,
     * for tests and for brokers running Kafka's unsecured validator.
     */
    public static OAuthToken unsecured(String principal, long lifetimeSeconds, List<String> scope, long nowMs)
            throws KsaslException {
        java.util.Objects.requireNonNull(principal, "principal");
        Native.init();
        Object[] t = Native.unsecuredToken(principal, lifetimeSeconds, scope == null ? null : scope.toArray(new String[0]),
                nowMs);
        return new OAuthToken((String) t[0], (Long) t[1], (String) t[2], Map.of(), 0);
    }

    @Override
    public String toString() {
        return "OAuthToken[<redacted>, expiryMs=" + expiryMs + ", principal=" + principal + ", extensions="
                + extensions + ", generation=" + generation + "]";
    }
}
