package org.ksasl;

import java.util.OptionalLong;

final class Time {
    private Time() {}

    static OptionalLong opt(long v) {
        return v == Native.NONE ? OptionalLong.empty() : OptionalLong.of(v);
    }

    static long raw(OptionalLong v) {
        return v.isPresent() ? v.getAsLong() : Native.NONE;
    }
}
