package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Kafka connection drivers, on a virtual clock. */
class ConnectionTest {
    static final long T0 = Wire.T0;

    static ServerConfig serverConfig(long maxReauthMs) throws KsaslException {
        CredentialStore store = new CredentialStore();
        store.addUser("alice", "alice-secret");
        store.addUser("mallory", "mallory-secret");
        try (MechanismRegistry r = new MechanismRegistry().addPasswordServers(store).addOAuthBearerServer()) {
            return ServerConfig.builder(r).setMaxReauthMs(maxReauthMs).setFailedAuthenticationDelayMs(100).build();
        } finally {
            store.close();
        }
    }

    static ClientConfig clientConfig(String user, String password, String mech, ReauthTiming timing)
            throws KsaslException {
        try (MechanismRegistry r = new MechanismRegistry().addPasswordClients(user, password)) {
            return ClientConfig.builder(r, mech).setClientId("java-test").setReauthTiming(timing).build();
        }
    }

    /** Every verdict of the gate for API keys -1..80 on {@code c} at {@code now}. */
    static java.util.Set<Gate> verdicts(ServerConnection c, long now) {
        java.util.Set<Gate> out = java.util.EnumSet.noneOf(Gate.class);
        for (short k = -1; k <= 80; k++) {
            out.add(c.gate(k, now));
        }
        return out;
    }

    /**
     * Issue 17, defect 1: before authentication, during a re-authentication and after a failure
     * the gate refuses every request.
     */
    @Test
    void theGateNeverProcessesWithoutALiveSession() throws Exception {
        try (ServerConfig sc = serverConfig(3000);
                ClientConfig cc = clientConfig("alice", "alice-secret", "PLAIN", ReauthTiming.KAFKA);
                ServerConnection fresh = new ServerConnection(sc)) {
            assertEquals(java.util.Set.of(Gate.NOT_AUTHENTICATED), verdicts(fresh, T0));
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(Gate.PROCESS, p.server.gate((short) 3, T0));
            assertEquals(Gate.BEGIN_REAUTHENTICATION, p.server.gate((short) 17, T0 + 1000));
            byte[] mech = "PLAIN".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            byte[] handshake = ByteBuffer.allocate(10 + 2 + mech.length).putShort((short) 17)
                    .putShort((short) 1).putInt(7).putShort((short) -1).putShort((short) mech.length)
                    .put(mech).array();
            assertEquals(ServerAction.CONTINUE, p.server.handleFrame(handshake, T0 + 1000).action());
            assertEquals(java.util.Set.of(Gate.NOT_AUTHENTICATED), verdicts(p.server, T0 + 1000));
            byte[] wrong = "\0alice\0wrong".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            byte[] authenticate = ByteBuffer.allocate(10 + 4 + wrong.length).putShort((short) 36)
                    .putShort((short) 1).putInt(8).putShort((short) -1).putInt(wrong.length)
                    .put(wrong).array();
            ServerOutput o = p.server.handleFrame(authenticate, T0 + 1000);
            assertEquals(ServerAction.FAIL_AT, o.action());
            assertEquals("INVALID_CREDENTIALS", o.error().codeName());
            assertEquals(java.util.Set.of(Gate.CLOSE), verdicts(p.server, T0 + 1000));
            p.client.close();
            p.server.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})
    void authenticatesAndReauthenticatesWithinTheLifetime(String mech) throws Exception {
        try (ServerConfig sc = serverConfig(3000);
                ClientConfig cc = clientConfig("alice", "alice-secret", mech, ReauthTiming.KAFKA)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
            assertTrue(p.client.isReady());
            assertTrue(p.server.isReady());
            ClientSession cs = p.client.session();
            assertEquals(3000, cs.lifetimeMs());
            long reauthAt = cs.reauthAtMs().getAsLong();
            assertTrue(reauthAt >= T0 + 2550 && reauthAt <= T0 + 2850, "85-95 %: " + cs);
            ServerSession ss = p.server.session();
            assertEquals("User:alice", ss.principal());
            assertEquals(mech, ss.mechanism());
            assertEquals(OptionalLong.of(T0 + 3000), ss.expiryMs());
            assertEquals(OptionalLong.of(reauthAt), p.client.nextDeadline());
            assertEquals(OptionalLong.of(T0 + 3000), p.server.nextDeadline());

            // Requests flow; at the deadline the client re-authenticates, and requests resume.
            long now = T0;
            int corr = 1;
            for (int round = 0; round < 5; round++) {
                assertTrue(p.client.beforeRequest(now));
                p.pump(now, Wire.metadataRequest(corr++));
                long due = p.client.nextDeadline().getAsLong();
                now = due;
                assertTrue(p.client.handleTimeout(now));
                assertTrue(p.client.isReauthenticating());
                assertFalse(p.client.beforeRequest(now));
                p.pump(now);
                assertEquals(ClientEvent.Kind.REAUTHENTICATED, p.events.get(p.events.size() - 1));
                assertNull(p.closed);
            }
            assertEquals(5, p.responses.size());
            Map<String, Double> server = sc.metrics(now);
            assertEquals(1.0, server.get("successful-authentication-total"));
            assertEquals(5.0, server.get("successful-reauthentication-total"));
            Map<String, Double> client = cc.metrics(now);
            assertEquals(5.0, client.get("successful-reauthentication-total"));
            assertTrue(client.containsKey("reauthentication-latency-avg"));
            p.client.close();
            p.server.close();
        }
    }

