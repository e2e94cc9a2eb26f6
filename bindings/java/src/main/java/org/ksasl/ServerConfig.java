package org.ksasl;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The configuration of one listener's server connections: the registry's server mechanisms,
 * {@code connections.max.reauth.ms} (per mechanism if needed), KIP-306's failed-authentication
 * delay, the policy after a failed re-authentication, the ApiVersions answer, and Kafka's
 * broker-side SASL metrics for all its connections. Immutable and safe to share.
 */
public final class ServerConfig extends NativeHandle {
    ServerConfig(long handle) {
        super(handle, Native::serverConfigFree);
    }

    public static Builder builder(MechanismRegistry registry) {
        return new Builder(registry);
    }

    /**
     * Builds one listener of a broker's {@code server.properties} as the core reads it, with
     * Kafka's names and {@code listener.name.<listener>.} and mechanism prefixes:
     * {@code sasl.enabled.mechanisms}; PLAIN against the {@code user_<name>="<password>"}
     * options of the listener's PLAIN JAAS entry; SCRAM against {@code scramStore} (Kafka keeps
     * SCRAM credentials in its metadata, not in the file); OAUTHBEARER with Kafka's unsecured
     * validator, or with a JWKS validator when the file names
     * {@code OAuthBearerValidatorCallbackHandler} and {@code sasl.oauthbearer.jwks.endpoint.url};
     * {@code connections.max.reauth.ms} (per mechanism where the file says so),
     * {@code sasl.server.max.receive.size}, {@code connection.failed.authentication.delay.ms},
     * and delegation tokens with {@code delegation.token.secret.key}
     * ({@link ServerSetup#tokens()}). Every other value keeps the core's defaults (Kafka's). No
     * file is read and nothing is fetched: fetch the JWKS endpoints
     * ({@link ServerSetup.Jwks#endpoint()}).
     *
     * @param text the {@code .properties} text
     * @param listener the listener's name as in {@code listeners} (any case); see
     *     {@link Config#saslListeners}
     * @param scramStore the SCRAM users, or {@code null}: no SCRAM user exists, every SCRAM
     *     login is refused (PLAIN users never come from it)
     * @return the listener's configuration, JWKS endpoints and token authority, owned by the
     *     caller
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) naming the setting to fix; no
     *     password appears in its message
     *     (also for a GSSAPI listener whose keytab cannot be read)
     */
    public static ServerSetup fromProperties(String text, String listener, CredentialStore scramStore)
            throws KsaslException {
        return fromProperties(text, listener, scramStore, new long[0]);
    }

    /**
     * {@link #fromProperties(String, String, CredentialStore)}, with the host's own APIs listed in
     * the listener's ApiVersions answer beside the SASL ones (a broker or proxy lists what it
     * serves, such as Metadata, or Kafka's clients refuse it).
     *
     * @param apis (api key, min version, max version) triples, one after the other; checked as
     *     {@link Builder#setApiVersion} checks them
     */
    public static ServerSetup fromProperties(String text, String listener, CredentialStore scramStore,
            long[] apis) throws KsaslException {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(apis, "apis");
        if (apis.length % 3 != 0) {
            throw new IllegalArgumentException("apis holds (key, min, max) triples");
        }
        Native.init();
        byte[] record = scramStore == null ? Native.serverSetupBuild(text, listener, 0, apis)
                : scramStore.with(s -> Native.serverSetupBuild(text, listener, s, apis));
        return ServerSetup.of(listener, record);
    }

    /** Kafka's broker SASL metrics (names as Kafka's) over every connection of this listener. */
    public Map<String, Double> metrics(long nowMs) {
        return Decode.metrics(with(h -> Native.serverConfigMetrics(h, nowMs)));
    }

