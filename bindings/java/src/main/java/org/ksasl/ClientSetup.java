package org.ksasl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A client built from its properties (a Kafka {@code client.properties} or librdkafka's names)
 * as the core builds it: its {@link ClientConfig} (the mechanism chosen, the credential
 * registered), the {@link Refresher} behind OAUTHBEARER tokens, and what the host still has to
 * do ({@link #login()}).
 *
 * <ul>
 *   <li>{@link Login#READY}: nothing (PLAIN, SCRAM; Kafka's unsecured tokens, made by the
 *       refresher's own login when the host calls {@link Refresher#runDue} at
 *       {@link Refresher#nextDeadline()}).
 *   <li>{@link Login#OIDC}: tokens from an identity provider; the refresher's own login fetches
 *       them ({@link Refresher#runDue}, blocking for the HTTPS request).
 *   <li>{@link Login#HOST_TOKEN}: the host supplies tokens ({@link Refresher#poll},
 *       {@link Refresher#setToken}), as librdkafka's refresh callback does.
 *   <li>{@link Login#KERBEROS}: GSSAPI; {@link #config()} is {@code null} until the host
 *       registers a GSSAPI client for {@link #kerberosServiceName()} and the broker's host
 *       ({@link MechanismRegistry#addGssapiClient}) and calls {@link #withRegistry}.
 * </ul>
 *
 * <p>{@link #close()} frees the configuration (every one {@link #withRegistry} made) and the
 * refresher; connections made from a configuration keep what they need. No secret appears in
 * {@link #toString()}, {@link #effective()} or an exception's message. Safe to share between
 * threads.
 */
public final class ClientSetup implements AutoCloseable {
    /** What the host still has to do for the client (the core's {@code ClientLogin}). */
    public enum Login {
        /** Nothing: the credential is in the configuration, or made by the refresher's own login. */
        READY,
        /** Tokens from an identity provider, fetched by the refresher's own login. */
        OIDC,
        /** The host supplies tokens to the refresher. */
        HOST_TOKEN,
        /** Kerberos: the host registers a GSSAPI client, then calls {@link #withRegistry}. */
        KERBEROS
    }

    /** The core's {@code ClientSetup}, kept for {@link #withRegistry}. */
    private static final class Built extends NativeHandle {
        Built(long handle) {
            super(handle, Native::clientSetupFree);
        }
    }

    private final Built built;
    private final Refresher refresher;
    private final Login login;
    private final String kerberosServiceName;
    private final String kerberosPrincipal;
    private final String kerberosKeytab;
    private final String mechanism;
    private final String securityProtocol;
    private final List<String> unknown;
    private final List<String> warnings;
    private final Map<String, String> effective;
    private volatile ClientConfig config;
    /** Configurations replaced by {@link #withRegistry}: still usable, closed with the setup. */
    private final List<ClientConfig> replaced = new ArrayList<>();

    /** From the record of {@code Native.clientSetupFrom*}; owns its handles from here on. */
    private ClientSetup(byte[] record) {
        Fields f = new Fields(record);
        long c = f.i64();
        long r = f.i64();
        login = Login.values()[f.u8()];
        kerberosServiceName = f.str();
        kerberosPrincipal = f.str();
        kerberosKeytab = f.str();
        mechanism = f.str();
        securityProtocol = f.str();
        unknown = f.strs();
        warnings = f.strs();
        effective = Collections.unmodifiableMap(f.pairs());
        built = new Built(f.i64());
        config = c == 0 ? null : new ClientConfig(c);
        refresher = r == 0 ? null : new Refresher(r);
    }

    /**
     * The client of a {@code .properties} text, by Kafka's client names
     * ({@code security.protocol}, {@code sasl.mechanism}, {@code sasl.jaas.config},
     * {@code sasl.login.refresh.*}, {@code sasl.oauthbearer.token.endpoint.url}, ...) or
     * librdkafka's ({@code sasl.mechanisms}, {@code sasl.username}, {@code sasl.password}, ...).
     *
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) naming the setting to fix; no
     *     secret appears in its message
     */
    public static ClientSetup fromProperties(String text) throws KsaslException {
        Objects.requireNonNull(text, "text");
        Native.init();
        return new ClientSetup(Native.clientSetupFromText(text));
    }

    /** {@link #fromProperties}, from properties given as a map (names to values). */
    public static ClientSetup fromMap(Map<String, String> props) throws KsaslException {
        Objects.requireNonNull(props, "props");
        String[] pairs = Decode.flatten(props);
        Native.init();
        return new ClientSetup(Native.clientSetupFromPairs(pairs));
    }

    /**
     * The connection configuration: give it to each {@link ClientConnection}; {@code null} for
     * GSSAPI until {@link #withRegistry}.
     */
    public ClientConfig config() {
        return config;
    }

    /**
     * For OAUTHBEARER, the refresher holding the current token (the one the configuration's
     * client presents), scheduled by {@code sasl.login.refresh.*}; {@code null} otherwise.
     * Owned by the setup.
     */
    public Refresher refresher() {
        return refresher;
    }

    /** What the host still has to do. */
    public Login login() {
        return login;
    }

    /** For {@link Login#KERBEROS}: the broker's service name ({@code sasl.kerberos.service.name}); else null. */
    public String kerberosServiceName() {
        return kerberosServiceName;
    }

    /** For {@link Login#KERBEROS}: the client principal, if configured; else null. */
    public String kerberosPrincipal() {
        return kerberosPrincipal;
    }

    /** For {@link Login#KERBEROS}: the keytab, if configured; else null. */
    public String kerberosKeytab() {
        return kerberosKeytab;
    }

    /** The SASL mechanism ({@code sasl.mechanism}, or librdkafka's {@code sasl.mechanisms}). */
    public String mechanism() {
        return mechanism;
    }

    /** {@code security.protocol}: {@code SASL_PLAINTEXT} or {@code SASL_SSL}. */
    public String securityProtocol() {
        return securityProtocol;
    }

    /** The {@code sasl.*} and {@code ksasl.*} names the core does not know. */
    public List<String> unknown() {
        return unknown;
    }

    /** The settings without effect, as the core words them. */
    public List<String> warnings() {
        return warnings;
    }

    /** The effective settings in the core's order, secrets shown as {@code [hidden]}. */
    public Map<String, String> effective() {
        return effective;
    }

    /**
     * Rebuilds {@link #config()} for {@link #mechanism()} with {@code registry}'s clients (the
     * core's {@code ClientSetup::with_registry}): for GSSAPI, after registering its client. A
     * configuration returned before stays usable until {@link #close()}.
     *
     * @throws KsaslArgumentException ({@code UNKNOWN_MECHANISM}) when the registry has no client
     *     of the mechanism
     */
    public synchronized void withRegistry(MechanismRegistry registry) throws KsaslException {
        Objects.requireNonNull(registry, "registry");
        long h = built.with(s -> registry.with(r -> Native.clientSetupWithRegistry(s, r, mechanism)));
        ClientConfig old = config;
        config = new ClientConfig(h);
        if (old != null) {
            replaced.add(old);
        }
    }

    /** Frees the configurations and the refresher; idempotent. */
    @Override
    public synchronized void close() {
        built.close();
        ClientConfig c = config;
        if (c != null) {
            c.close();
        }
        replaced.forEach(ClientConfig::close);
        if (refresher != null) {
            refresher.close();
        }
    }

    @Override
    public String toString() {
        return "ClientSetup[mechanism=" + mechanism + ", securityProtocol=" + securityProtocol + ", login=" + login
                + "]";
    }
}
