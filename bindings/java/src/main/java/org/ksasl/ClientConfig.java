package org.ksasl;

import java.util.Map;
import java.util.Objects;

/**
 * The configuration shared by client connections: the mechanism, the registry's client side,
 * the re-authentication timing and Kafka's client metrics for all its connections. Immutable
 * and safe to share.
 */
public final class ClientConfig extends NativeHandle {
    /** Owns a configuration handle (the builder's, or a {@link ClientSetup}'s). */
    ClientConfig(long handle) {
        super(handle, Native::clientConfigFree);
    }

    /** Starts a configuration for {@code mechanism}, which must be a client mechanism of {@code registry}. */
    public static Builder builder(MechanismRegistry registry, String mechanism) {
        return new Builder(registry, mechanism);
    }

    /** Kafka's SASL client metrics (names as Kafka's) over every connection of this configuration. */
    public Map<String, Double> metrics(long nowMs) {
        return Decode.metrics(with(h -> Native.clientConfigMetrics(h, nowMs)));
    }

    /**
     * Builds a {@link ClientConfig}. Only the values set here are passed on; the others keep
     * the core's defaults (Kafka's), and {@link #build()} checks every value with the core's
     * rules: {@code UNKNOWN_MECHANISM} for a mechanism the registry has no client of,
     * {@code INVALID_CONFIG} for any other bad value ({@link KsaslArgumentException}s).
     */
    public static final class Builder {
        private final MechanismRegistry registry;
        private final String mechanism;
        private final Setters setters = new Setters();

        private Builder(MechanismRegistry registry, String mechanism) {
            this.registry = Objects.requireNonNull(registry, "registry");
            this.mechanism = Objects.requireNonNull(mechanism, "mechanism");
        }

        /** {@code client.id}, sent in request headers (default: none). */
        public Builder setClientId(String clientId) {
            setters.add(b -> Native.clientConfigBuilderSetClientId(b, clientId));
            return this;
        }

        /** When to re-authenticate (default {@link ReauthTiming#KAFKA}). */
        public Builder setReauthTiming(ReauthTiming timing) {
            int t = Objects.requireNonNull(timing, "timing").number();
            setters.add(b -> Native.clientConfigBuilderSetReauthTiming(b, t));
            return this;
        }

        /** The ApiVersions request version sent first, 0 to 5 (default 0, as Kafka's client). */
        public Builder setApiVersionsVersion(long version) {
            setters.add(b -> Native.clientConfigBuilderSetApiVersionsVersion(b, version));
            return this;
        }

        /**
         * Skips ApiVersions: the broker's SaslHandshake version and SaslAuthenticate version
         * (SaslHandshake 1 with SaslAuthenticate 0-2).
         */
        public Builder setKnownVersions(long handshake, long authenticate) {
            setters.add(b -> Native.clientConfigBuilderSetKnownVersions(b, handshake, authenticate, false));
            return this;
        }

        /** Skips ApiVersions with legacy framing: SaslHandshake {@code handshake} (0) without SaslAuthenticate. */
        public Builder setKnownVersions(long handshake) {
            setters.add(b -> Native.clientConfigBuilderSetKnownVersions(b, handshake, 0, true));
            return this;
        }

        /** The software name and version sent in ApiVersions v3+ (default ksasl and its version). */
        public Builder setSoftware(String name, String version) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(version, "version");
            setters.add(b -> Native.clientConfigBuilderSetSoftware(b, name, version));
            return this;
        }

        /** The smallest delay between an authentication and the next re-authentication. */
        public Builder setReauthMinDelayMs(long ms) {
            setters.add(b -> Native.clientConfigBuilderSetReauthMinDelayMs(b, ms));
            return this;
        }

        /**
         * After a failed re-authentication: 0 (default, Kafka's rule) fails the connection; a
         * positive delay keeps the old session and retries after it.
         */
        public Builder setReauthRetryMs(long ms) {
            setters.add(b -> Native.clientConfigBuilderSetReauthRetryMs(b, ms));
            return this;
        }

        /** The largest SASL response accepted (default 512 KiB). */
        public Builder setMaxReceiveSize(long bytes) {
            setters.add(b -> Native.clientConfigBuilderSetMaxReceiveSize(b, bytes));
            return this;
        }

        /** The configuration, if every value is valid (the builder may be used again). */
        public ClientConfig build() throws KsaslException {
            long h = registry.with(r -> {
                long b = Native.clientConfigBuilderNew(r, mechanism);
                try {
                    return Native.clientConfigBuilderBuild(setters.apply(b));
                } finally {
                    Native.clientConfigBuilderFree(b);
                }
            });
            return new ClientConfig(h);
        }
    }
}
