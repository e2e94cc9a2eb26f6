package org.ksasl.examples;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Builds one Kafka response body (big-endian). A writer is either classic or flexible: in a
 * flexible version strings, bytes and arrays use the compact forms and every structure ends
 * with a tagged-field section ({@link #tags()} writes an empty one; it does nothing in a classic
 * writer, so encoders can call it unconditionally).
 */
final class ResponseWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(128);
    private final boolean flexible;

    ResponseWriter(boolean flexible) {
        this.flexible = flexible;
    }

    ResponseWriter int8(int v) {
        out.write(v);
        return this;
    }

    ResponseWriter bool(boolean v) {
        return int8(v ? 1 : 0);
    }

    ResponseWriter int16(int v) {
        out.write(v >>> 8);
        out.write(v);
        return this;
    }

    ResponseWriter int32(int v) {
        int16(v >>> 16);
        return int16(v);
    }

    ResponseWriter int64(long v) {
        int32((int) (v >>> 32));
        return int32((int) v);
    }

    ResponseWriter uuid(UUID id) {
        int64(id.getMostSignificantBits());
        return int64(id.getLeastSignificantBits());
    }

    ResponseWriter unsignedVarint(int v) {
        while ((v & ~0x7f) != 0) {
            out.write((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write(v);
        return this;
    }

    /** A (nullable) string in this writer's form. */
    ResponseWriter string(String s) {
        if (s == null) {
            return flexible ? unsignedVarint(0) : int16(-1);
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (flexible) {
            unsignedVarint(b.length + 1);
        } else {
            int16(b.length);
        }
        out.writeBytes(b);
        return this;
    }

    /** An array's element count in this writer's form. */
    ResponseWriter arrayLength(int n) {
        return flexible ? unsignedVarint(n + 1) : int32(n);
    }

    /** An int32 array. */
    ResponseWriter int32Array(int... values) {
        arrayLength(values.length);
        for (int v : values) {
            int32(v);
        }
        return this;
    }

    /** An empty tagged-field section in flexible versions; nothing otherwise. */
    ResponseWriter tags() {
        return flexible ? unsignedVarint(0) : this;
    }

    /**
     * The complete response frame: 4-byte length, correlation id, the header's (empty)
     * tagged-field section when {@code headerV1}, then the body.
     */
    byte[] frame(int correlationId, boolean headerV1) {
        int headerSize = headerV1 ? 5 : 4;
        int size = headerSize + out.size();
        ByteArrayOutputStream f = new ByteArrayOutputStream(4 + size);
        writeInt(f, size);
        writeInt(f, correlationId);
        if (headerV1) {
            f.write(0);
        }
        f.writeBytes(out.toByteArray());
        return f.toByteArray();
    }

    private static void writeInt(ByteArrayOutputStream f, int v) {
        f.write(v >>> 24);
        f.write(v >>> 16);
        f.write(v >>> 8);
        f.write(v);
    }
}
