package org.ksasl;

import java.util.OptionalLong;

/**
 * The KIP-368 session of an authenticated server connection or of a successful
 * {@link ServerExchange}.
 *
 * @param outcome who authenticated, how, and the credential's expiry
 * @param lifetimeMs the session lifetime sent to the client (0: none), by Kafka's formula over
 *     the credential's expiry and {@code connections.max.reauth.ms}
 * @param expiryMs when the server stops accepting the connection's requests (empty: never)
 */
public record ServerSession(AuthOutcome outcome, long lifetimeMs, OptionalLong expiryMs) {
    /** From the native record (the outcome's fields, lifetime, expiry), or null. */
    static ServerSession of(byte[] record) {
        if (record == null) {
            return null;
        }
        return read(new Fields(record));
    }

    static ServerSession read(Fields f) {
        AuthOutcome outcome = AuthOutcome.read(f);
        return new ServerSession(outcome, f.i64(), f.time());
    }

    public String principal() {
        return outcome.principal();
    }

    public String mechanism() {
        return outcome.mechanism();
    }
}
