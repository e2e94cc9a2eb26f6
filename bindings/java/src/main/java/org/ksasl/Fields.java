package org.ksasl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
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
    private final ByteBuffer b;

    Fields(byte[] bytes) {
        b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    int u8() {
        return b.get() & 0xff;
    }

    boolean bool() {
        return b.get() != 0;
    }

    int i32() {
        return b.getInt();
    }

    long i64() {
        return b.getLong();
    }

    double f64() {
        return Double.longBitsToDouble(b.getLong());
    }

    /** A time, {@link Native#NONE} meaning none. */
    OptionalLong time() {
        return Time.opt(b.getLong());
    }

    byte[] bytes() {
        int n = b.getInt();
        if (n < 0) {
            return null;
        }
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }

    String str() {
        int n = b.getInt();
        if (n < 0) {
            return null;
        }
        String s = new String(b.array(), b.position(), n, StandardCharsets.UTF_8);
        b.position(b.position() + n);
        return s;
    }

    List<String> strs() {
        int n = b.getInt();
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
        int n = b.getInt() / 2;
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
