package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One broker listener built from {@code server.properties} by
 * {@link ServerConfig#fromProperties}: its {@link ServerConfig} (mechanisms, users, session
 * lifetimes and limits as the file says) and, for OAUTHBEARER with JWKS validation, the
 * validators the configuration checks tokens with, each with its endpoint URL and HTTPS
 * settings. The validators hold no key until the host feeds them: start an endpoint on each
 * ({@link Jwks#endpoint()}, then {@link JwksEndpoint#fetch} and {@link JwksEndpoint#start}),
 * or set the key set yourself ({@link JwksValidator#setJwks}).
 *
 * <p>GSSAPI is not built here: the core leaves a listener's GSSAPI server to the host but
 * hands it no GSSAPI server settings it could register (the listener's
 * {@code sasl.kerberos.principal.to.local.rules} stay inside the core's {@code ServerSetup}),
 * so {@link ServerConfig#fromProperties} throws {@link UnsupportedOperationException} for a
 * listener that enables it. Build such a listener with
 * {@link MechanismRegistry#addGssapiServer} and {@link ServerConfig.Builder}.
 *
 * <p>{@link #close()} frees the configuration and the validators; connections made from the
 * configuration keep what they need. Safe to share between threads.
 */
public final class ServerSetup implements AutoCloseable {
    /**
     * A JWKS validator of the listener ({@code sasl.oauthbearer.jwks.endpoint.url}), already in
     * the configuration.
     *
     * @param url the endpoint URL
     * @param validator the validator the configuration uses (owned by the {@link ServerSetup})
     * @param settings how to reach the endpoint, by Kafka's names: the JAAS entry's
     *     {@code ssl.*} options, {@code sasl.login.connect.timeout.ms} and
     *     {@code sasl.login.read.timeout.ms}
     */
    public record Jwks(String url, JwksValidator validator, Map<String, String> settings) {
        public Jwks {
            Objects.requireNonNull(url, "url");
            Objects.requireNonNull(validator, "validator");
            settings = Map.copyOf(settings);
        }

        /**
         * A new endpoint feeding {@link #validator()} from {@link #url()} with
         * {@link #settings()}; the caller fetches, starts and closes it.
         *
         * @throws KsaslArgumentException ({@code INVALID_CONFIG}) for a bad URL or setting
         */
        public JwksEndpoint endpoint() throws KsaslException {
            return new JwksEndpoint(url, validator, settings);
        }
    }

    private final String listener;
    private final ServerConfig config;
    private final List<Jwks> jwks;

    private ServerSetup(String listener, ServerConfig config, List<Jwks> jwks) {
        this.listener = listener;
        this.config = config;
        this.jwks = List.copyOf(jwks);
    }

    /** From the record of {@code Native.serverSetupBuild}; owns its handles from here on. */
    static ServerSetup of(String listener, byte[] record) {
        Fields f = new Fields(record);
        long config = f.i64();
        int n = f.i32();
        List<Jwks> jwks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String url = f.str();
            JwksValidator validator = new JwksValidator(f.i64());
            jwks.add(new Jwks(url, validator, f.pairs()));
        }
        if (config == 0) {
            jwks.forEach(j -> j.validator().close());
            throw new UnsupportedOperationException("listener " + listener + " enables GSSAPI, which the Java "
                    + "binding cannot build from server.properties: the core's ServerSetup leaves the GSSAPI "
                    + "server to the host but gives it no GSSAPI server settings to register (its "
                    + "sasl.kerberos.principal.to.local.rules are private); use MechanismRegistry.addGssapiServer "
                    + "and ServerConfig.Builder for this listener");
        }
        return new ServerSetup(listener, new ServerConfig(config), jwks);
    }

    /** The listener's name, as given to {@link ServerConfig#fromProperties}. */
    public String listener() {
        return listener;
    }

    /** The listener's configuration: give it to each {@link ServerConnection}. */
    public ServerConfig config() {
        return config;
    }

    /** The JWKS validators of the configuration, with their endpoints (empty without JWKS validation). */
    public List<Jwks> jwks() {
        return jwks;
    }

    /** Frees the configuration and the validators; idempotent. */
    @Override
    public void close() {
        config.close();
        jwks.forEach(j -> j.validator().close());
    }
}
