package org.ksasl;

import java.util.List;

/**
 * An accepted OAUTHBEARER token.
 *
 * @param principal the principal name the token asserts
 * @param expiryMs the token's expiry, ms since the epoch
 * @param scope the token's scope (empty when none)
 */
public record ValidatedToken(String principal, long expiryMs, List<String> scope) {
    public ValidatedToken {
        scope = List.copyOf(scope);
    }

    /** A token without scope. */
    public ValidatedToken(String principal, long expiryMs) {
        this(principal, expiryMs, List.of());
    }

    /** Called by native code. */
    static ValidatedToken of(String principal, long expiryMs, String[] scope) {
        return new ValidatedToken(principal, expiryMs, List.of(scope));
    }
}