    @Test
    void clientWithoutReauthenticationIsClosedAtExpiry() throws Exception {
        try (ServerConfig sc = serverConfig(3000);
                ClientConfig cc = clientConfig("alice", "alice-secret", "PLAIN", ReauthTiming.DISABLED)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            p.pump(T0);
            assertEquals(OptionalLong.empty(), p.client.nextDeadline());
            p.pump(T0 + 2999, Wire.metadataRequest(7));
            assertEquals(List.of(7), p.responses);
            p.pump(T0 + 3001, Wire.metadataRequest(8));
            assertEquals("expired", p.closed);
            assertEquals(1.0, sc.metrics(T0 + 3001).get("expired-connections-killed-count"));
            KsaslException why = p.client.closed(T0 + 3002);
            assertNotNull(why.codeName());
        }
    }

    @Test
    void principalChangeOnReauthenticationIsRefusedWithKafkasMessage() throws Exception {
        // The client's next token names another principal: the broker must refuse it.
        try (Refresher refresher = new Refresher(); MechanismRegistry cr = new MechanismRegistry();
                ServerConfig sc = serverConfig(3000)) {
            refresher.poll(T0);
            refresher.setToken(OAuthBearerToken.unsecured("alice", 3600, null, T0), T0);
            cr.addOAuthBearerClient(refresher);
            try (ClientConfig cc = ClientConfig.builder(cr, "OAUTHBEARER").build()) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                p.pump(T0);
                assertEquals("User:alice", p.server.session().principal());
                long due = p.client.nextDeadline().getAsLong();
                refresher.poll(due);
                refresher.setToken(OAuthBearerToken.unsecured("mallory", 3600, null, due), due);
                assertTrue(p.client.handleTimeout(due));
                KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(due));
                assertTrue(e.getMessage().contains(
                        "Cannot change principals during re-authentication from User.alice: User.mallory"),
                        e.getMessage());
                ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
                assertEquals(ServerAction.FAIL_AT, last.action());
                assertEquals("PRINCIPAL_CHANGED", last.error().codeName());
                assertEquals(1.0, sc.metrics(due).get("failed-reauthentication-total"));
                p.client.close();
                p.server.close();
            }
        }
    }

    @Test
    void pullFormThroughTheServerDriverAndItsAsyncHelper() throws Exception {
        try (MechanismRegistry sr = new MechanismRegistry().addPasswordServers();
                ServerConfig sc = ServerConfig.builder(sr).setMaxReauthMs(60_000).setApiVersion(3, 0, 12).build();
                ClientConfig cc = clientConfig("gina", "gina-pw", "SCRAM-SHA-256", ReauthTiming.KAFKA);
                ClientConnection client = new ClientConnection(cc);
                ServerConnection server = new ServerConnection(sc)) {
            AtomicLong clock = new AtomicLong(T0);
            AsyncCredentialLookup lookup = req -> CompletableFuture.supplyAsync(() -> req.username().equals("gina")
                    ? CredentialAnswer.password("gina-pw") : CredentialAnswer.unknown());
            client.start(T0);
            byte[] toServer = client.transmit();
            int needed = 0;
            while (toServer.length > 0) {
                byte[] toClient = new byte[0];
                for (byte[] f : Wire.frames(toServer)) {
                    ServerOutput o = server.handleFrameAsync(f, lookup, clock::get).join();
                    assertFalse(o.action() == ServerAction.NEED_CREDENTIAL);
                    toClient = Wire.concat(toClient, o.frames());
                    needed += o.action() == ServerAction.CONTINUE ? 0 : 1;
                }
                for (byte[] f : Wire.frames(toClient)) {
                    client.handleFrame(f, T0);
                }
                toServer = client.transmit();
            }
            assertTrue(server.isReady());
            assertEquals("User:gina", server.session().principal());
            assertEquals(1, needed);
        }
        // A failing asynchronous lookup fails the future with its exception.
        try (MechanismRegistry sr = new MechanismRegistry().addPasswordServers();
                ServerConfig sc = ServerConfig.builder(sr).build();
                ClientConfig cc = clientConfig("hal", "pw", "PLAIN", ReauthTiming.KAFKA);
                ClientConnection client = new ClientConnection(cc);
                ServerConnection server = new ServerConnection(sc)) {
            RuntimeException down = new RuntimeException("db down");
            client.start(T0);
            CompletableFuture<ServerOutput> last = null;
            byte[] toServer = client.transmit();
            for (int i = 0; i < 3 && toServer.length > 0; i++) {
                byte[] toClient = new byte[0];
                for (byte[] f : Wire.frames(toServer)) {
                    last = server.handleFrameAsync(f, req -> CompletableFuture.failedFuture(down), () -> T0);
                    if (last.isCompletedExceptionally()) {
                        break;
                    }
                    toClient = Wire.concat(toClient, last.join().frames());
                }
                if (last.isCompletedExceptionally()) {
                    break;
                }
                for (byte[] f : Wire.frames(toClient)) {
                    client.handleFrame(f, T0);
                }
                toServer = client.transmit();
            }
            CompletableFuture<ServerOutput> failed = last;
            CompletionException e = assertThrows(CompletionException.class, failed::join);
            assertSame(down, e.getCause());
        }
    }

    @Test
    void illegalStateResponseAndBadFrames() throws Exception {
        // A SaslHandshake v1 request reaching the request handlers.
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + 4 + 2 + 2 + 5);
        b.putShort((short) 17).putShort((short) 1).putInt(42).putShort((short) -1).putShort((short) 5)
                .put("PLAIN".getBytes());
        byte[] r = ServerConnection.illegalStateResponse(b.array());
        assertNotNull(r);
        ByteBuffer rb = ByteBuffer.wrap(r);
        assertEquals(r.length - 4, rb.getInt());
        assertEquals(42, rb.getInt());
        assertEquals(34, rb.getShort());
        assertNull(ServerConnection.illegalStateResponse(Wire.metadataRequest(1)));
        try (ServerConfig sc = serverConfig(0); ServerConnection s = new ServerConnection(sc)) {
            ServerOutput o = s.handleFrame(new byte[] {0, 1});
            assertTrue(o.action() == ServerAction.CLOSE_NOW || o.action() == ServerAction.FAIL_AT, o.toString());
            assertNotNull(o.error());
            assertEquals(ErrorKind.PROTOCOL, o.error().kind());
        }
    }

    static byte[] unhex(String hex) {
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    /**
     * Issue 17, defect 5: a request other than SaslAuthenticate during an exchange. ksasl
     * answers Metadata itself; for Produce, whose schema it does not have, it writes nothing
     * and tells the host what it needs to build Kafka's answer.
     */
    @Test
    void aRequestRefusedDuringTheExchangeIsLeftToTheHostOnlyWithoutASchema() throws Exception {
        // SaslHandshake v1 PLAIN, correlation id 1, client id "test".
        byte[] handshake = unhex("00110001000000010004746573740005504c41494e");
        // Metadata v4 for topics t1 and t2 (auto-create), correlation id 2.
        byte[] metadata = unhex("000300040000000200047465737400000002000274310002743201");
        // Produce v3, correlation id 7: acks 1, timeout 1000, topic "t" partition 0, no records.
        byte[] produce = unhex("0000000300000007000474657374ffff0001000003e800000001000174000000010000000000000000");
        try (ServerConfig sc = serverConfig(3000);
                ServerConnection fresh = new ServerConnection(sc);
                ServerConnection md = new ServerConnection(sc);
                ServerConnection pr = new ServerConnection(sc)) {
            assertNull(fresh.refusedRequest());

            assertEquals(ServerAction.CONTINUE, md.handleFrame(handshake, T0).action());
            ServerOutput o = md.handleFrame(metadata, T0);
            assertEquals(ServerAction.FAIL_AT, o.action());
            assertTrue(o.frames().length > 4, o.toString());
            ByteBuffer b = ByteBuffer.wrap(o.frames());
            assertEquals(o.frames().length - 4, b.getInt());
            assertEquals(2, b.getInt());
            assertNull(md.refusedRequest());

            assertEquals(ServerAction.CONTINUE, pr.handleFrame(handshake, T0).action());
            assertNull(pr.refusedRequest());
            o = pr.handleFrame(produce, T0);
            assertEquals(ServerAction.FAIL_AT, o.action());
            assertEquals(0, o.frames().length);
            assertEquals(new RefusedRequest((short) 0, (short) 3, 7, (short) 34,
                    "Unexpected Kafka request of type PRODUCE during SASL authentication."), pr.refusedRequest());
        }
    }

    @Test
    void unknownUsersFailLikeWrongPasswordsWithTheMask() throws Exception {
        // Issue 17, enumeration resistance.
        byte[] secret = "a secret shared by every broker".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (CredentialStore store = new CredentialStore()) {
            store.addUser("alice", "alice-secret");
            try (MechanismRegistry r = new MechanismRegistry().addPasswordServers(store)) {
                assertEquals("INVALID_CONFIG", assertThrows(KsaslArgumentException.class,
                        () -> ServerConfig.builder(r).setUnknownUserMask(new byte[15], 4096).build()).codeName());
                try (ServerConfig sc = ServerConfig.builder(r).setUnknownUserMask(secret, 4096).build()) {
                    ServerOutput wrong = failedLogin(sc, "alice");
                    ServerOutput unknown = failedLogin(sc, "mallory");
                    assertEquals(ServerAction.FAIL_AT, unknown.action());
                    assertArrayEquals(wrong.frames(), unknown.frames());
                    assertEquals("INVALID_CREDENTIALS", unknown.error().codeName());
                    assertEquals(wrong.error().codeName(), unknown.error().codeName());
                    assertEquals(wrong.error().clientMessage(), unknown.error().clientMessage());
                    assertEquals("true", unknown.error().details().get("unknown_user"));
                    assertNull(wrong.error().details().get("unknown_user"));
                }
            }
        }
    }

    /** A SCRAM-SHA-256 login with a wrong password; the server's last output. */
    private static ServerOutput failedLogin(ServerConfig sc, String user) throws Exception {
        try (ClientConfig cc = clientConfig(user, "not-the-password", "SCRAM-SHA-256", ReauthTiming.KAFKA)) {
            Wire.Pair p = new Wire.Pair(cc, sc);
            p.client.start(T0);
            assertThrows(KsaslException.class, () -> p.pump(T0));
            ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
            // ApiVersions, SaslHandshake, the challenge (the unknown user gets one too), then the
            // failure at the final message.
            assertEquals(4, p.serverOutputs.size(), p.serverOutputs.toString());
            p.client.close();
            p.server.close();
            return last;
        }
    }

    @Test
    void oauthRefresherTrackerDriveReauthenticationWithANewToken() throws Exception {
        try (Refresher refresher = new Refresher();
                Tracker tracker = new Tracker(refresher, 1000);
                MechanismRegistry cr = new MechanismRegistry();
                ServerConfig sc = serverConfig(600_000)) {
            OAuthBearerToken t1 = OAuthBearerToken.unsecured("ivy", 3600, null, T0);
            assertTrue(refresher.poll(T0));
            long g1 = refresher.setToken(t1, T0);
            cr.addOAuthBearerClient(refresher);
            try (ClientConfig cc = ClientConfig.builder(cr, "OAUTHBEARER").build()) {
                Wire.Pair p = new Wire.Pair(cc, sc);
                p.client.start(T0);
                p.pump(T0);
                assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
                tracker.authenticated(1, g1, p.client.session());
                long due = refresher.nextDeadline().getAsLong();
                Tracker.Poll poll = tracker.poll(due);
                // The tracker's poll answers the refresher: the fetch is now outstanding.
                assertTrue(poll.refreshNeeded());
                assertFalse(refresher.poll(due));
                OAuthBearerToken t2 = OAuthBearerToken.unsecured("ivy", 3600, null, due);
                long g2 = refresher.setToken(t2, due);
                assertEquals(g1 + 1, g2);
                long spreadEnd = due + 1000;
                Tracker.Poll after = tracker.poll(spreadEnd);
                assertArrayEquals(new long[] {1}, after.reauthenticate());
                assertTrue(p.client.startReauthentication(spreadEnd));
                p.pump(spreadEnd);
                assertEquals(ClientEvent.Kind.REAUTHENTICATED, p.events.get(1));
                assertEquals(OptionalLong.of(t2.expiryMs()), p.server.session().outcome().credentialExpiryMs());
                tracker.forget(1);
                assertEquals(0, tracker.poll(spreadEnd + 1).reauthenticate().length);
                p.client.close();
                p.server.close();
            }
        }
    }

    @Test
    void apiVersionsAfterAuthenticationComeFromTheConfig() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry().addPasswordServers();
                ServerConfig sc = ServerConfig.builder(r).setApiVersion(3, 0, 12).build()) {
            // ApiVersions v0, correlation id 9, null client id.
            byte[] req = ByteBuffer.allocate(10).putShort((short) 18).putShort((short) 0).putInt(9).putShort((short) -1)
                    .array();
            ByteBuffer b = ByteBuffer.wrap(sc.apiVersionsResponse(req));
            assertEquals(b.remaining() - 4, b.getInt());
            assertEquals(9, b.getInt());
            assertEquals(0, b.getShort());
            int n = b.getInt();
            boolean metadata = false;
            for (int i = 0; i < n; i++) {
                short key = b.getShort();
                b.getShort();
                short max = b.getShort();
                metadata |= key == 3 && max == 12;
            }
            assertTrue(metadata);
            assertThrows(KsaslArgumentException.class, () -> sc.apiVersionsResponse(Wire.metadataRequest(1)));
            assertThrows(KsaslArgumentException.class, () -> ServerConfig.builder(r).setApiVersion(17, 0, 3).build());
            assertThrows(IllegalArgumentException.class, () -> ServerConfig.builder(r).setApiVersion(3, 0, 70_000).build());
        }
    }

    @Test
    void configValidation() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry().addPasswordClients("a", "b").addPasswordServers()) {
            KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                    () -> ClientConfig.builder(r, "OAUTHBEARER").build());
            assertEquals("UNKNOWN_MECHANISM", e.codeName());
            assertThrows(KsaslArgumentException.class, () -> ClientConfig.builder(r, "PLAIN").setApiVersionsVersion(9).build());
            assertThrows(KsaslArgumentException.class, () -> ClientConfig.builder(r, "PLAIN").setReauthRetryMs(-5).build());
            assertThrows(KsaslArgumentException.class, () -> ServerConfig.builder(r).setMaxReauthMs(-1).build());
            assertThrows(KsaslArgumentException.class, () -> ServerConfig.builder(r).setApiVersion(3, 5, 1).build());
            try (ServerConfig ok = ServerConfig.builder(r).setMaxReauthMsFor("PLAIN", 5000).setReauthRetryMs(500).build()) {
                assertFalse(ok.metrics(T0).isEmpty());
            }
        }
    }
}
