package org.ksasl;

import java.util.Map;
import java.util.OptionalLong;

/**
 * Who authenticated.
 *
 * @param principal the Kafka principal, e.g. {@code User:alice}
 * @param principalName the name alone
 * @param mechanism the mechanism used
 * @param credentialExpiryMs when the credential (token, delegation token, password) expires
 * @param extensions OAUTHBEARER SASL extensions, or SCRAM's {@code tokenauth} (empty otherwise)
 * @param tokenAuthenticated whether a delegation token was used
 */
public record AuthOutcome(String principal, String principalName, String mechanism,
        OptionalLong credentialExpiryMs, Map<String, String> extensions, boolean tokenAuthenticated) {
    public AuthOutcome {
        extensions = Map.copyOf(extensions);
    }

    /** Principal, name, mechanism, credential expiry, token flag, extensions. */
    static AuthOutcome read(Fields f) {
        String principal = f.str();
        String name = f.str();
        String mechanism = f.str();
        OptionalLong expiry = f.time();
        boolean token = f.bool();
        return new AuthOutcome(principal, name, mechanism, expiry, f.pairs(), token);
    }
}
