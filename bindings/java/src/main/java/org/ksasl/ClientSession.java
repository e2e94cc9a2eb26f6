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
    static ClientSession of(long[] s) {
        return s == null ? null : new ClientSession(s[0], Time.opt(s[1]), Time.opt(s[2]), s[3]);
    }
}
