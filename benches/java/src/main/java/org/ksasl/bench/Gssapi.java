package org.ksasl.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.security.auth.Subject;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.auth.login.LoginContext;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslServer;
import org.apache.kafka.common.security.authenticator.SaslServerCallbackHandler;
import org.apache.kafka.common.security.kerberos.KerberosClientCallbackHandler;
import org.apache.kafka.common.security.kerberos.KerberosName;
import org.apache.kafka.common.security.kerberos.KerberosShortNamer;
import org.ksasl.ClientExchange;
import org.ksasl.ClientStep;
import org.ksasl.KerberosLogin;
import org.ksasl.Ksasl;
import org.ksasl.MechanismRegistry;
import org.ksasl.ServerExchange;
import org.ksasl.ServerStep;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * One GSSAPI (Kerberos) login per operation, against the throw-away MIT KDC of
 * {@code tests/kerberos/kdc.py} (run with {@code benches/java/run.sh gssapi}, which starts it
 * and runs JMH under {@code kdc.py --exec}; the JVM's Kerberos reads the KDC's krb5.conf, and
 * ksasl's MIT library the environment kdc.py sets).
 *
 * <ul>
 *   <li>server: ksasl's {@link ServerExchange} (JNI, MIT GSS-API, the broker's keytab), or the
 *       JDK's GSSAPI {@link SaslServer} made as Kafka 4.4's broker makes it: created inside
 *       {@code Subject.doAs} of a {@code Krb5LoginModule} login of kafka/localhost from its
 *       keytab, with Kafka's {@link SaslServerCallbackHandler}, and the authorization id mapped
 *       by Kafka's {@link KerberosShortNamer} ({@code DEFAULT} rules) as its principal builder
 *       does. A new server object per login.
 *   <li>client: ksasl's {@link ClientExchange} on a {@link KerberosLogin} of alice, or the JDK's
 *       GSSAPI {@link SaslClient} made and driven inside {@code Subject.doAs} of alice's
 *       {@code Krb5LoginModule} login, as Kafka's client does.
 * </ul>
 *
 * <p>{@code gss5} repeats {@code gss3} with the JDK's replay cache off, for comparison with the
 * Rust bench's row without MIT's.
 *
 * <p>Both clients get their service ticket during the setup's first logins and keep it (MIT in
 * the login's MEMORY cache, the JDK in alice's Subject), so no measured login talks to the KDC.
 * Every login needs a fresh client token (both acceptors keep a replay cache), so each
 * operation is a whole login and {@link Split} sums the time spent in each side's calls.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
// The JDK's Kerberos code takes long to compile on 2 cores: after 20 s of warmup its logins
// still fell from iteration to iteration (1.7 to 0.9 ms); after 60 s they were steady (0.4 ms).
@Warmup(iterations = 30, time = 2)
@Measurement(iterations = 5, time = 2)
public class Gssapi {
    static final String MECHANISM = "GSSAPI";

    /** The KDC's facts from KSASL_KDC_INFO, and both implementations' servers and clients. */
    @State(Scope.Benchmark)
    public static class Kdc {
        String realm;
        String brokerPrincipal;
        String alicePrincipal;
        MechanismRegistry ksaslServers;
        MechanismRegistry ksaslClients;
        KerberosLogin ksaslLogin;
        Subject brokerSubject;
        Subject aliceSubject;
        SaslServerCallbackHandler serverCallbacks;
        KerberosClientCallbackHandler clientCallbacks;
        KerberosShortNamer shortNamer;

