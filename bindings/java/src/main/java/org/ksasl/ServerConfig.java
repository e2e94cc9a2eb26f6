package org.ksasl;

import java.util.ArrayList;
import java.util.LinkedHashMap;
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
    private ServerConfig(long handle) {
        super(handle, Native::serverConfigFree);
    }

    public static Builder builder(MechanismRegistry registry) {
        return new Builder(registry);
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

    /** Builds a {@link ServerConfig}. */
    public static final class Builder {
        private final MechanismRegistry registry;
        private long maxReauthMs;
        private final Map<String, Long> byMechanism = new LinkedHashMap<>();
        private long failedAuthDelayMs = 100;
        private long reauthRetryMs;
        private final List<short[]> apiVersions = new ArrayList<>();

        private Builder(MechanismRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /** {@code connections.max.reauth.ms}: 0 (default) grants no session lifetime. */
        public Builder maxReauthMs(long ms) {
            this.maxReauthMs = ms;
            return this;
        }

        /** {@code listener.name.X.<mechanism>.connections.max.reauth.ms}. */
        public Builder maxReauthMs(String mechanism, long ms) {
            byMechanism.put(Objects.requireNonNull(mechanism, "mechanism"), ms);
            return this;
        }

        /** KIP-306's {@code connection.failed.authentication.delay.ms} (default 100). */
        public Builder failedAuthDelayMs(long ms) {
            this.failedAuthDelayMs = ms;
            return this;
        }

        /** After a failed re-authentication: 0 (Kafka) closes; a positive delay keeps the old session. */
        public Builder reauthRetryMs(long ms) {
            this.reauthRetryMs = ms;
            return this;
        }

        /**
         * Adds (or replaces) an API in the ApiVersions answer. The SASL APIs and ApiVersions
         * cannot be advertised beyond what ksasl speaks ({@link #build()} refuses them).
         */
        public Builder apiVersion(int apiKey, int minVersion, int maxVersion) {
            for (int v : new int[] {apiKey, minVersion, maxVersion}) {
                if (v < 0 || v > Short.MAX_VALUE) {
                    throw new IllegalArgumentException("API keys and versions are 0.." + Short.MAX_VALUE + ", not " + v);
                }
            }
            apiVersions.add(new short[] {(short) apiKey, (short) minVersion, (short) maxVersion});
            return this;
        }

        public ServerConfig build() throws KsaslException {
            String[] mechs = byMechanism.keySet().toArray(new String[0]);
            long[] ms = byMechanism.values().stream().mapToLong(Long::longValue).toArray();
            short[] versions = new short[apiVersions.size() * 3];
            for (int i = 0; i < apiVersions.size(); i++) {
                System.arraycopy(apiVersions.get(i), 0, versions, i * 3, 3);
            }
            long h = registry.with(r -> Native.serverConfigNew(r, maxReauthMs, mechs, ms, failedAuthDelayMs,
                    reauthRetryMs, versions));
            return new ServerConfig(h);
        }
    }
}
