package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Starting and stopping: every socket and thread the server opens is closed by {@code close()}. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LifecycleTest {
    static List<String> serverThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .filter(n -> n.startsWith("ksasl-kafka-"))
                .collect(Collectors.toList());
    }

    static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 5000;
        while (!condition.getAsBoolean() && System.currentTimeMillis() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(condition.getAsBoolean());
    }

    @Test
    void closeStopsTheListenerAndEveryConnection() throws Exception {
        KsaslKafkaServer server = KsaslKafkaServer.builder().build();
        assertThrows(IllegalStateException.class, server::port);
        int port = server.start();
        assertEquals(port, server.port());
        assertThrows(IllegalStateException.class, server::start);
        try (Socket idle = new Socket(KsaslKafkaServer.HOST, port)) {
            waitFor(() -> server.connections().size() == 1);
            server.close();
            server.close(); // idempotent
            // The server closed its end: the client reads the end of the stream.
            idle.setSoTimeout(5000);
            InputStream in = idle.getInputStream();
            assertEquals(-1, in.read());
        }
        assertEquals(ConnectionStats.CloseReason.STOPPED, server.connections().get(0).closeReason());
        waitFor(() -> serverThreads().isEmpty());
        assertThrows(java.net.ConnectException.class, () -> new Socket(KsaslKafkaServer.HOST, port).close());
    }

    @Test
    void anOversizeFrameBeforeAuthenticationClosesTheConnection() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().build()) {
            server.start();
            try (Socket s = new Socket(KsaslKafkaServer.HOST, server.port())) {
                // Issue 17, defect 2: 100 MiB, larger than sasl.server.max.receive.size
                // (512 KiB): refused on its 4-byte length, before any of the body is read.
                new DataOutputStream(s.getOutputStream()).writeInt(100 * 1024 * 1024);
                s.setSoTimeout(5000);
                assertEquals(-1, s.getInputStream().read());
            }
            waitFor(() -> !server.connections().get(0).isOpen());
            assertEquals(ConnectionStats.CloseReason.PROTOCOL, server.connections().get(0).closeReason());
        }
    }
}
