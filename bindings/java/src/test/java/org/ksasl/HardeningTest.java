package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression tests for the defects of issue 17 (hardening) seen from Java; the gate's (defect 1)
 * is in {@link ConnectionTest}, beside the connection pair it uses.
 */
class HardeningTest {
    static final long T0 = Wire.T0;

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Defect 3: RFC 5802 (5.1) says a first message carrying m= must fail, on both sides. */
    @ParameterizedTest
    @ValueSource(strings = {"SCRAM-SHA-256", "SCRAM-SHA-512"})
    void scramReservedAttributeIsRefusedOnBothSides(String mech) throws Exception {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry().addPasswordServers(store)
                        .addPasswordClients("alice", "alice-secret");
                ServerExchange server = new ServerExchange(r, mech);
                ClientExchange client = new ClientExchange(r, mech)) {
            store.addUser("alice", "alice-secret");
            KsaslProtocolException e = assertThrows(KsaslProtocolException.class,
                    () -> server.step(ascii("n,,m=ext,n=alice,r=abc"), T0));
            assertEquals("SCRAM_RESERVED_ATTRIBUTE", e.codeName());
            assertEquals(222, e.code());
            String first = new String(client.start(T0).message(), StandardCharsets.US_ASCII);
            String nonce = first.substring(first.indexOf(",r=") + 3);
            e = assertThrows(KsaslProtocolException.class,
                    () -> client.step(ascii("m=x,r=" + nonce + "xyz,s=QUJD,i=4096"), T0));
            assertEquals("SCRAM_RESERVED_ATTRIBUTE", e.codeName());
        }
    }

    /**
     * Defect 6: Kafka 4.4 answers a successful SaslAuthenticate with an empty error message, not
     * a null one.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2})
    void successfulAuthenticateResponseHasAnEmptyMessage(int version) throws Exception {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry().addPasswordServers(store);
                ServerConfig sc = ServerConfig.builder(r).setMaxReauthMs(10_000).build();
                ServerConnection conn = new ServerConnection(sc)) {
            store.addUser("alice", "alice-secret");
            byte[] handshake = ByteBuffer.allocate(17).putShort((short) 17).putShort((short) 1).putInt(1)
                    .putShort((short) -1).putShort((short) 5).put(ascii("PLAIN")).array();
            assertEquals(ServerAction.CONTINUE, conn.handleFrame(handshake, T0).action());
            byte[] plain = ascii("\0alice\0alice-secret");
            ByteBuffer req = ByteBuffer.allocate(64).putShort((short) 36).putShort((short) version).putInt(2)
                    .putShort((short) -1);
            if (version < 2) {
                req.putInt(plain.length).put(plain);
            } else { // flexible: tagged fields after the header and the body, compact bytes
                req.put((byte) 0).put((byte) (plain.length + 1)).put(plain).put((byte) 0);
            }
            byte[] request = java.util.Arrays.copyOf(req.array(), req.position());
            ServerOutput out = conn.handleFrame(request, T0);
            assertEquals(ServerAction.AUTHENTICATED, out.action());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.write(new byte[] {0, 0, 0, 2}); // correlation id
            byte[] lifetime = ByteBuffer.allocate(8).putLong(10_000).array();
            if (version < 2) {
                body.write(new byte[] {0, 0, 0, 0, 0, 0, 0, 0}); // error, "", no auth bytes
            } else {
                body.write(new byte[] {0, 0, 0, 1, 1}); // tags, error, "", no auth bytes (compact)
            }
            if (version >= 1) {
                body.write(lifetime);
            }
            if (version == 2) {
                body.write(0);
            }
            byte[] want = ByteBuffer.allocate(4 + body.size()).putInt(body.size()).put(body.toByteArray()).array();
            assertArrayEquals(want, out.frames());
        }
    }

    /** Defect 4: a 30,000-character mechanism name appears in an error as at most 64 characters. */
    @org.junit.jupiter.api.Test
    void errorsQuoteLittleOfThePeer() throws Exception {
        String name = "M".repeat(30_000);
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry().addPasswordServers(store);
                ServerConfig sc = ServerConfig.builder(r).build();
                ServerConnection conn = new ServerConnection(sc)) {
            byte[] handshake = ByteBuffer.allocate(12 + name.length()).putShort((short) 17).putShort((short) 1)
                    .putInt(1).putShort((short) -1).putShort((short) name.length()).put(ascii(name)).array();
            ServerOutput out = conn.handleFrame(handshake, T0);
            KsaslException e = out.error();
            assertEquals("UNSUPPORTED_SASL_MECHANISM", e.codeName());
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().length() < 300, e.getMessage());
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("(30000 bytes)"), e.getMessage());
            e.details().values().forEach(v -> org.junit.jupiter.api.Assertions.assertTrue(v.length() < 300, v));
            KsaslArgumentException u = assertThrows(KsaslArgumentException.class, () -> new ServerExchange(r, name));
            assertEquals("UNKNOWN_MECHANISM", u.codeName());
            org.junit.jupiter.api.Assertions.assertTrue(u.getMessage().length() < 300, u.getMessage());
        }
    }

    /** Defect 2: Kafka's limits apply to a frame's declared length, before the body is read. */
    @org.junit.jupiter.api.Test
    void frameSizesAreCheckedOnTheLengthAlone() throws Exception {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry r = new MechanismRegistry().addPasswordServers(store);
                ServerConfig sc = ServerConfig.builder(r).setMaxRequestSize(1_000_000).build();
                ServerConnection conn = new ServerConnection(sc);
                ServerConnection other = new ServerConnection(sc)) {
            assertEquals(524_288, conn.checkFrameSize(524_288, T0));
            KsaslProtocolException e = assertThrows(KsaslProtocolException.class,
                    () -> conn.checkFrameSize(100 * 1024 * 1024, T0));
            assertEquals("MESSAGE_TOO_LARGE", e.codeName());
            assertEquals(Gate.CLOSE, conn.gate((short) 3, T0));
            e = assertThrows(KsaslProtocolException.class, () -> other.checkFrameSize(-1, T0));
            assertEquals("INVALID_FRAME_SIZE", e.codeName());
        }
    }
}
