package org.ksasl.bench;

import java.util.OptionalLong;
import org.ksasl.BenchProbe.JavaGateRule;
import org.ksasl.ClientEvent;
import org.ksasl.Gate;

/**
 * What the same bookkeeping costs in plain Java: a connection object with its state in
 * fields and a {@code synchronized} method, the way a pure-Java SASL layer (Kafka's own) does it.
 */
final class JavaBaselines {
    private JavaBaselines() {}

    private static final Gate[] GATES = Gate.values();

    /** A server connection's gate: Kafka's rule on fields, under the object's monitor. */
    static final class ServerConn {
        private final JavaGateRule rule;

        ServerConn(long expiryMs) {
            this.rule = new JavaGateRule(expiryMs);
        }

        synchronized Gate gate(short apiKey, long nowMs) {
            return GATES[rule.gate(apiKey, nowMs)];
        }
    }

    /** A token refresher's generation counter, read under its lock (ksasl's reads a Rust mutex). */
    static final class Refresher {
        private long generation = 1;

        synchronized long generation() {
            return generation;
        }
    }

    /** A client connection that passes application responses through once authenticated. */
    static final class ClientConn {
        private boolean ready = true;

        synchronized ClientEvent handleFrame(byte[] frame, long nowMs) {
            if (!ready) {
                throw new IllegalStateException("not authenticated");
            }
            return new ClientEvent(ClientEvent.Kind.APPLICATION, frame, null, null, OptionalLong.empty());
        }
    }
}
