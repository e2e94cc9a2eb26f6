package org.ksasl;

import java.util.OptionalLong;

/**
 * A Kerberos login that renews itself: the ticket-granting ticket the GSSAPI clients of a
 * registry use ({@link MechanismRegistry#addGssapiClient}), obtained from a keytab (no
 * {@code kinit}) or read from a ticket cache, and replaced on Kafka's
 * {@code sasl.kerberos.ticket.renew.*} schedule. Each (re-)authentication takes the current
 * ticket. Nothing is read until {@link #login} or {@link #poll}; renewal is driven by
 * {@link #poll} at {@link #nextLoginMs}, or by the core's thread ({@link #startRenewal}).
 *
 * <p>MIT Kerberos (loaded at first use, see {@link Ksasl#gssapiAvailable}) reads
 * {@code KRB5_CONFIG}, {@code KRB5CCNAME} and {@code KRB5RCACHEDIR} from the process
 * environment, which a JVM cannot change: set them before it starts. Safe to share between
 * threads.
 */
public final class KerberosLogin extends NativeHandle {
    /**
     * A login as the JAAS {@code Krb5LoginModule} options describe it: with {@code keytab}, a new
     * ticket for {@code principal} (then required) from it at every login; without, the ticket
     * in the cache {@code ccache} (null: the default cache), for {@code principal} if given,
     * renewed in the cache at the KDC at each later login as {@code kinit -R} would. The
     * schedule settings, each null for Kafka's default, are
     * {@code sasl.kerberos.ticket.renew.window.factor} (0.80),
     * {@code sasl.kerberos.ticket.renew.jitter} (0.05) and
     * {@code sasl.kerberos.min.time.before.relogin} (60,000 ms).
     *
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) for settings the core refuses
     */
    public KerberosLogin(String principal, String keytab, String ccache, Double windowFactor, Double jitter,
            Long minTimeBeforeReloginMs) throws KsaslException {
        super(create(principal, keytab, ccache, windowFactor, jitter, minTimeBeforeReloginMs),
                Native::kerberosLoginFree);
    }

    private static long create(String principal, String keytab, String ccache, Double windowFactor, Double jitter,
            Long minMs) throws KsaslException {
        Native.init();
        return Native.kerberosLoginNew(principal, keytab, ccache,
                windowFactor == null ? 0 : windowFactor, windowFactor != null,
                jitter == null ? 0 : jitter, jitter != null,
                minMs == null ? 0 : minMs, minMs != null);
    }

    /** A login as {@code principal} from {@code keytab}, on Kafka's default schedule. */
    public static KerberosLogin fromKeytab(String principal, String keytab) throws KsaslException {
        return new KerberosLogin(principal, keytab, null, null, null, null);
    }

    /** A login from the ticket cache {@code ccache} (null: the default cache), on Kafka's default schedule. */
    public static KerberosLogin fromTicketCache(String ccache, String principal) throws KsaslException {
        return new KerberosLogin(principal, null, ccache, null, null, null);
    }

    /**
     * Logs in now (reads the keytab or cache, asks the KDC) and plans the next login. On
     * failure the current ticket, if any, stays in use and a retry is planned.
     *
     * @throws KsaslCredentialException {@code KERBEROS_LOGIN_FAILED}, or {@code GSSAPI_UNAVAILABLE}
     */
    public void login(long nowMs) throws KsaslException {
        run(h -> Native.kerberosLoginLogin(h, nowMs));
    }

    /** Logs in if a login is due at {@code nowMs}; returns whether one was made. */
    public boolean poll(long nowMs) throws KsaslException {
        return with(h -> Native.kerberosLoginPoll(h, nowMs));
    }

    /** When the next login is due (ms since the epoch). */
    public OptionalLong nextLoginMs() {
        return Time.opt(with(Native::kerberosLoginNextLogin));
    }

    /** When the current ticket-granting ticket ends (ms since the epoch); empty before a login. */
    public OptionalLong ticketEndMs() {
        return Time.opt(with(Native::kerberosLoginTicketEnd));
    }

    /** Successful logins so far. */
    public long logins() {
        return with(Native::kerberosLoginLogins);
    }

    /** Failed logins so far. */
    public long failures() {
        return with(Native::kerberosLoginFailures);
    }

    /**
     * Starts the core's background thread, which logs in again whenever the schedule says so
     * (from the wall clock; failures are retried on the login's own plan). Close the returned
     * object to stop the thread (one that becomes unreachable is stopped when collected); it
     * keeps the login alive meanwhile.
     */
    public Renewal startRenewal() throws KsaslException {
        return new Renewal(with(Native::kerberosRenewalStart));
    }

    /** A running renewal thread ({@link #startRenewal}); {@link #close()} stops it and waits for it. */
    public static final class Renewal extends NativeHandle {
        private Renewal(long handle) {
            super(handle, Native::kerberosRenewalStop);
        }
    }
}
