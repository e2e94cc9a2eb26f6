package org.ksasl;

import java.util.Map;
import java.util.Objects;

/**
 * The configuration shared by client connections: the mechanism, the registry's client side,
 * the re-authentication timing and Kafka's client metrics for all its connections. Immutable
 * and safe to share.
 */
public final class ClientConfig extends NativeHandle {
    private ClientConfig(long handle) {
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

    /** Builds a {@link ClientConfig}. */
    public static final class Builder {
        private final MechanismRegistry registry;
        private final String mechanism;
        private String clientId;
        private ReauthTiming timing = ReauthTiming.KAFKA;
        private int apiVersionsVersion;
        private long reauthRetryMs;

        private Builder(MechanismRegistry registry, String mechanism) {
            this.registry = Objects.requireNonNull(registry, "registry");
            this.mechanism = Objects.requireNonNull(mechanism, "mechanism");
        }

        /** The client id sent in request headers. */
        public Builder clientId(String clientId) {
            this.clientId = clientId;
            return this;
        }

        /** When to re-authenticate (default {@link ReauthTiming#KAFKA}). */
        public Builder reauthTiming(ReauthTiming timing) {
            this.timing = Objects.requireNonNull(timing, "timing");
            return this;
        }

        /** The ApiVersions request version, 0 to 4 (default 0). */
        public Builder apiVersionsVersion(int version) {
            this.apiVersionsVersion = version;
            return this;
        }

        /**
         * After a failed re-authentication: 0 (default, Kafka's rule) fails the connection; a
         * positive delay keeps the old session and retries after it.
         */
        public Builder reauthRetryMs(long ms) {
            this.reauthRetryMs = ms;
            return this;
        }

        public ClientConfig build() throws KsaslException {
            long h = registry.with(r -> Native.clientConfigNew(r, mechanism, clientId, timing.ordinal(),
                    apiVersionsVersion, reauthRetryMs));
            return new ClientConfig(h);
        }
    }
}
