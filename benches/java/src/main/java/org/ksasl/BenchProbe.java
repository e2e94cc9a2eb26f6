package org.ksasl;

/**
 * Benchmark-only access to the binding's package-private layers, to take the per-call cost
 * apart: the bare native entry point ({@link Native}), the {@link NativeHandle#with} wrapper
 * (the handle's guard + lambda) around it, and the same wrapper around a pure-Java body. This class
 * lives in the benchmarks jar, not in the binding (same package name on the class path; the
 * binding's jar is not sealed).
 */
public final class BenchProbe {
    private BenchProbe() {}

    /** The raw native handle (valid while {@code c} is open and reachable). */
    public static long handle(ServerConnection c) {
        return c.with(h -> h);
    }

    public static long handle(ClientConnection c) {
        return c.with(h -> h);
    }

    /** The JNI entry point of {@link ServerConnection#gate} alone: JNI transition, {@code entry()}, Rust mutex, gate. */
    public static int nativeGate(long handle, short apiKey, long nowMs) {
        return Native.serverConnGate(handle, apiKey, nowMs);
    }

    /** {@link ServerConnection#gate} without the number-to-enum lookup: the handle's guard + lambda + JNI. */
    public static int gateViaWith(ServerConnection c, short apiKey, long nowMs) {
        return c.with(h -> Native.serverConnGate(h, apiKey, nowMs));
    }

    /** The JNI entry point of {@link ClientConnection#handleFrame} alone: the event's number. */
    public static int nativeClientHandleFrame(long handle, byte[] frame, long nowMs) throws KsaslException {
        return Native.clientConnHandleFrame(handle, frame, nowMs);
    }

    /**
     * The binding's wrapper with a pure-Java body: the same {@link NativeHandle} guard,
     * capturing lambda and enum lookup by number as {@link ServerConnection#gate}, around the
     * gate rule written in Java. The difference to
     * {@link ServerConnection#gate} is the JNI call and the native side.
     */
    public static final class WrappedJavaGate extends NativeHandle {
        private final JavaGateRule rule;

        public WrappedJavaGate(long expiryMs) {
            super(1L, h -> {});
            this.rule = new JavaGateRule(expiryMs);
        }

        public Gate gate(short apiKey, long nowMs) {
            return Gate.fromNumber(with(h -> rule.gate(apiKey, nowMs)));
        }
    }

    /** Kafka's gate rule (as in ksasl's {@code ServerConnection::gate}), in Java. */
    public static final class JavaGateRule {
        static final short SASL_HANDSHAKE = 17;
        // Mutable connection state, as in a real connection (not constants the JIT could fold).
        private boolean ready = true;
        private long expiryMs;
        private long reauthStartedMs = Long.MIN_VALUE;

        public JavaGateRule(long expiryMs) {
            this.expiryMs = expiryMs;
        }

        public int gate(short apiKey, long nowMs) {
            if (apiKey == SASL_HANDSHAKE && ready && expiryMs != Long.MAX_VALUE
                    && (reauthStartedMs == Long.MIN_VALUE || nowMs - reauthStartedMs >= 1000)) {
                return 1;
            }
            if (nowMs > expiryMs) {
                return 2;
            }
            return 0;
        }
    }
}
