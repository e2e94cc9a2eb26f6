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
 * @param extensions OAUTHBEARER SASL extensions (empty otherwise)
 * @param tokenAuthenticated whether a delegation token was used
 */
public record AuthenticationOutcome(String principal, String principalName, String mechanism,
        OptionalLong credentialExpiryMs, Map<String, String> extensions, boolean tokenAuthenticated) {
    public AuthenticationOutcome {
        extensions = Map.copyOf(extensions);
    }
}
