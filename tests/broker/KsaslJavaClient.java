import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.io.FileReader;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.ksasl.ClientConfig;
import org.ksasl.ClientConnection;
import org.ksasl.ClientEvent;
import org.ksasl.ClientSession;
import org.ksasl.KerberosLogin;
import org.ksasl.KsaslException;
import org.ksasl.MechanismRegistry;
import org.ksasl.OAuthBearerToken;
import org.ksasl.OidcLogin;
import org.ksasl.Refresher;

/**
 * A Kafka client over a real socket whose SASL and KIP-368 re-authentication run through the
 * Java binding (JNI): it sends a Metadata v0 request every 250 ms for DURATION_MS and
 * re-authenticates whenever the broker's session lifetime demands. Run as a single-file
 * program with the ksasl jar on the class path:
 *
 * <pre>java -cp ksasl-VERSION.jar tests/broker/KsaslJavaClient.java HOST PORT MECHANISM USER PASSWORD DURATION_MS [MIN_REAUTHS]</pre>
 *
 * With OAUTHBEARER, USER is the principal of an unsecured token and PASSWORD is ignored; or,
 * when USER is "oidc:FILE", tokens come from an identity provider through the binding's
 * OidcLogin, configured by the Java properties file FILE (Kafka's names; the refresher's
 * sasl.login.refresh.min.period.seconds and .buffer.seconds too), the first one before
 * connecting and the next ones on the binding's thread; the number of tokens is printed. With
 * GSSAPI, USER is the Kerberos principal and PASSWORD its keytab: a login from the keytab (no
 * kinit), renewed by the binding's background thread on Kafka's schedule, and the broker's
 * principal is kafka/HOST; the number of logins is printed before the metrics. The last line
 * starts with "metrics" and lists the client's own SASL metrics. Exit status 0 when
 * every request was answered, nothing failed, and at least MIN_REAUTHS re-authentications
 * happened.
 */
public final class KsaslJavaClient {
    private KsaslJavaClient() {}

    private static byte[] metadataRequest(int correlationId, String clientId) {
        byte[] id = clientId.getBytes(StandardCharsets.UTF_8);
        int n = 2 + 2 + 4 + 2 + id.length + 4;
        ByteBuffer b = ByteBuffer.allocate(4 + n);
        b.putInt(n).putShort((short) 3).putShort((short) 0).putInt(correlationId).putShort((short) id.length).put(id)
                .putInt(0);
        return b.array();
    }

    /** Reads one frame body, or returns null if no complete frame arrived before the socket timeout. */
    private static final class FrameReader {
        private final InputStream in;
        private byte[] buf = new byte[0];

        FrameReader(InputStream in) {
            this.in = in;
        }

