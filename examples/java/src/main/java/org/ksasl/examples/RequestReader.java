package org.ksasl.examples;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Reads a Kafka request field by field (big-endian). Each variable-length field exists in a
 * classic form (int16/int32 length, -1 for null) and, in the "flexible" versions of an API, a
 * compact form (unsigned varint of length + 1, 0 for null); the {@code flexible} argument picks
 * the form. A truncated or inconsistent request raises {@link MalformedRequestException}.
 */
final class RequestReader {
    private final ByteBuffer buf;

    RequestReader(byte[] frame) {
        this.buf = ByteBuffer.wrap(frame);
    }

    /** Thrown for a request that does not match its schema; the server closes the connection. */
    static final class MalformedRequestException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        MalformedRequestException(String message) {
            super(message);
        }
    }

    int remaining() {
        return buf.remaining();
    }

    private void need(int n) {
        if (n < 0 || n > buf.remaining()) {
            throw new MalformedRequestException("field of " + n + " bytes with " + buf.remaining() + " left");
        }
    }

    byte int8() {
        need(1);
        return buf.get();
    }

    boolean bool() {
        return int8() != 0;
    }

    short int16() {
        need(2);
        return buf.getShort();
    }

    int int32() {
        need(4);
        return buf.getInt();
    }

    long int64() {
        need(8);
        return buf.getLong();
    }

    UUID uuid() {
        long hi = int64();
        return new UUID(hi, int64());
    }

    /** An unsigned LEB128 varint of at most 5 bytes (32 bits). */
    int unsignedVarint() {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte b = int8();
            value |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new MalformedRequestException("varint longer than 5 bytes");
    }

    /** The length of a string, bytes or array field; -1 for null. */
    private int length(boolean flexible, boolean wide) {
        if (flexible) {
            long n = (unsignedVarint() & 0xffffffffL) - 1;
            if (n > Integer.MAX_VALUE) {
                throw new MalformedRequestException("length " + n);
            }
            return (int) n;
        }
        int n = wide ? int32() : int16();
        if (n < -1) {
            throw new MalformedRequestException("negative length " + n);
        }
        return n;
    }

    /** A (nullable) string: int16 length, or compact in flexible versions. */
    String string(boolean flexible) {
        int n = length(flexible, false);
        if (n < 0) {
            return null;
        }
        need(n);
        byte[] b = new byte[n];
        buf.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** (Nullable) bytes: int32 length, or compact in flexible versions. */
    byte[] bytes(boolean flexible) {
        int n = length(flexible, true);
        if (n < 0) {
            return null;
        }
        need(n);
        byte[] b = new byte[n];
        buf.get(b);
        return b;
    }

    /** An array's element count: int32, or compact in flexible versions; -1 for a null array. */
    int arrayLength(boolean flexible) {
        int n = length(flexible, true);
        // Every element takes at least one byte: a larger count cannot be genuine.
        if (n > buf.remaining()) {
            throw new MalformedRequestException("array of " + n + " elements with " + buf.remaining() + " bytes left");
        }
        return n;
    }

    /** Skips a tagged-field section (flexible versions): none of the tags is used here. */
    void skipTaggedFields() {
        int count = unsignedVarint();
        for (int i = 0; i < count; i++) {
            unsignedVarint(); // tag
            int size = unsignedVarint();
            need(size);
            buf.position(buf.position() + size);
        }
    }

    /** Skips a tagged-field section in flexible versions; nothing otherwise. */
    void tags(boolean flexible) {
        if (flexible) {
            skipTaggedFields();
        }
    }

    // --- Kafka's own rules (the generated readers of kafka-clients 4.4), for a request that must
    // be read exactly as a Kafka broker reads it: what Kafka cannot read, it does not answer.

    /**
     * A length as Kafka reads it: int16 or int32, or in flexible versions an unsigned varint
     * minus one, in int arithmetic. Any negative length means null.
     */
    private int kafkaLength(boolean flexible, boolean wide) {
        if (flexible) {
            return unsignedVarint() - 1;
        }
        return wide ? int32() : int16();
    }

    /** A string as Kafka reads it: {@code null} for any negative length if {@code nullable}. */
    String kafkaString(boolean flexible, boolean nullable) {
        int n = kafkaLength(flexible, false);
        if (n < 0) {
            if (nullable) {
                return null;
            }
            throw new MalformedRequestException("non-nullable string serialized as null");
        }
        if (n > 0x7fff) {
            throw new MalformedRequestException("string of length " + n);
        }
        need(n);
        byte[] b = new byte[n];
        buf.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Skips nullable bytes (a record set) as Kafka reads them; returns whether they were null. */
    boolean kafkaSkipNullableBytes(boolean flexible) {
        int n = kafkaLength(flexible, true);
        if (n < 0) {
            return true;
        }
        need(n);
        buf.position(buf.position() + n);
        return false;
    }

    /** A non-nullable array's element count as Kafka reads it, with its limits. */
    int kafkaArrayLength(boolean flexible) {
        int n = kafkaLength(flexible, true);
        if (n < 0 || n > buf.remaining() || n > 1_000_000) {
            throw new MalformedRequestException("array of " + n + " elements with " + buf.remaining() + " bytes left");
        }
        return n;
    }

    /** Skips a tagged-field section in flexible versions as Kafka reads it, with its limits. */
    void kafkaTags(boolean flexible) {
        if (!flexible) {
            return;
        }
        int count = unsignedVarint();
        if (count < 0 || count > buf.remaining() || count > 10_000) {
            throw new MalformedRequestException(count + " tagged fields with " + buf.remaining() + " bytes left");
        }
        for (int i = 0; i < count; i++) {
            unsignedVarint(); // tag
            int size = unsignedVarint();
            need(size);
            buf.position(buf.position() + size);
        }
    }
}
