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

    /** From the native record: principal, expiry, scope. */
    static ValidatedToken of(byte[] record) {
        Fields f = new Fields(record);
        return new ValidatedToken(f.str(), f.i64(), f.strs());
    }
}