        @Setup(Level.Trial)
        public void setup(BenchmarkParams params) throws Exception {
            if (params.getBenchmark().endsWith("_rcacheNone")) {
                // The JDK's acceptor without its replay cache (each benchmark has its own JVM,
                // and this is set before the first ticket is accepted).
                System.setProperty("sun.security.krb5.rcache", "none");
            }
            String infoPath = System.getenv("KSASL_KDC_INFO");
            if (infoPath == null || infoPath.isEmpty()) {
                throw new IllegalStateException("KSASL_KDC_INFO is not set: run benches/java/run.sh gssapi,"
                        + " which runs these benchmarks under tests/kerberos/kdc.py --exec");
            }
            if (!Ksasl.gssapiAvailable()) {
                throw new IllegalStateException("MIT's libgssapi_krb5 does not load");
            }
            String info = Files.readString(Path.of(infoPath), StandardCharsets.UTF_8);
            realm = string(info, "realm");
            if (System.getProperty("java.security.krb5.conf") == null) {
                System.setProperty("java.security.krb5.conf", string(info, "krb5_conf"));
            }
            Map<String, String> keytabs = keytabs(info);
            brokerPrincipal = "kafka/localhost@" + realm;
            alicePrincipal = "alice@" + realm;

            // ksasl: the broker's keytab read once, alice logged in once (a TGT in a MEMORY cache).
            ksaslServers = new MechanismRegistry().addGssapiServer(keytabs.get("kafka/localhost"), brokerPrincipal,
                    null, null, true);
            ksaslLogin = KerberosLogin.fromKeytab(alicePrincipal, keytabs.get("alice"));
            ksaslLogin.login(System.currentTimeMillis());
            ksaslClients = new MechanismRegistry().addGssapiClient(ksaslLogin, "kafka", "localhost", false);

            // The JDK: JAAS logins as Kafka's sasl.jaas.config describes them.
            brokerSubject = jaasLogin(brokerPrincipal, keytabs.get("kafka/localhost"));
            aliceSubject = jaasLogin(alicePrincipal, keytabs.get("alice"));
            serverCallbacks = new SaslServerCallbackHandler();
            serverCallbacks.configure(Map.of(), MECHANISM, List.of());
            clientCallbacks = new KerberosClientCallbackHandler();
            clientCallbacks.configure(Map.of(), MECHANISM, List.of());
            shortNamer = KerberosShortNamer.fromUnparsedRules(realm, List.of("DEFAULT"));

            // Every combination, checked; the first logins fetch each client's service ticket.
            Split probe = new Split();
            StringBuilder messages = new StringBuilder("gssapi: messages per login (server, client):");
            for (int i = 0; i < 3; i++) {
                check(ksaslServerKsaslClient(this, probe));
                messages.append(i == 0 ? " ksasl, ksasl " + probe.lastMessages : "");
                check(ksaslServerJdkClient(this, probe));
                messages.append(i == 0 ? "; ksasl, JDK " + probe.lastMessages : "");
                check(jdkServerJdkClient(this, probe));
                messages.append(i == 0 ? "; JDK, JDK " + probe.lastMessages : "");
                check(jdkServerKsaslClient(this, probe));
                messages.append(i == 0 ? "; JDK, ksasl " + probe.lastMessages : "");
            }
            System.out.println(messages);
            System.out.println("gssapi: replayed AP-REQ refused by a new ksasl server: " + ksaslRefusesReplay(this)
                    + "; by a new JDK server: " + jdkRefusesReplay(this) + " (sun.security.krb5.rcache="
                    + System.getProperty("sun.security.krb5.rcache") + ", KRB5RCACHETYPE="
                    + System.getenv("KRB5RCACHETYPE") + ")");
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            ksaslServers.close();
            ksaslClients.close();
            ksaslLogin.close();
        }

        private void check(String principal) {
            if (!"alice".equals(principal)) {
                throw new IllegalStateException("not authenticated as alice: " + principal);
            }
        }
    }

    /** The server's and the client's share of the logins of one iteration (per login: / logins). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Split {
        public long serverNs;
        public long clientNs;
        public long logins;
        /** Messages in the last login (both directions), for the setup's report; not a counter. */
        int lastMessages;

