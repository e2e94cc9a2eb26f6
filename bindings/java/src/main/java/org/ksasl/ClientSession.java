package org.ksasl;

import java.util.OptionalLong;

/**
 * The session as the client sees it.
 *
 * @param lifetimeMs the session lifetime the broker granted (0: none)
 * @param reauthAtMs when the client will re-authenticate
 * @param expiryMs when the broker will stop accepting requests
 * @param latencyMs how long the (re-)authentication took
 */
public record ClientSession(long lifetimeMs, OptionalLong reauthAtMs, OptionalLong expiryMs, long latencyMs) {
    /** From the native record (lifetime, re-authentication time, expiry, latency), or null. */
    static ClientSession of(byte[] record) {
        if (record == null) {
            return null;
        }
        Fields f = new Fields(record);
        return new ClientSession(f.i64(), f.time(), f.time(), f.i64());
    }
}
