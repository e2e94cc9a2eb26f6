package org.ksasl;

/**
 * Validates OAUTHBEARER tokens in host code. Return the principal and expiry, or
 * {@code null} to reject. An exception reaches the caller of the step unchanged. Verdicts are
 * cached by the registry (keyed by a hash of the token, never beyond its expiry).
 */
@FunctionalInterface
public interface TokenValidator {
    ValidatedToken validate(String token, long nowMs) throws Exception;
}
