package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * The setter calls a Java builder collected, replayed on a native builder at {@code build()}:
 * only the values the caller set reach the core, whose builder keeps its defaults for the
 * others and checks everything.
 */
final class Setters {
    private final List<LongConsumer> calls = new ArrayList<>();

    /** Records one native setter call on the builder handle. */
    void add(LongConsumer call) {
        calls.add(call);
    }

    /** The native builder of handle {@code b}, with every recorded setter applied. */
    long apply(long b) {
        for (LongConsumer c : calls) {
            c.accept(b);
        }
        return b;
    }
}
