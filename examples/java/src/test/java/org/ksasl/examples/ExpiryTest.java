package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.ksasl.ClientConfig;
import org.ksasl.ClientConnection;
import org.ksasl.ClientEvent;
import org.ksasl.KsaslException;
import org.ksasl.MechanismRegistry;
import org.ksasl.ReauthTiming;

/**
 * The other side of the gate: a client that never re-authenticates (ksasl's own client driver
 * with {@link ReauthTiming#DISABLED}, which Kafka's Java client cannot be configured to do) is
 * served until its session ends, and its first request afterwards closes the connection
 * without an answer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExpiryTest {
    static final long LIFETIME_MS = 1000;

    @Test
    void aClientThatDoesNotReauthenticateIsClosedOnItsFirstRequestAfterExpiry() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().maxReauthMs(LIFETIME_MS).build();
                MechanismRegistry registry = new MechanismRegistry().addPasswordClients("alice", "alice-secret");
                ClientConfig config = ClientConfig.builder(registry, "SCRAM-SHA-512").setClientId("no-reauth")
                        .setReauthTiming(ReauthTiming.DISABLED).build();
                ClientConnection client = new ClientConnection(config)) {
            server.start();
            server.createTopic("orders", 2);
            try (Socket socket = new Socket(KsaslKafkaServer.HOST, server.port())) {
                DataInputStream in = new DataInputStream(socket.getInputStream());
                OutputStream out = socket.getOutputStream();
                client.start(System.currentTimeMillis());
                out.write(client.transmit());
                ClientEvent event;
                do {
                    event = client.handleFrame(readFrame(in), System.currentTimeMillis());
                    out.write(client.transmit());
                } while (event.kind() == ClientEvent.Kind.CONTINUE);
                assertEquals(ClientEvent.Kind.AUTHENTICATED, event.kind());
                assertEquals(LIFETIME_MS, event.session().lifetimeMs());
                long authenticatedAt = System.currentTimeMillis();

                // Within the session: answered.
                assertTrue(client.beforeRequest(System.currentTimeMillis()));
                out.write(metadataV0Request(7));
                ClientEvent answer = client.handleFrame(readFrame(in), System.currentTimeMillis());
                assertEquals(ClientEvent.Kind.APPLICATION, answer.kind());
                assertEquals(7, ByteBuffer.wrap(answer.frame()).getInt());

                // After it: closed, unanswered.
                Thread.sleep(Math.max(0, authenticatedAt + LIFETIME_MS + 200 - System.currentTimeMillis()));
                assertTrue(client.beforeRequest(System.currentTimeMillis()));
                out.write(metadataV0Request(8));
                boolean closed;
                try {
                    readFrame(in);
                    closed = false;
                } catch (EOFException | SocketException e) {
                    closed = true;
                }
                assertTrue(closed, "the server closes an expired session's connection without answering");
                KsaslException why = client.closed(System.currentTimeMillis());
                assertNotNull(why);
            }
            ConnectionStats c = waitUntilClosed(server);
            assertTrue(c.closedForExpiry(), c.toString());
            assertEquals(0, c.reauthentications());
            assertEquals(1, (int) c.requests().get(Broker.METADATA), c.toString());
            assertEquals(1.0, server.metrics().get("expired-connections-killed-count"));
            assertFalse(c.isOpen());
        }
    }

    private static ConnectionStats waitUntilClosed(KsaslKafkaServer server) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 5000;
        ConnectionStats c = server.connections().get(0);
        while (c.isOpen() && System.currentTimeMillis() < deadline) {
            Thread.sleep(10);
        }
        return c;
    }

    /** A Metadata v0 request for every topic (an empty list), with its length prefix. */
    private static byte[] metadataV0Request(int correlationId) {
        byte[] clientId = "no-reauth".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 10 + clientId.length + 4);
        b.putInt(10 + clientId.length + 4).putShort(Broker.METADATA).putShort((short) 0).putInt(correlationId)
                .putShort((short) clientId.length).put(clientId).putInt(0);
        return b.array();
    }

    private static byte[] readFrame(DataInputStream in) throws IOException {
        byte[] f = new byte[in.readInt()];
        in.readFully(f);
        return f;
    }
}