        @Setup(Level.Iteration)
        public void reset() {
            serverNs = 0;
            clientNs = 0;
            logins = 0;
        }
    }

    // --- the two sides of each implementation ---------------------------------------------------

    /** A server's side of one login: the token to send back, or null when it is done. */
    interface ServerSide {
        byte[] step(byte[] response) throws Exception;

        boolean done();

        /** The Kafka user name of the authenticated client. */
        String user() throws Exception;
    }

    /** A client's side of one login. */
    interface ClientSide {
        byte[] first() throws Exception;

        byte[] step(byte[] challenge) throws Exception;

        void close() throws Exception;
    }

    static ServerSide ksaslServer(Kdc k) throws Exception {
        ServerExchange server = new ServerExchange(k.ksaslServers, MECHANISM);
        return new ServerSide() {
            boolean done;

            @Override
            public byte[] step(byte[] response) throws Exception {
                ServerStep s = server.step(response, System.currentTimeMillis());
                done = s.kind() == ServerStep.Kind.DONE;
                if (!done && s.kind() != ServerStep.Kind.CHALLENGE) {
                    throw new IllegalStateException("unexpected server step " + s);
                }
                return s.message();
            }

            @Override
            public boolean done() {
                return done;
            }

            @Override
            public String user() {
                String name = server.outcome().principalName();
                server.close();
                return name;
            }
        };
    }

    /** As Kafka 4.4's SaslServerAuthenticator.createSaslKerberosServer and its principal builder. */
    static ServerSide jdkServer(Kdc k) throws Exception {
        KerberosName broker = KerberosName.parse(k.brokerPrincipal);
        SaslServer server = Subject.doAs(k.brokerSubject, (PrivilegedExceptionAction<SaslServer>) () ->
                Sasl.createSaslServer(MECHANISM, broker.serviceName(), broker.hostName(), Map.of(),
                        k.serverCallbacks));
        return new ServerSide() {
            @Override
            public byte[] step(byte[] response) throws Exception {
                return server.evaluateResponse(response);
            }

            @Override
            public boolean done() {
                return server.isComplete();
            }

            @Override
            public String user() throws Exception {
                String name = k.shortNamer.shortName(KerberosName.parse(server.getAuthorizationID()));
                server.dispose();
                return name;
            }
        };
    }

    static ClientSide ksaslClient(Kdc k) throws Exception {
        ClientExchange client = new ClientExchange(k.ksaslClients, MECHANISM);
        return new ClientSide() {
            @Override
            public byte[] first() throws Exception {
                return client.start(System.currentTimeMillis()).message();
            }

            @Override
            public byte[] step(byte[] challenge) throws Exception {
                ClientStep s = client.step(challenge == null ? new byte[0] : challenge, System.currentTimeMillis());
                return s.message() == null ? new byte[0] : s.message();
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /** As Kafka's SaslClientAuthenticator: made and evaluated inside Subject.doAs of the login. */
    static ClientSide jdkClient(Kdc k) throws Exception {
        SaslClient client = Subject.doAs(k.aliceSubject, (PrivilegedExceptionAction<SaslClient>) () ->
                Sasl.createSaslClient(new String[] {MECHANISM}, k.alicePrincipal, "kafka", "localhost", Map.of(),
                        k.clientCallbacks));
        return new ClientSide() {
            @Override
            public byte[] first() throws Exception {
                return step(new byte[0]);
            }

            @Override
            public byte[] step(byte[] challenge) throws Exception {
                byte[] in = challenge == null ? new byte[0] : challenge;
                byte[] out = Subject.doAs(k.aliceSubject,
                        (PrivilegedExceptionAction<byte[]>) () -> client.evaluateChallenge(in));
                return out == null ? new byte[0] : out;
            }

            @Override
            public void close() throws Exception {
                client.dispose();
            }
        };
    }

    interface Maker<T> {
        T make(Kdc k) throws Exception;
    }

    /**
     * One login; the time spent making and driving each side (and reading the server's
     * outcome) goes to its counter in {@code t}. Returns the Kafka user name.
     */
    static String login(Kdc k, Maker<ServerSide> serverMaker, Maker<ClientSide> clientMaker, Split t)
            throws Exception {
        long a = System.nanoTime();
        ClientSide client = clientMaker.make(k);
        byte[] toServer = client.first();
        long b = System.nanoTime();
        t.clientNs += b - a;
        a = b;
        ServerSide server = serverMaker.make(k);
        int rounds = 0;
        int messages = 1;
        while (true) {
            byte[] challenge = server.step(toServer);
            boolean done = server.done();
            b = System.nanoTime();
            t.serverNs += b - a;
            messages++;
            if (done) {
                break;
            }
            if (++rounds > 8) {
                throw new IllegalStateException("the login does not finish");
            }
            a = b;
            toServer = client.step(challenge);
            b = System.nanoTime();
            t.clientNs += b - a;
            a = b;
            messages++;
        }
        t.lastMessages = messages;
        a = System.nanoTime();
        client.close();
        b = System.nanoTime();
        t.clientNs += b - a;
        String user = server.user();
        t.serverNs += System.nanoTime() - b;
        t.logins++;
        return user;
    }

    static String ksaslServerKsaslClient(Kdc k, Split t) throws Exception {
        return login(k, Gssapi::ksaslServer, Gssapi::ksaslClient, t);
    }

    static String ksaslServerJdkClient(Kdc k, Split t) throws Exception {
        return login(k, Gssapi::ksaslServer, Gssapi::jdkClient, t);
    }

    static String jdkServerJdkClient(Kdc k, Split t) throws Exception {
        return login(k, Gssapi::jdkServer, Gssapi::jdkClient, t);
    }

    static String jdkServerKsaslClient(Kdc k, Split t) throws Exception {
        return login(k, Gssapi::jdkServer, Gssapi::ksaslClient, t);
    }

    /** Whether a second, new ksasl server refuses an AP-REQ the first accepted. */
    static boolean ksaslRefusesReplay(Kdc k) throws Exception {
        ClientSide c = ksaslClient(k);
        byte[] apReq = c.first();
        ksaslServer(k).step(apReq);
        try {
            ksaslServer(k).step(apReq);
            return false;
        } catch (Exception e) {
            return true;
        } finally {
            c.close();
        }
    }

    /** The same for the JDK's server (and a JDK client's AP-REQ). */
    static boolean jdkRefusesReplay(Kdc k) throws Exception {
        ClientSide c = jdkClient(k);
        byte[] apReq = c.first();
        jdkServer(k).step(apReq);
        try {
            jdkServer(k).step(apReq);
            return false;
        } catch (Exception e) {
            return true;
        } finally {
            c.close();
        }
    }

    // --- reading kdc.py's JSON without a JSON library (flat string fields and the keytabs map) ---

    static String string(String json, String field) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(field) + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("KSASL_KDC_INFO has no " + field);
        }
        return m.group(1);
    }

    static Map<String, String> keytabs(String json) {
        Matcher block = Pattern.compile("\"keytabs\"\\s*:\\s*\\{([^}]*)\\}").matcher(json);
        if (!block.find()) {
            throw new IllegalStateException("KSASL_KDC_INFO has no keytabs");
        }
        Map<String, String> out = new HashMap<>();
        Matcher m = Pattern.compile("\"([^\"]+)\"\\s*:\\s*\"([^\"]*)\"").matcher(block.group(1));
        while (m.find()) {
            out.put(m.group(1), m.group(2));
        }
        return out;
    }

    /** A Krb5LoginModule login from a keytab, as a Kafka JAAS entry with useKeyTab and storeKey. */
    static Subject jaasLogin(String principal, String keytab) throws Exception {
        Map<String, String> options = Map.of("useKeyTab", "true", "storeKey", "true", "keyTab", keytab,
                "principal", principal, "doNotPrompt", "true");
        Configuration conf = new Configuration() {
            @Override
            public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
                return new AppConfigurationEntry[] {new AppConfigurationEntry(
                        "com.sun.security.auth.module.Krb5LoginModule",
                        AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, options)};
            }
        };
        LoginContext lc = new LoginContext("KafkaServer", new Subject(), null, conf);
        lc.login();
        return lc.getSubject();
    }

    // --- benchmarks ------------------------------------------------------------------------------

    @Benchmark
    public String gss1_ksaslServer_ksaslClient(Kdc k, Split t) throws Exception {
        return ksaslServerKsaslClient(k, t);
    }

    @Benchmark
    public String gss2_ksaslServer_jdkClient(Kdc k, Split t) throws Exception {
        return ksaslServerJdkClient(k, t);
    }

    @Benchmark
    public String gss3_jdkServer_jdkClient(Kdc k, Split t) throws Exception {
        return jdkServerJdkClient(k, t);
    }

    @Benchmark
    public String gss4_jdkServer_ksaslClient(Kdc k, Split t) throws Exception {
        return jdkServerKsaslClient(k, t);
    }

    /** As gss3 with the JDK's replay cache off (sun.security.krb5.rcache=none): comparison only. */
    @Benchmark
    public String gss5_jdkServer_jdkClient_rcacheNone(Kdc k, Split t) throws Exception {
        return jdkServerJdkClient(k, t);
    }
}
