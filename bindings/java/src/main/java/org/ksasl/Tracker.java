package org.ksasl;

import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Tracks which live connections authenticated with which token generation, and tells which
 * must re-authenticate once a new token is installed (spread over a window) or before their
 * token expires. Safe to share between threads.
 */
public final class Tracker extends NativeHandle {
    /** A tracker of {@code refresher}'s tokens with the core's spread window (10 s). */
    public Tracker(Refresher refresher) throws KsaslException {
        super(create(refresher, 0, false), Native::trackerFree);
    }

    /** A tracker spreading re-authentications after a refresh over {@code spreadWindowMs}. */
    public Tracker(Refresher refresher, long spreadWindowMs) throws KsaslException {
        super(create(refresher, spreadWindowMs, true), Native::trackerFree);
    }

    private static long create(Refresher refresher, long spread, boolean set) throws KsaslException {
        Objects.requireNonNull(refresher, "refresher");
        return refresher.with(r -> Native.trackerNew(r, spread, set));
    }

    /** Records that connection {@code id} authenticated with token {@code generation} and got {@code session}. */
    public void authenticated(long id, long generation, ClientSession session) throws KsaslException {
        Objects.requireNonNull(session, "session");
        run(h -> Native.trackerAuthenticated(h, id, generation, session.lifetimeMs(), Time.raw(session.reauthAtMs()),
                Time.raw(session.expiryMs())));
    }

    /** Forgets a closed connection. */
    public void forget(long id) {
        run(h -> Native.trackerForget(h, id));
    }

    /** When to poll next. */
    public OptionalLong nextDeadline() {
        return Time.opt(with(Native::trackerNextDeadline));
    }

    /** What is due at {@code nowMs}. */
    public Poll poll(long nowMs) {
        long[] r = with(h -> Native.trackerPoll(h, nowMs));
        return new Poll(r[0] != 0, Arrays.copyOfRange(r, 1, r.length));
    }

    /**
     * What a poll found.
     *
     * @param refreshNeeded a new token must be fetched
     * @param reauthenticate the connections that must re-authenticate now
     */
    public record Poll(boolean refreshNeeded, long[] reauthenticate) {
        @Override
        public String toString() {
            return "Poll[refreshNeeded=" + refreshNeeded + ", reauthenticate=" + Arrays.toString(reauthenticate) + "]";
        }
    }
}
