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
    /** Called by native code ({@link Native#NONE} for absent times). */
    static ClientSession of(long lifetimeMs, long reauthAtMs, long expiryMs, long latencyMs) {
        return new ClientSession(lifetimeMs, Time.opt(reauthAtMs), Time.opt(expiryMs), latencyMs);
    }
}
