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

    /** Called by native code: {@code extensions} alternates names and values (null: none). */
    static AuthOutcome of(String principal, String principalName, String mechanism, long credentialExpiryMs,
            String[] extensions, boolean tokenAuthenticated) {
        Map<String, String> ext = extensions == null ? Map.of() : Decode.pairs(extensions);
        return new AuthOutcome(principal, principalName, mechanism, Time.opt(credentialExpiryMs), ext,
                tokenAuthenticated);
    }
}
