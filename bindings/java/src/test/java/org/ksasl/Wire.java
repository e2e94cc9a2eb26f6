package org.ksasl;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** Frame helpers and an in-memory client/server pair on a virtual clock. */
final class Wire {
    private Wire() {}

    static final long T0 = 1_800_000_000_000L;

    /** Splits length-prefixed frames. */
    static List<byte[]> frames(byte[] data) {
        List<byte[]> out = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(data);
        while (b.remaining() >= 4) {
            int n = b.getInt();
            byte[] f = new byte[n];
            b.get(f);
            out.add(f);
        }
        if (b.hasRemaining()) {
            throw new AssertionError("trailing bytes");
        }
        return out;
    }

    /** A Metadata v0 request for all topics, length-prefixed. */
    static byte[] metadataRequest(int correlationId) {
        ByteBuffer b = ByteBuffer.allocate(4 + 12);
        b.putInt(12).putShort((short) 3).putShort((short) 0).putInt(correlationId).putShort((short) -1);
        return b.array();
    }

    /** A client and a server connection connected in memory. */
    static final class Pair {
        final ClientConnection client;
        final ServerConnection server;
        final List<ClientEvent.Kind> events = new ArrayList<>();
        final List<Integer> responses = new ArrayList<>();
        final List<ServerOutput> serverOutputs = new ArrayList<>();
        String closed;

        Pair(ClientConfig c, ServerConfig s) {
            client = new ClientConnection(c);
            server = new ServerConnection(s);
        }

        /** Moves bytes both ways until quiet; application requests get an empty response. */
        void pump(long now, byte[] extra) throws KsaslException {
            byte[] toServer = concat(extra, client.transmit());
            while (toServer.length > 0) {
                byte[] toClient = new byte[0];
                for (byte[] f : frames(toServer)) {
                    // The gate alone routes every frame: only PROCESS reaches the handlers.
                    ByteBuffer h = ByteBuffer.wrap(f);
                    short key = h.getShort();
                    h.getShort();
                    int corr = h.getInt();
                    Gate g = server.gate(key, now);
                    if (g == Gate.CLOSE_EXPIRED || g == Gate.CLOSE) {
                        closed = g == Gate.CLOSE ? "failed" : "expired";
                        return;
                    }
                    if (g == Gate.PROCESS) {
                        if (!server.isReady()) {
                            throw new AssertionError("PROCESS on a connection that is not ready");
                        }
                        toClient = concat(toClient, ByteBuffer.allocate(8).putInt(4).putInt(corr).array());
                        continue;
                    }
                    ServerOutput o = server.handleFrame(f, now);
                    serverOutputs.add(o);
                    toClient = concat(toClient, o.frames());
                    if (o.action() == ServerAction.FAIL_AT || o.action() == ServerAction.CLOSE_NOW) {
                        closed = o.action().name();
                    }
                }
                for (byte[] f : frames(toClient)) {
                    ClientEvent ev = client.handleFrame(f, now);
                    if (ev.kind() == ClientEvent.Kind.APPLICATION) {
                        responses.add(ByteBuffer.wrap(ev.frame()).getInt());
                    } else if (ev.kind() != ClientEvent.Kind.CONTINUE) {
                        events.add(ev.kind());
                    }
                }
                if (closed != null) {
                    return;
                }
                toServer = client.transmit();
            }
        }

        void pump(long now) throws KsaslException {
            pump(now, new byte[0]);
        }
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] r = new byte[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** Runs a mechanism exchange to the end and returns the outcome. */
    static AuthOutcome run(ClientExchange c, ServerExchange s, long now) throws KsaslException {
        ClientStep step = c.start(now);
        while (true) {
            ServerStep r = s.step(step.message() == null ? new byte[0] : step.message(), now);
            if (r.kind() == ServerStep.Kind.DONE) {
                if (r.message() != null && !c.isComplete()) {
                    c.step(r.message(), now);
                }
                return s.outcome();
            }
            if (r.kind() == ServerStep.Kind.NEED_CREDENTIAL) {
                throw new AssertionError("unexpected credential request " + s.credentialRequest());
            }
            step = c.step(r.message(), now);
        }
    }
}
