package org.ksasl;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Reads the fields of a native result sent as one {@code byte[]} (the native side's
 * {@code Rec}, written in the same order): little-endian numbers, and byte strings (UTF-8
 * for text) as an {@code int} length (-1: null) and the bytes. One array crosses JNI instead
 * of a JNI call per string and an upcall per object.
 */
final class Fields {
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final byte[] b;
    /** The next field's offset. */
    private int at;

    Fields(byte[] bytes) {
        b = bytes;
    }

    int u8() {
        return b[at++] & 0xff;
    }

    boolean bool() {
        return b[at++] != 0;
    }

    int i32() {
        int v = (int) INT.get(b, at);
        at += 4;
        return v;
    }

    long i64() {
        long v = (long) LONG.get(b, at);
        at += 8;
        return v;
    }

    double f64() {
        return Double.longBitsToDouble(i64());
    }

    /** A time, {@link Native#NONE} meaning none. */
    OptionalLong time() {
        return Time.opt(i64());
    }

    byte[] bytes() {
        int n = i32();
        if (n < 0) {
            return null;
        }
        at += n;
        return Arrays.copyOfRange(b, at - n, at);
    }

    String str() {
        int n = i32();
        if (n < 0) {
            return null;
        }
        at += n;
        return new String(b, at - n, n, StandardCharsets.UTF_8);
    }

    List<String> strs() {
        int n = i32();
        if (n == 0) {
            return List.of();
        }
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = str();
        }
        return List.of(out);
    }

    /** Strings that alternate names and values. */
    Map<String, String> pairs() {
        int n = i32() / 2;
        if (n == 0) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            out.put(str(), str());
        }
        return out;
    }
}