    /**
     * The answer (length-prefixed) to an ApiVersions request frame (without its length), as the
     * connection driver answers it before authentication: this listener's APIs, or Kafka's
     * fallback for a version ksasl does not speak. Kafka's clients ask again after
     * authentication; hosts answer those requests with this.
     */
    public byte[] apiVersionsResponse(byte[] frame) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        return with(h -> Native.serverConfigApiVersionsResponse(h, frame));
    }

    /**
     * Builds a {@link ServerConfig}. Only the values set here are passed on; the others keep
     * the core's defaults (Kafka's), and {@link #build()} checks every value with the core's
     * rules ({@code INVALID_CONFIG}, a {@link KsaslArgumentException}).
     */
    public static final class Builder {
        private final MechanismRegistry registry;
        private final Setters setters = new Setters();

        private Builder(MechanismRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /** {@code sasl.enabled.mechanisms}, in handshake order (default: every server mechanism of the registry). */
        public Builder setEnabledMechanisms(List<String> mechanisms) {
            String[] m = mechanisms.toArray(new String[0]);
            setters.add(b -> Native.serverConfigBuilderSetEnabledMechanisms(b, m));
            return this;
        }

        /** {@code connections.max.reauth.ms}: 0 (default) grants no session lifetime. */
        public Builder setMaxReauthMs(long ms) {
            setters.add(b -> Native.serverConfigBuilderSetMaxReauthMs(b, ms));
            return this;
        }

        /** {@code listener.name.X.<mechanism>.connections.max.reauth.ms}. */
        public Builder setMaxReauthMsFor(String mechanism, long ms) {
            Objects.requireNonNull(mechanism, "mechanism");
            setters.add(b -> Native.serverConfigBuilderSetMaxReauthMsFor(b, mechanism, ms));
            return this;
        }

        /** {@code sasl.server.max.receive.size}: the largest authentication frame (default 512 KiB). */
        public Builder setMaxReceiveSize(long bytes) {
            setters.add(b -> Native.serverConfigBuilderSetMaxReceiveSize(b, bytes));
            return this;
        }

        /**
         * {@code socket.request.max.bytes}: the largest request frame of an authenticated
         * connection (default 104,857,600), checked by {@link ServerConnection#checkFrameSize}.
         */
        public Builder setMaxRequestSize(long bytes) {
            setters.add(b -> Native.serverConfigBuilderSetMaxRequestSize(b, bytes));
            return this;
        }

        /**
         * Enumeration resistance (off by default, as in Kafka): a PLAIN or SCRAM login for an
         * unknown user gets a stand-in credential (for SCRAM a salt derived from the name under
         * {@code secret} and {@code iterations}) and fails at the final message exactly as a
         * wrong password does, so clients cannot tell unknown users from wrong passwords. The
         * secret (at least 16 bytes) must be the same on every broker and across restarts;
         * iterations (4096 to 16384) should be those of the real credentials. The host still
         * sees the difference: the {@code unknown_user} detail of the error. Checked by
         * {@link #build}.
         */
        public Builder setUnknownUserMask(byte[] secret, int iterations) {
            byte[] copy = Objects.requireNonNull(secret, "secret").clone();
            setters.add(b -> Native.serverConfigBuilderSetUnknownUserMask(b, copy, iterations));
            return this;
        }

        /** KIP-306's {@code connection.failed.authentication.delay.ms} (default 100). */
        public Builder setFailedAuthenticationDelayMs(long ms) {
            setters.add(b -> Native.serverConfigBuilderSetFailedAuthenticationDelayMs(b, ms));
            return this;
        }

        /** After a failed re-authentication: 0 (Kafka) closes; a positive delay keeps the old session. */
        public Builder setReauthRetryMs(long ms) {
            setters.add(b -> Native.serverConfigBuilderSetReauthRetryMs(b, ms));
            return this;
        }

        /**
         * Adds (or replaces) an API in the ApiVersions answer. The SASL APIs and ApiVersions
         * cannot be advertised beyond what ksasl speaks; API keys and versions are 0 to 32767
         * ({@link #build()} refuses anything else).
         */
        public Builder setApiVersion(long apiKey, long minVersion, long maxVersion) {
            setters.add(b -> Native.serverConfigBuilderSetApiVersion(b, apiKey, minVersion, maxVersion));
            return this;
        }

        /**
         * Adds the SCRAM credential APIs of KIP-554 (DescribeUserScramCredentials and
         * AlterUserScramCredentials) to the ApiVersions answer, in the versions the core serves
         * through {@link CredentialStore#handleScramRequest} (as a Kafka 4 broker advertises them).
         */
        public Builder addScramCredentialApiVersions() {
            for (DelegationTokenCodec.ApiRange r : CredentialStore.scramCredentialApiVersions()) {
                setApiVersion(r.apiKey(), r.minVersion(), r.maxVersion());
            }
            return this;
        }

        /**
         * Accepts pre-0.10 GSSAPI clients (KIP-43), whose first packet is a raw GSS-API token,
         * when GSSAPI is enabled; off by default, as in Kafka 4.x.
         */
        public Builder setLegacyGssapi(boolean on) {
            setters.add(b -> Native.serverConfigBuilderSetLegacyGssapi(b, on));
            return this;
        }

        /** The configuration, if every value is valid (the builder may be used again). */
        public ServerConfig build() throws KsaslException {
            long h = registry.with(r -> {
                long b = Native.serverConfigBuilderNew(r);
                try {
                    return Native.serverConfigBuilderBuild(setters.apply(b));
                } finally {
                    Native.serverConfigBuilderFree(b);
                }
            });
            return new ServerConfig(h);
        }
    }
}
