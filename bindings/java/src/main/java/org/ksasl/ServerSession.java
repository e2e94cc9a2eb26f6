package org.ksasl;

import java.util.OptionalLong;

/**
 * The session of an authenticated server connection.
 *
 * @param outcome who authenticated, how, and the credential's expiry
 * @param lifetimeMs the session lifetime sent to the client (0: none)
 * @param expiryMs when the server stops accepting the connection's requests (empty: never)
 */
public record ServerSession(AuthenticationOutcome outcome, long lifetimeMs, OptionalLong expiryMs) {
    public String principal() {
        return outcome.principal();
    }

    public String mechanism() {
        return outcome.mechanism();
    }
}
