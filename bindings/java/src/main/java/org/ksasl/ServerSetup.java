package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One broker listener built from {@code server.properties} by
 * {@link ServerConfig#fromProperties}: its {@link ServerConfig} (mechanisms, users, session
 * lifetimes and limits as the file says), for OAUTHBEARER with JWKS validation the JWKS
 * endpoints the configuration checks tokens with, and, with {@code delegation.token.secret.key},
 * the {@link TokenAuthority} of the listener's delegation tokens.
 *
 * <p>The endpoints hold no key until the host fetches them ({@link JwksEndpoint#fetch}, then
 * {@link JwksEndpoint#start} to keep them fresh). The configuration validates with the endpoints
 * themselves, so a token signed by a key the endpoint does not know yet is held for one fetch
 * of the key set instead of refused.
 *
 * <p>With {@link #tokens()}, SCRAM {@code tokenauth=true} logins are checked against the
 * authority, and the listener's ApiVersions answer lists the token APIs (38-41): the host serves
 * them with {@link TokenAuthority#handleRequest} and sweeps expired tokens
 * ({@link TokenAuthority#nextSweepMs()}, {@link TokenAuthority#sweep}).
 *
 * <p>A listener that enables GSSAPI gets the GSSAPI server its settings describe (the JAAS
 * entry's {@code keyTab} and {@code principal}, {@code sasl.kerberos.service.name},
 * {@code sasl.kerberos.principal.to.local.rules}); its keytab is read when the setup is built,
 * and a missing keytab or key fails there.
 *
 * <p>{@link #close()} frees the configuration, the endpoints and the token authority;
 * connections made from the configuration keep what they need, and a started fetch thread
 * ({@link JwksEndpoint.Fetching}) keeps its endpoint until it is closed. Safe to share between
 * threads.
 */
public final class ServerSetup implements AutoCloseable {
    /**
     * A JWKS endpoint of the listener ({@code sasl.oauthbearer.jwks.endpoint.url}, with the
     * JAAS entry's {@code ssl.*} options, {@code sasl.login.connect.timeout.ms} and
     * {@code sasl.login.read.timeout.ms}), already validating the configuration's tokens.
     *
     * @param url the endpoint URL
     * @param endpoint the endpoint (owned by the {@link ServerSetup}): fetch and start it
     */
    public record Jwks(String url, JwksEndpoint endpoint) {
        public Jwks {
            Objects.requireNonNull(url, "url");
            Objects.requireNonNull(endpoint, "endpoint");
        }
    }

    private final String listener;
    private final ServerConfig config;
    private final List<Jwks> jwks;
    private final TokenAuthority tokens;

    private ServerSetup(String listener, ServerConfig config, List<Jwks> jwks, TokenAuthority tokens) {
        this.listener = listener;
        this.config = config;
        this.jwks = List.copyOf(jwks);
        this.tokens = tokens;
    }

    /** From the record of {@code Native.serverSetupBuild}; owns its handles from here on. */
    static ServerSetup of(String listener, byte[] record) {
        Fields f = new Fields(record);
        long config = f.i64();
        int n = f.i32();
        List<Jwks> jwks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String url = f.str();
            jwks.add(new Jwks(url, new JwksEndpoint(f.i64())));
        }
        long tokens = f.i64();
        return new ServerSetup(listener, new ServerConfig(config), jwks,
                tokens == 0 ? null : new TokenAuthority(tokens));
    }

    /** The listener's name, as given to {@link ServerConfig#fromProperties}. */
    public String listener() {
        return listener;
    }

    /** The listener's configuration: give it to each {@link ServerConnection}. */
    public ServerConfig config() {
        return config;
    }

    /** The JWKS endpoints of the configuration, with their URLs (empty without JWKS validation). */
    public List<Jwks> jwks() {
        return jwks;
    }

    /**
     * The listener's delegation tokens ({@code delegation.token.secret.key}, with
     * {@code delegation.token.max.lifetime.ms} and {@code delegation.token.expiry.time.ms}),
     * owned by the {@link ServerSetup}; {@code null} when the file configures none.
     */
    public TokenAuthority tokens() {
        return tokens;
    }

    /** Frees the configuration, the endpoints and the token authority; idempotent. */
    @Override
    public void close() {
        config.close();
        jwks.forEach(j -> j.endpoint().close());
        if (tokens != null) {
            tokens.close();
        }
    }
}