        byte[] next() throws IOException {
            while (true) {
                if (buf.length >= 4) {
                    int n = ByteBuffer.wrap(buf).getInt();
                    if (buf.length >= 4 + n) {
                        byte[] f = new byte[n];
                        System.arraycopy(buf, 4, f, 0, n);
                        byte[] rest = new byte[buf.length - 4 - n];
                        System.arraycopy(buf, 4 + n, rest, 0, rest.length);
                        buf = rest;
                        return f;
                    }
                }
                byte[] tmp = new byte[65536];
                int r;
                try {
                    r = in.read(tmp);
                } catch (SocketTimeoutException e) {
                    return null;
                }
                if (r < 0) {
                    throw new IOException("closed by the broker");
                }
                byte[] grown = new byte[buf.length + r];
                System.arraycopy(buf, 0, grown, 0, buf.length);
                System.arraycopy(tmp, 0, grown, buf.length, r);
                buf = grown;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: KsaslJavaClient HOST PORT MECHANISM USER PASSWORD DURATION_MS [MIN_REAUTHS]");
            System.exit(2);
        }
        String mech = args[2];
        long duration = Long.parseLong(args[5]);
        int minReauths = args.length > 6 ? Integer.parseInt(args[6]) : 0;
        long t0 = System.currentTimeMillis();
        int sent = 0;
        int answered = 0;
        int reauths = 0;
        boolean failed = false;
        KerberosLogin login = null;
        KerberosLogin.Renewal renewal = null;
        Map<String, String> oidcSettings = null;
        long minPeriod = 60;
        long buffer = 300;
        if (args[3].startsWith("oidc:")) {
            Properties p = new Properties();
            try (FileReader r = new FileReader(args[3].substring(5), StandardCharsets.UTF_8)) {
                p.load(r);
            }
            oidcSettings = new HashMap<>();
            for (String k : p.stringPropertyNames()) {
                oidcSettings.put(k, p.getProperty(k));
            }
            String v = oidcSettings.remove("sasl.login.refresh.min.period.seconds");
            minPeriod = v == null ? minPeriod : Long.parseLong(v);
            v = oidcSettings.remove("sasl.login.refresh.buffer.seconds");
            buffer = v == null ? buffer : Long.parseLong(v);
        }
        OidcLogin oidc = null;
        OidcLogin.Refresh refreshing = null;
        try (Refresher refresher = new Refresher(0.8, 0.05, minPeriod, buffer);
                MechanismRegistry registry = new MechanismRegistry()) {
            if (oidcSettings != null) {
                oidc = new OidcLogin(oidcSettings);
                refreshing = oidc.start(refresher, null);
                registry.addOAuthBearerClient(refresher);
            } else if (mech.equals("GSSAPI")) {
                login = KerberosLogin.fromKeytab(args[3], args[4]);
                login.login(t0);
                renewal = login.startRenewal();
                registry.addGssapiClient(login, "kafka", args[0], false);
            } else if (mech.equals("OAUTHBEARER")) {
                refresher.poll(t0);
                refresher.setToken(OAuthBearerToken.unsecured(args[3], 3600, null, t0), t0);
                registry.addOAuthBearerClient(refresher);
            } else {
                registry.addPasswordClients(args[3], args[4]);
            }
            try (ClientConfig config = ClientConfig.builder(registry, mech).setClientId("ksasl-java-client").build();
                    ClientConnection conn = new ClientConnection(config);
                    Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(args[0], Integer.parseInt(args[1])), 10_000);
                socket.setSoTimeout(20);
                socket.setTcpNoDelay(true);
                OutputStream out = socket.getOutputStream();
                FrameReader reader = new FrameReader(socket.getInputStream());
                conn.start(t0);
                boolean authenticated = false;
                long nextRequest = 0;
                int corr = 0;
                while (!failed && System.currentTimeMillis() - t0 < duration) {
                    long now = System.currentTimeMillis();
                    // The re-authentication deadline is a timer: start it on time.
                    if (authenticated && conn.handleTimeout(now)) {
                        System.out.printf("[+%6.3fs] re-authenticating at the deadline%n", (now - t0) / 1000.0);
                    }
                    if (authenticated && now >= nextRequest && conn.beforeRequest(now)) {
                        out.write(metadataRequest(corr++, "ksasl-java-client"));
                        sent++;
                        nextRequest = now + 250;
                    }
                    byte[] tx = conn.transmit();
                    if (tx.length > 0) {
                        out.write(tx);
                    }
                    byte[] frame;
                    try {
                        frame = reader.next();
                    } catch (IOException e) {
                        KsaslException why = conn.closed(System.currentTimeMillis());
                        System.err.println("the broker closed the connection: " + why.getMessage());
                        failed = true;
                        break;
                    }
                    while (frame != null) {
                        ClientEvent ev;
                        try {
                            ev = conn.handleFrame(frame, System.currentTimeMillis());
                        } catch (KsaslException e) {
                            System.err.println("authentication failed: " + e);
                            failed = true;
                            break;
                        }
                        switch (ev.kind()) {
                            case APPLICATION:
                                answered++;
                                break;
                            case AUTHENTICATED:
                            case REAUTHENTICATED: {
                                if (ev.kind() == ClientEvent.Kind.REAUTHENTICATED) {
                                    reauths++;
                                }
                                authenticated = true;
                                ClientSession s = ev.session();
                                System.out.printf("[+%6.3fs] %s with %s: session lifetime %d ms%n",
                                        (System.currentTimeMillis() - t0) / 1000.0, ev.kind(), mech, s.lifetimeMs());
                                break;
                            }
                            default:
                                break;
                        }
                        byte[] more = conn.transmit();
                        if (more.length > 0) {
                            out.write(more);
                        }
                        frame = reader.next();
                    }
                }
                // Collect the answers still in flight.
                long drainUntil = System.currentTimeMillis() + 2000;
                while (!failed && answered < sent && System.currentTimeMillis() < drainUntil) {
                    byte[] frame = reader.next();
                    if (frame != null && conn.handleFrame(frame, System.currentTimeMillis()).kind()
                            == ClientEvent.Kind.APPLICATION) {
                        answered++;
                    }
                }
                System.out.printf("%d Metadata requests sent, %d answered, %d re-authentications%n", sent, answered,
                        reauths);
                if (oidc != null) {
                    refreshing.close();
                    System.out.printf("%d tokens from the identity provider%n", refresher.generation());
                    oidc.close();
                }
                if (login != null) {
                    renewal.close();
                    System.out.printf("Kerberos logins: %d (%d failed)%n", login.logins(), login.failures());
                    login.close();
                }
                StringBuilder line = new StringBuilder("metrics");
                Map<String, Double> m = config.metrics(System.currentTimeMillis());
                for (String k : new String[] {"successful-authentication-total", "successful-reauthentication-total",
                    "failed-reauthentication-total", "reauthentication-latency-avg"}) {
                    line.append(' ').append(k).append('=').append(m.get(k));
                }
                System.out.println(line);
                if (!authenticated) {
                    failed = true;
                }
            }
        }
        System.exit(!failed && sent > 0 && answered == sent && reauths >= minReauths ? 0 : 1);
    }
}
