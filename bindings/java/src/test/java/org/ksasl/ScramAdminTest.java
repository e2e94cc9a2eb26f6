package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * KIP-554 through the binding: an AlterUserScramCredentials v0 request built by hand goes
 * through {@link CredentialStore#handleScramRequest}; a malformed frame is a
 * {@link KsaslException}; the API versions come from the core.
 */
class ScramAdminTest {
    static final short ALTER_USER_SCRAM_CREDENTIALS = 51;

    /** A Kafka UNSIGNED_VARINT. */
    static void varint(ByteArrayOutputStream out, int v) {
        while ((v & ~0x7f) != 0) {
            out.write((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write(v);
    }

    static void int16(ByteArrayOutputStream out, int v) {
        out.write(v >>> 8);
        out.write(v);
    }

    static void int32(ByteArrayOutputStream out, int v) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(v).array());
    }

    /** A flexible version's COMPACT_STRING / COMPACT_BYTES: length + 1, then the bytes. */
    static void compact(ByteArrayOutputStream out, byte[] b) {
        varint(out, b.length + 1);
        out.writeBytes(b);
    }

    /**
     * An AlterUserScramCredentials v0 request (without its length prefix) upserting one
     * SCRAM-SHA-256 credential: header v2, no deletions, one upsertion.
     */
    static byte[] alterRequest(int correlationId, String user, int iterations) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int16(out, ALTER_USER_SCRAM_CREDENTIALS);
        int16(out, 0); // version
        int32(out, correlationId);
        byte[] clientId = "binding-test".getBytes(StandardCharsets.UTF_8);
        int16(out, clientId.length); // the client id is a classic INT16-length string
        out.writeBytes(clientId);
        out.write(0); // header tagged fields
        varint(out, 0 + 1); // deletions: empty compact array
        varint(out, 1 + 1); // upsertions: one
        compact(out, user.getBytes(StandardCharsets.UTF_8));
        out.write(1); // mechanism: SCRAM-SHA-256
        int32(out, iterations);
        byte[] salt = new byte[16];
        Arrays.fill(salt, (byte) 7);
        compact(out, salt);
        byte[] saltedPassword = new byte[32];
        Arrays.fill(saltedPassword, (byte) 9);
        compact(out, saltedPassword);
        out.write(0); // upsertion tagged fields
        out.write(0); // request tagged fields
        return out.toByteArray();
    }

    @Test
    void alterRequestIsAnsweredWithItsCorrelationIdAndNoError() throws Exception {
        try (CredentialStore store = new CredentialStore()) {
            byte[] response = store.handleScramRequest(alterRequest(4242, "bob", 4096));
            ByteBuffer r = ByteBuffer.wrap(response);
            assertEquals(response.length - 4, r.getInt(), "length prefix");
            assertEquals(4242, r.getInt(), "correlation id");
            assertEquals(0, r.get(), "response header tagged fields");
            r.getInt(); // throttle time
            assertEquals(1 + 1, r.get(), "one result");
            byte[] user = new byte[r.get() - 1];
            r.get(user);
            assertEquals("bob", new String(user, StandardCharsets.UTF_8));
            assertEquals(0, r.getShort(), "error code");
            assertEquals(0, r.get(), "null error message");
        }
    }

    @Test
    void malformedFrameThrows() throws Exception {
        try (CredentialStore store = new CredentialStore()) {
            byte[] request = alterRequest(1, "bob", 4096);
            byte[] truncated = Arrays.copyOf(request, request.length - 5);
            assertThrows(KsaslException.class, () -> store.handleScramRequest(truncated));
            assertThrows(KsaslException.class, () -> store.handleScramRequest(new byte[] {0, 51}));
        }
    }

    @Test
    void apiVersionsComeFromTheCoreAndAreAdvertised() throws Exception {
        List<DelegationTokenCodec.ApiRange> v = CredentialStore.scramCredentialApiVersions();
        assertEquals(List.of(new DelegationTokenCodec.ApiRange((short) 50, (short) 0, (short) 0),
                new DelegationTokenCodec.ApiRange((short) 51, (short) 0, (short) 0)), v);
        try (MechanismRegistry r = new MechanismRegistry().addPasswordServers();
                ServerConfig sc = ServerConfig.builder(r).addScramCredentialApiVersions().build()) {
            // ApiVersions v0, correlation id 9, null client id.
            byte[] req = ByteBuffer.allocate(10).putShort((short) 18).putShort((short) 0).putInt(9).putShort((short) -1)
                    .array();
            ByteBuffer b = ByteBuffer.wrap(sc.apiVersionsResponse(req));
            assertEquals(b.remaining() - 4, b.getInt());
            assertEquals(9, b.getInt());
            assertEquals(0, b.getShort());
            int n = b.getInt();
            int found = 0;
            for (int i = 0; i < n; i++) {
                short key = b.getShort();
                short min = b.getShort();
                short max = b.getShort();
                if ((key == 50 || key == 51) && min == 0 && max == 0) {
                    found++;
                }
            }
            assertEquals(2, found);
        }
    }
}
