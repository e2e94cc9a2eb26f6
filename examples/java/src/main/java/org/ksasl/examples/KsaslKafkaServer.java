package org.ksasl.examples;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.logging.ConsoleHandler;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.ksasl.AwsKeyStore;
import org.ksasl.Config;
import org.ksasl.CredentialStore;
import org.ksasl.DelegationTokenCodec;
import org.ksasl.Gate;
import org.ksasl.HostServerMechanism;
import org.ksasl.JwksEndpoint;
import org.ksasl.JwksValidator;
import org.ksasl.KsaslArgumentException;
import org.ksasl.KsaslException;
import org.ksasl.MechanismRegistry;
import org.ksasl.RefusedRequest;
import org.ksasl.ServerAction;
import org.ksasl.ServerConfig;
import org.ksasl.ServerConnection;
import org.ksasl.ServerOutput;
import org.ksasl.ServerSession;
import org.ksasl.ServerSetup;
import org.ksasl.TokenAuthority;

/**
 * A minimal Kafka-protocol server on 127.0.0.1 whose every connection is authenticated and
 * gated by ksasl; the Java counterpart of {@code examples/python/kafka_server.py}. One thread
 * per connection, blocking sockets.
 *
 * <p>Everything SASL is ksasl's ({@link ServerConnection}):
 *
 * <ul>
 *   <li>until the connection is authenticated, each request frame goes to
 *       {@link ServerConnection#handleFrame}, which answers ApiVersions (listing this server's
 *       APIs, given to {@link ServerConfig.Builder#setApiVersion}), SaslHandshake and
 *       SaslAuthenticate for PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (Kafka's
 *       unsecured tokens, or signed JWTs checked against an identity provider's JWKS endpoint
 *       with {@link Builder#oauthBearerJwks}), and with {@link Builder#awsMskIam} AWS_MSK_IAM
 *       (AWS signatures checked against a key store); a failure is written at the KIP-306
 *       deadline, then the socket closes.
 *       Another request in the middle of an exchange gets that API's error response
 *       (ILLEGAL_SASL_STATE) as Kafka 4.4 sends it, from ksasl or, for Produce and InitProducerId
 *       ({@link ServerConnection#refusedRequest}), from the {@link Broker};
 *   <li>afterwards each request first passes {@link ServerConnection#gate}: PROCESS (the
 *       {@link Broker} answers it), BEGIN_REAUTHENTICATION (a KIP-368 re-authentication starts:
 *       back to {@code handleFrame}) or CLOSE_EXPIRED (the session outlived
 *       {@code connections.max.reauth.ms} or its credential: close without answering, as Kafka
 *       does).
 * </ul>
 *
 * <p>With a {@link TokenAuthority} ({@link Builder#tokens}), SCRAM logins with
 * {@code tokenauth=true} are answered from the authority's delegation tokens (the session is
 * capped by the token's expiry), and the token APIs (CreateDelegationToken,
 * RenewDelegationToken, ExpireDelegationToken, DescribeDelegationToken) are served by
 * {@link TokenAuthority#handleRequest} on authenticated connections and advertised in
 * ApiVersions (only then).
 *
 * <p>The SCRAM credential APIs of KIP-554 (DescribeUserScramCredentials,
 * AlterUserScramCredentials) are always advertised and served on authenticated connections by
 * {@link CredentialStore#handleScramRequest}, so Kafka's {@code Admin} can add, rotate and
 * delete SCRAM users of the running server (any authenticated principal may: no authorizer).
 *
 * <p>With {@link Builder#config}, SASL is configured from a broker's {@code server.properties}
 * instead: one listener of the file, built by ksasl ({@link ServerConfig#fromProperties}).
 *
 * <p>Not a broker: records are counted, not stored; there is no Fetch, no consumer group, no
 * transaction. An idle connection whose session expired stays open until its next request
 * (Kafka's behaviour), which then closes it.
 */
public final class KsaslKafkaServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KsaslKafkaServer.class.getName());

    /** The only address this server listens on. */
    public static final String HOST = "127.0.0.1";

    private final CredentialStore store;
    private final TokenAuthority tokens;
    private final ServerConfig config;
    /** The configuration answering ApiVersions requests of authenticated connections (the listener's). */
    private final ServerConfig apiVersionsConfig;
    /** With {@link Builder#config}: the file's listener (with its JWKS endpoints and token authority). */
    private final ServerSetup setup;
    /** The fetch threads of the file's JWKS endpoints, stopped before the setup is closed. */
    private final List<AutoCloseable> jwksEndpoints = new ArrayList<>();
    private final Broker broker;
    private final int requestedPort;
    private final Long maxReauthMs;
    private final String advertisedHost;
    private final boolean signedOAuthBearer;
    private final AtomicLong ids = new AtomicLong();
    private final List<ConnectionStats> connections = new CopyOnWriteArrayList<>();
    private final Set<Connection> live = ConcurrentHashMap.newKeySet();
    /** The api keys of the SCRAM credential APIs (KIP-554), as the core lists them. */
    private static final Set<Short> SCRAM_CREDENTIAL_APIS = scramCredentialApis();
    private ServerSocket listener;
    private Thread acceptor;
    private volatile boolean stopping;
    private boolean closed;

    /** Starts a configuration; {@link Builder#build()} creates the (not yet listening) server. */
    public static Builder builder() {
        return new Builder();
    }

    /** The server's settings. */
    public static final class Builder {
        private int port;
        private long maxReauthMs = 3000;
        private final Map<String, Long> maxReauthByMechanism = new LinkedHashMap<>();
        private long failedAuthDelayMs = 100;
        private final Map<String, String> users = new LinkedHashMap<>();
        private final Map<String, Integer> topics = new LinkedHashMap<>();
        private TokenAuthority tokens;
        private final Map<String, Supplier<? extends HostServerMechanism>> mechanisms = new LinkedHashMap<>();
        private String gssapiKeytab;
        private String gssapiPrincipal;
        private String gssapiRules;
        private String advertisedHost = HOST;
        private JwksEndpoint jwks;
        private AwsKeyStore awsKeys;
        private String awsRegion;
        private List<String> awsHosts;
        private String configText;
        private String configListener;
        /** The SASL settings given here, which a {@link #config} file replaces (they may not be combined). */
        private final Set<String> saslSettings = new LinkedHashSet<>();

        private Builder() {}

        /** The port on 127.0.0.1; 0 (default) picks a free one. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** {@code connections.max.reauth.ms} (default 3000; 0: sessions never expire unless their credential does). */
        public Builder maxReauthMs(long ms) {
            this.maxReauthMs = ms;
            saslSettings.add("maxReauthMs");
            return this;
        }

        /** {@code listener.name.X.<mechanism>.connections.max.reauth.ms}. */
        public Builder maxReauthMs(String mechanism, long ms) {
            maxReauthByMechanism.put(Objects.requireNonNull(mechanism, "mechanism"), ms);
            saslSettings.add("maxReauthMs(mechanism)");
            return this;
        }

        /** {@code connection.failed.authentication.delay.ms} (KIP-306, default 100). */
        public Builder failedAuthDelayMs(long ms) {
            this.failedAuthDelayMs = ms;
            saslSettings.add("failedAuthDelayMs");
            return this;
        }

        /**
         * Adds a user for PLAIN and SCRAM (default, if none is given: alice / alice-secret); with
         * {@link #config}, for SCRAM only (PLAIN users are the file's).
         */
        public Builder user(String name, String password) {
            users.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(password, "password"));
            return this;
        }

        /** Creates a topic at start (topics asked for in Metadata are also created, with one partition). */
        public Builder topic(String name, int partitions) {
            topics.put(Objects.requireNonNull(name, "name"), partitions);
            return this;
        }

        /**
         * Answers {@code tokenauth} logins from {@code authority}'s delegation tokens and serves the
         * token APIs (38-41) with it. The authority stays the caller's: keep it open while the
         * server runs, and close it afterwards.
         */
        public Builder tokens(TokenAuthority authority) {
            this.tokens = Objects.requireNonNull(authority, "authority");
            saslSettings.add("tokens");
            return this;
        }

        /**
         * Offers a mechanism written in Java (KIP-43) next to the built-ins, for example a
         * JDK {@link javax.security.sasl.SaslServer} wrapped by
         * {@link org.ksasl.SaslMechanisms#server}: {@code factory} makes one per exchange.
         */
        public Builder mechanism(String name, Supplier<? extends HostServerMechanism> factory) {
            mechanisms.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(factory, "factory"));
            saslSettings.add("mechanism");
            return this;
        }

        /**
         * Offers GSSAPI (Kerberos) with the broker's {@code keytab} and {@code principal}
         * ({@code kafka/localhost@REALM}: clients ask for a ticket to
         * {@code sasl.kerberos.service.name}/<i>the host they connect to</i>, see
         * {@link #advertisedHost}), and {@code sasl.kerberos.principal.to.local.rules} as Kafka's
         * list value (null: {@code DEFAULT}). Each session ends no later than the client's service
         * ticket. MIT Kerberos reads {@code KRB5_CONFIG} and {@code KRB5RCACHEDIR} from the
         * process environment ({@code tests/kerberos/kdc.py --exec} sets them for the tests).
         */
        public Builder gssapi(String keytab, String principal, String rules) {
            this.gssapiKeytab = Objects.requireNonNull(keytab, "keytab");
            this.gssapiPrincipal = Objects.requireNonNull(principal, "principal");
            this.gssapiRules = rules;
            saslSettings.add("gssapi");
            return this;
        }

        /**
         * Validates OAUTHBEARER tokens as signed JWTs with the keys of an identity provider's
         * JWKS endpoint, as a broker with {@code sasl.oauthbearer.jwks.endpoint.url} does, instead
         * of accepting Kafka's unsecured tokens. The expected issuer and audiences are those of
         * the endpoint's {@link JwksValidator}; every check is ksasl's. A token signed by a key
         * the endpoint does not know yet waits for one fetch of the key set. The endpoint stays
         * the caller's: fetch it (and {@link JwksEndpoint#start() start} its refreshing) before
         * clients connect, and close it once the server is closed.
         */
        public Builder oauthBearerJwks(JwksEndpoint endpoint) {
            this.jwks = Objects.requireNonNull(endpoint, "endpoint");
            saslSettings.add("oauthBearerJwks");
            return this;
        }

        /**
         * Offers {@code AWS_MSK_IAM} (Amazon MSK's IAM mechanism, the one of
         * {@code aws-msk-iam-auth}'s {@code IAMLoginModule}) verified by ksasl, for development
         * and tests: a login is accepted when its AWS signature (SigV4) is valid under a key of
         * {@code keys}, for {@code region} and one of {@code hosts}, within AWS's clock skew; it
         * authenticates as that key's principal, and a session ends no later than the key
         * expires. A refused client is told only {@code [<request id>]: Access denied}, as MSK
         * does. The store stays the caller's: keys added or removed while the server runs apply
         * to the next (re-)authentication (rotate by adding the new key, then removing the old
         * one); close it once the server is closed.
         *
         * @param keys the accepted access keys, each with its principal
         * @param region the region clients sign for, e.g. {@code us-east-1}
         * @param hosts the broker host names clients may sign for; empty: any. Kafka's Java
         *     client signs for the host name of the address it connects to, see
         *     {@link #advertisedHost} (for a literal IP, its reverse lookup: {@code localhost}
         *     for 127.0.0.1 with the usual /etc/hosts)
         */
        public Builder awsMskIam(AwsKeyStore keys, String region, List<String> hosts) {
            this.awsKeys = Objects.requireNonNull(keys, "keys");
            this.awsRegion = Objects.requireNonNull(region, "region");
            this.awsHosts = List.copyOf(hosts);
            saslSettings.add("awsMskIam");
            return this;
        }

        /**
         * Configures SASL from a broker's {@code server.properties} text, for one of its SASL
         * listeners, exactly as ksasl reads it ({@link ServerConfig#fromProperties}):
         * {@code sasl.enabled.mechanisms}, PLAIN users from the listener's JAAS
         * {@code user_<name>="<password>"} options, SCRAM users from this server's store
         * ({@link #user}: Kafka keeps them outside the file), OAUTHBEARER with Kafka's unsecured
         * validator or, with {@code OAuthBearerValidatorCallbackHandler}, a JWKS endpoint (fetched
         * once by {@link #build()}, which fails if it cannot be reached, then kept fresh until
         * {@link KsaslKafkaServer#close()}), {@code connections.max.reauth.ms} (also per
         * mechanism), {@code sasl.server.max.receive.size},
         * {@code connection.failed.authentication.delay.ms}, and with
         * {@code delegation.token.secret.key} delegation tokens ({@code tokenauth} logins and the
         * token APIs 38-41, served by the file's {@link TokenAuthority}, see
         * {@link KsaslKafkaServer#tokens()}). Replaces {@link #maxReauthMs},
         * {@link #failedAuthDelayMs}, {@link #tokens}, {@link #mechanism}, {@link #gssapi},
         * {@link #oauthBearerJwks} and {@link #awsMskIam}: {@link #build()} refuses the
         * combination. A listener with GSSAPI cannot be built from the file (ksasl's Java binding
         * says why).
         *
         * @param listener a listener of {@code listeners}; {@code null}: the file's only SASL
         *     listener
         */
        public Builder config(String serverProperties, String listener) {
            this.configText = Objects.requireNonNull(serverProperties, "serverProperties");
            this.configListener = listener;
            return this;
        }

        /**
         * The host name clients are given ({@link KsaslKafkaServer#bootstrapServers()} and Metadata), default
         * 127.0.0.1; the socket listens on 127.0.0.1 in any case. GSSAPI clients need the name
         * of the broker's principal, e.g. {@code localhost} for {@code kafka/localhost}.
         */
        public Builder advertisedHost(String host) {
            this.advertisedHost = Objects.requireNonNull(host, "host");
            return this;
        }

        public KsaslKafkaServer build() throws KsaslException {
            return new KsaslKafkaServer(this);
        }
    }

    private KsaslKafkaServer(Builder b) throws KsaslException {
        if (b.configText != null && !b.saslSettings.isEmpty()) {
            throw new IllegalStateException("the server.properties given to config() sets SASL; not also "
                    + String.join(", ", b.saslSettings));
        }
        this.requestedPort = b.port;
        this.maxReauthMs = b.configText == null ? b.maxReauthMs : null;
        this.advertisedHost = b.advertisedHost;
        this.broker = new Broker(advertisedHost, LOG);
        b.topics.forEach(broker::createTopic);
        store = new CredentialStore();
        try {
            Map<String, String> users = b.users.isEmpty() ? Map.of("alice", "alice-secret") : b.users;
            for (Map.Entry<String, String> u : users.entrySet()) {
                store.addUser(u.getKey(), u.getValue()); // PLAIN, and SCRAM keys at 4096 iterations
            }
            if (b.configText != null) {
                ServerSetup file = fileConfig(b.configText, listener(b.configText, b.configListener));
                apiVersionsConfig = file.config();
                setup = file;
                config = file.config();
                // With delegation.token.secret.key: the file's authority answers tokenauth logins
                // (in the configuration already) and serves the token APIs it lists.
                tokens = file.tokens();
                signedOAuthBearer = !file.jwks().isEmpty();
                return;
            }
            setup = null;
            tokens = b.tokens;
            signedOAuthBearer = b.jwks != null;
            // The registry is a template: the configuration takes a snapshot of it.
            try (MechanismRegistry registry = new MechanismRegistry()) {
                if (tokens == null) {
                    registry.addPasswordServers(store); // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
                } else {
                    // The same, with tokenauth=true logins answered by the token authority.
                    registry.addPasswordServers(store, tokens);
                }
                if (b.jwks == null) {
                    registry.addOAuthBearerServer(); // OAUTHBEARER with Kafka's unsecured validator
                } else {
                    registry.addOAuthBearerServer(b.jwks); // OAUTHBEARER: signed JWTs, the endpoint's keys
                }
                if (b.gssapiKeytab != null) {
                    // GSSAPI: the keytab is read now; the service name is the principal's first part.
                    registry.addGssapiServer(b.gssapiKeytab, b.gssapiPrincipal, null, b.gssapiRules, true);
                }
                if (b.awsKeys != null) {
                    // AWS_MSK_IAM: SigV4 checked against the caller's (live) key store.
                    registry.addAwsMskIamServer(b.awsKeys, b.awsRegion, b.awsHosts);
                }
                for (Map.Entry<String, Supplier<? extends HostServerMechanism>> m : b.mechanisms.entrySet()) {
                    registry.addServerMechanism(m.getKey(), m.getValue());
                }
                ServerConfig.Builder cb = ServerConfig.builder(registry)
                        .setMaxReauthMs(b.maxReauthMs)
                        .setFailedAuthenticationDelayMs(b.failedAuthDelayMs);
                b.maxReauthByMechanism.forEach(cb::setMaxReauthMsFor);
                // ksasl answers ApiVersions before authentication: it must list our APIs too.
                for (Broker.ApiRange api : Broker.APPLICATION_APIS) {
                    cb.setApiVersion(api.apiKey(), api.minVersion(), api.maxVersion());
                }
                if (tokens != null) {
                    // The token APIs, in the ranges a Kafka 4 broker advertises.
                    for (DelegationTokenCodec.ApiRange api : DelegationTokenCodec.apiVersions(true)) {
                        cb.setApiVersion(api.apiKey(), api.minVersion(), api.maxVersion());
                    }
                }
                // The SCRAM credential APIs (KIP-554), served by the store.
                cb.addScramCredentialApiVersions();
                config = cb.build();
                apiVersionsConfig = config;
            }
        } catch (KsaslException | RuntimeException e) {
            jwksEndpoints.forEach(KsaslKafkaServer::closeQuietly);
            store.close();
            throw e;
        }
    }

    /** The listener to build from {@code serverProperties} ({@link Config#chooseListener}). */
    static String listener(String serverProperties, String listener) throws KsaslException {
        return Config.chooseListener(serverProperties, listener);
    }

    /**
     * The file's listener as ksasl builds it, SCRAM against this server's store, with its JWKS
     * endpoints (the validators of its configuration) fetched once now (an unreachable or
     * untrusted endpoint fails the build), then kept fresh by ksasl's thread until
     * {@link #close()}.
     */
    private ServerSetup fileConfig(String text, String listener) throws KsaslException {
        List<DelegationTokenCodec.ApiRange> scram = CredentialStore.scramCredentialApiVersions();
        long[] apis = new long[3 * (Broker.APPLICATION_APIS.size() + scram.size())];
        int i = 0;
        for (Broker.ApiRange api : Broker.APPLICATION_APIS) {
            apis[i++] = api.apiKey();
            apis[i++] = api.minVersion();
            apis[i++] = api.maxVersion();
        }
        for (DelegationTokenCodec.ApiRange api : scram) { // KIP-554, served by the store
            apis[i++] = api.apiKey();
            apis[i++] = api.minVersion();
            apis[i++] = api.maxVersion();
        }
        ServerSetup s = ServerConfig.fromProperties(text, listener, store, apis);
        try {
            for (ServerSetup.Jwks j : s.jwks()) {
                j.endpoint().fetch(System.currentTimeMillis());
                jwksEndpoints.add(j.endpoint().start()); // stopped before the setup (and endpoint) is closed
            }
            return s;
        } catch (KsaslException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** Listens on 127.0.0.1 and accepts connections in a background thread; returns the port. */
    public synchronized int start() throws IOException {
        if (listener != null || closed) {
            throw new IllegalStateException(closed ? "closed" : "already started");
        }
        ServerSocket s = new ServerSocket();
        try {
            s.bind(new InetSocketAddress(InetAddress.getByName(HOST), requestedPort));
        } catch (IOException e) {
            s.close();
            throw e;
        }
        listener = s;
        broker.port(s.getLocalPort());
        acceptor = new Thread(this::acceptLoop, "ksasl-kafka-acceptor-" + s.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
        return s.getLocalPort();
    }

    /** The port, once started. */
    public synchronized int port() {
        if (listener == null) {
            throw new IllegalStateException("not started");
        }
        return listener.getLocalPort();
    }

    /** {@code host:port}, for {@code bootstrap.servers} (the advertised host). */
    public String bootstrapServers() {
        return advertisedHost + ":" + port();
    }

    /** {@code connections.max.reauth.ms}; with {@link Builder#config}, the file's (per mechanism): -1. */
    public long maxReauthMs() {
        return maxReauthMs == null ? -1 : maxReauthMs;
    }

    /** With {@link Builder#config}: the listener built from the file; otherwise {@code null}. */
    public ServerSetup serverSetup() {
        return setup;
    }

    /** Whether OAUTHBEARER checks signed JWTs against a JWKS endpoint (rather than Kafka's unsecured tokens). */
    public boolean signedOAuthBearer() {
        return signedOAuthBearer;
    }

    /** Kafka's broker SASL metrics over every connection of this listener (Kafka's names). */
    public Map<String, Double> metrics() {
        return config.metrics(System.currentTimeMillis());
    }

    /** One record per connection accepted so far, open or closed, in accept order. */
    public List<ConnectionStats> connections() {
        return List.copyOf(connections);
    }

    /** Topic name to partition count. */
    public Map<String, Integer> topics() {
        return broker.topics();
    }

    /** Creates a topic; returns whether it did not exist. */
    public boolean createTopic(String name, int partitions) {
        return broker.createTopic(name, partitions);
    }

    /** Records appended so far to {@code topic}. */
    public long records(String topic) {
        return broker.records(topic);
    }

    /**
     * The token authority given to {@link Builder#tokens}, or with {@link Builder#config} the
     * file's ({@code delegation.token.secret.key}, {@link ServerSetup#tokens()}), or {@code null}.
     */
    public TokenAuthority tokens() {
        return tokens;
    }

    /** Adds or replaces a user while running (the store is shared with the configuration). */
    public void addUser(String name, String password) throws KsaslException {
        store.addUser(name, password);
    }

    /** Stops listening, closes every connection, waits for their threads and frees ksasl's objects. */
    @Override
    public void close() {
        Thread acceptorThread;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            stopping = true;
            acceptorThread = acceptor;
            if (listener != null) {
                closeQuietly(listener);
            }
        }
        join(acceptorThread);
        List<Connection> open = new ArrayList<>(live);
        for (Connection c : open) {
            c.stop();
        }
        for (Connection c : open) {
            join(c.thread);
        }
        jwksEndpoints.forEach(KsaslKafkaServer::closeQuietly);
        if (apiVersionsConfig != config) {
            apiVersionsConfig.close();
        }
        if (setup != null) {
            setup.close();
        } else {
            config.close();
        }
        store.close();
    }

    private static void join(Thread t) {
        if (t == null) {
            return;
        }
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, () -> "thread " + t.getName() + " did not stop");
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // nothing more to do
        }
    }

    private void acceptLoop() {
        while (!stopping) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (!stopping) {
                    LOG.log(System.Logger.Level.WARNING, "accept failed", e);
                }
                return;
            }
            sweepTokensIfDue(System.currentTimeMillis());
            long id = ids.incrementAndGet();
            ConnectionStats stats = new ConnectionStats(id,
                    socket.getInetAddress().getHostAddress() + ":" + socket.getPort(), System.currentTimeMillis());
            Connection c = new Connection(socket, stats);
            connections.add(stats);
            live.add(c);
            if (stopping) { // close() has begun: do not serve it
                live.remove(c);
                closeQuietly(socket);
                stats.closed(ConnectionStats.CloseReason.STOPPED, System.currentTimeMillis());
                return;
            }
            c.thread.start();
        }
    }

    /** One connection: its socket, its thread and its ksasl state. */
    private final class Connection implements Runnable {
        private final Socket socket;
        private final ConnectionStats stats;
        private final Thread thread;

        Connection(Socket socket, ConnectionStats stats) {
            this.socket = socket;
            this.stats = stats;
            this.thread = new Thread(this, "ksasl-kafka-connection-" + stats.id());
            thread.setDaemon(true);
        }

        void stop() {
            closeQuietly(socket);
            thread.interrupt();
        }

        @Override
        public void run() {
            ConnectionStats.CloseReason reason = ConnectionStats.CloseReason.ERROR;
            try (socket; ServerConnection conn = new ServerConnection(config)) {
                socket.setTcpNoDelay(true);
                DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                reason = serve(conn, in, socket.getOutputStream());
            } catch (EOFException e) {
                reason = ConnectionStats.CloseReason.CLIENT;
            } catch (SocketException e) {
                reason = stopping ? ConnectionStats.CloseReason.STOPPED : ConnectionStats.CloseReason.CLIENT;
            } catch (InterruptedException e) {
                reason = ConnectionStats.CloseReason.STOPPED;
            } catch (RequestReader.MalformedRequestException e) {
                LOG.log(System.Logger.Level.WARNING,
                        () -> "connection " + stats.id() + ": malformed request: " + e.getMessage());
                reason = ConnectionStats.CloseReason.PROTOCOL;
            } catch (Exception e) {
                if (stopping) {
                    reason = ConnectionStats.CloseReason.STOPPED;
                } else {
                    LOG.log(System.Logger.Level.WARNING, "connection " + stats.id() + " failed", e);
                }
            } finally {
                stats.closed(reason, System.currentTimeMillis());
                live.remove(this);
                LOG.log(System.Logger.Level.DEBUG, stats::toString);
            }
        }

        /** Serves requests until the connection must end; returns why. */
        private ConnectionStats.CloseReason serve(ServerConnection conn, DataInputStream in, OutputStream out)
                throws IOException, InterruptedException {
            while (true) {
                int declared = in.readInt();
                // Kafka's limits on the length alone, before the body is read: ksasl applies
                // sasl.server.max.receive.size until the session is live, then
                // socket.request.max.bytes.
                int size;
                try {
                    size = conn.checkFrameSize(declared, System.currentTimeMillis());
                } catch (KsaslException e) {
                    LOG.log(System.Logger.Level.DEBUG, () -> "connection " + stats.id() + ": " + e.getMessage());
                    return ConnectionStats.CloseReason.PROTOCOL;
                }
                if (size < 8) {
                    return ConnectionStats.CloseReason.PROTOCOL;
                }
                byte[] frame = new byte[size];
                in.readFully(frame);
                long now = System.currentTimeMillis();
                // The gate routes every frame: only PROCESS (a live session) reaches the handlers.
                short apiKey = (short) (((frame[0] & 0xff) << 8) | (frame[1] & 0xff));
                Gate gate = conn.gate(apiKey, now);
                if (gate == Gate.CLOSE_EXPIRED) {
                    LOG.log(System.Logger.Level.DEBUG,
                            () -> "connection " + stats.id() + ": session expired, closing");
                    return ConnectionStats.CloseReason.EXPIRED;
                }
                if (gate == Gate.CLOSE) {
                    return ConnectionStats.CloseReason.AUTHENTICATION_FAILED;
                }
                if (gate == Gate.PROCESS) {
                    // Kafka's clients ask for ApiVersions again once authenticated: the
                    // answer comes from the same configuration that answered it before.
                    byte[] response;
                    if (apiKey == Broker.API_VERSIONS) {
                        response = apiVersions(frame, stats, now);
                    } else if (tokens != null && DelegationTokenCodec.isTokenApi(apiKey)) {
                        response = tokenRequest(conn, frame, stats, now);
                    } else if (SCRAM_CREDENTIAL_APIS.contains(apiKey)) {
                        response = scramRequest(frame, stats, now);
                    } else {
                        response = broker.handle(frame, stats, now);
                    }
                    if (response == null) {
                        return ConnectionStats.CloseReason.PROTOCOL;
                    }
                    out.write(response);
                    out.flush();
                    continue;
                }
                if (gate == Gate.BEGIN_REAUTHENTICATION) {
                    // This SaslHandshake starts a KIP-368 re-authentication.
                    stats.reauthenticationStarted(now);
                }
                // NOT_AUTHENTICATED: a frame of the exchange in progress.
                stats.authenticationFrame(apiKey);
                if (!authenticate(conn, frame, now, out)) {
                    return ConnectionStats.CloseReason.AUTHENTICATION_FAILED;
                }
            }
        }

        /** One (re-)authentication frame through ksasl; {@code false} when the connection must close. */
        private boolean authenticate(ServerConnection conn, byte[] frame, long now, OutputStream out)
                throws IOException, InterruptedException {
            ServerOutput o = conn.handleFrame(frame, now);
            switch (o.action()) {
                case FAIL_AT: {
                    // KIP-306: the failure answer (if any) goes out after the delay, then the socket closes.
                    stats.failed(String.valueOf(o.error()));
                    LOG.log(System.Logger.Level.DEBUG, () -> "connection " + stats.id() + ": "
                            + (stats.authentications().isEmpty() ? "" : "re-") + "authentication failed: " + o.error()
                            + " (the client is told: " + o.error().clientMessage() + ")");
                    byte[] answer = o.frames();
                    RefusedRequest refused = conn.refusedRequest();
                    if (answer.length == 0 && refused != null) {
                        // A request of an API ksasl has no schema for interrupted the exchange:
                        // Kafka answers with that API's error response (ILLEGAL_SASL_STATE) when
                        // it can read the request, and the Broker builds it for the APIs and
                        // versions it implements; otherwise nothing is written.
                        byte[] built = broker.refusal(refused, frame);
                        LOG.log(System.Logger.Level.DEBUG, () -> "connection " + stats.id() + ": refused " + refused
                                + (built == null ? ", not answered" : ", answered"));
                        answer = built == null ? answer : built;
                    }
                    long wait = o.deadlineMs() - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    out.write(answer);
                    out.flush();
                    return false;
                }
                case CLOSE_NOW:
                    stats.failed(String.valueOf(o.error()));
                    LOG.log(System.Logger.Level.DEBUG,
                            () -> "connection " + stats.id() + ": closing: " + o.error());
                    return false;
                case NEED_CREDENTIAL:
                    // Only a registry without a credential source asks; this one has a store.
                    throw new IllegalStateException("unexpected credential request " + conn.credentialRequest());
                case AUTHENTICATED:
                case REAUTHENTICATED: {
                    // Recorded before the answer is written, so a client never sees an
                    // authentication the statistics do not show yet.
                    ServerSession s = conn.session();
                    boolean reauth = o.action() == ServerAction.REAUTHENTICATED;
                    stats.authenticated(now, reauth, s.mechanism(), s.principal(), s.lifetimeMs(),
                            s.outcome().credentialExpiryMs(), s.outcome().tokenAuthenticated());
                    LOG.log(System.Logger.Level.DEBUG, () -> "connection " + stats.id() + ": "
                            + (reauth ? "re-authenticated " : "authenticated ") + s.principal() + " with "
                            + s.mechanism() + (s.outcome().tokenAuthenticated() ? " (delegation token)" : "")
                            + ", session lifetime " + s.lifetimeMs() + " ms");
                    break;
                }
                case REAUTH_FAILED:
                    // Only with ServerConfig.Builder.setReauthRetryMs > 0: the old session holds.
                    stats.failed(String.valueOf(o.error()));
                    break;
                case CONTINUE:
                default:
                    break;
            }
            out.write(o.frames());
            out.flush();
            return true;
        }
    }

    // --- Command line ---------------------------------------------------------------------

    private static final String USAGE = String.join("\n",
            "usage: KsaslKafkaServer [--port N] [--max-reauth-ms N] [--failed-auth-delay-ms N]",
            "                        [--user NAME=PASSWORD]... [--topic NAME[:PARTITIONS]]...",
            "                        [--token-secret KEY] [--gssapi-keytab FILE --gssapi-principal P",
            "                        [--gssapi-rules RULES]] [--advertised-host HOST]",
            "                        [--jwks-endpoint-url URL [--expected-issuer ISS]",
            "                        [--expected-audience AUD]... [--ca-file PEM]] [-v]",
            "       KsaslKafkaServer --config server.properties [--listener NAME] [--port N]",
            "                        [--user NAME=PASSWORD]... [--topic NAME[:PARTITIONS]]...",
            "                        [--advertised-host HOST] [-v]",
            "  --config FILE            SASL as this broker configuration says for one listener (read by",
            "                           ksasl): sasl.enabled.mechanisms, PLAIN users from the JAAS user_",
            "                           options, OAUTHBEARER unsecured or with its JWKS endpoint,",
            "                           connections.max.reauth.ms (also per mechanism), delegation",
            "                           tokens with delegation.token.secret.key, ...; instead of",
            "                           the SASL options (--max-reauth-ms, --failed-auth-delay-ms,",
            "                           --token-secret, --gssapi-*, --jwks-endpoint-url and its options)",
            "  --listener NAME          the listener of --config (default: its only SASL listener)",
            "  --port N                 port on 127.0.0.1 (0: a free port, printed; default: the port",
            "                           of the listener's entry in --config's listeners, else 0)",
            "  --max-reauth-ms N        connections.max.reauth.ms (default 3000)",
            "  --failed-auth-delay-ms N connection.failed.authentication.delay.ms (default 100)",
            "  --user NAME=PASSWORD     a PLAIN/SCRAM user (default: alice=alice-secret); with --config,",
            "                           a SCRAM user (PLAIN users are the file's)",
            "  --topic NAME[:N]         a topic with N partitions (default 1)",
            "  --token-secret KEY       delegation.token.secret.key: serve delegation tokens (Kafka's",
            "                           default lifetimes) and tokenauth logins",
            "  --gssapi-keytab FILE     offer GSSAPI with this keytab (MIT Kerberos: KRB5_CONFIG ...)",
            "  --gssapi-principal P     the broker's principal, e.g. kafka/localhost@EXAMPLE.COM",
            "  --gssapi-rules RULES     sasl.kerberos.principal.to.local.rules (default DEFAULT)",
            "  --advertised-host HOST   the host name given to clients (default 127.0.0.1)",
            "  --jwks-endpoint-url URL  sasl.oauthbearer.jwks.endpoint.url: OAUTHBEARER takes signed",
            "                           JWTs checked with this key set (fetched at start, then kept",
            "                           fresh) instead of Kafka's unsecured tokens",
            "  --expected-issuer ISS    sasl.oauthbearer.expected.issuer",
            "  --expected-audience AUD  sasl.oauthbearer.expected.audience (repeat for several)",
            "  --ca-file PEM            the CA certificates (PEM) trusted for the JWKS endpoint's HTTPS",
            "                           (ssl.truststore.location with ssl.truststore.type=PEM)",
            "  -v                       log every connection and authentication");

    // Held so that the configured level is not lost if the logger were collected.
    private static final Logger EXAMPLES_LOGGER = Logger.getLogger("org.ksasl.examples");

    /** Runs the server until the process is stopped (Ctrl-C); the first line printed is the port. */
    public static void main(String[] args) throws Exception {
        Builder b = builder();
        boolean verbose = false;
        Integer requestedPort = null;
        TokenAuthority authority = null;
        String keytab = null;
        String principal = null;
        String rules = null;
        String jwksUrl = null;
        String issuer = null;
        List<String> audiences = new ArrayList<>();
        String caFile = null;
        String configFile = null;
        String listener = null;
        // The options that configure SASL, which --config replaces.
        Set<String> saslOptions = new LinkedHashSet<>(List.of("--max-reauth-ms", "--failed-auth-delay-ms",
                "--token-secret", "--gssapi-keytab", "--gssapi-principal", "--gssapi-rules", "--jwks-endpoint-url",
                "--expected-issuer", "--expected-audience", "--ca-file"));
        Set<String> saslGiven = new LinkedHashSet<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (saslOptions.contains(a)) {
                saslGiven.add(a);
            }
            switch (a) {
                case "--config": configFile = value(args, ++i, a); break;
                case "--listener": listener = value(args, ++i, a); break;
                case "--port": requestedPort = Integer.parseInt(value(args, ++i, a)); break;
                case "--max-reauth-ms": b.maxReauthMs(Long.parseLong(value(args, ++i, a))); break;
                case "--failed-auth-delay-ms": b.failedAuthDelayMs(Long.parseLong(value(args, ++i, a))); break;
                case "--user": {
                    String[] kv = value(args, ++i, a).split("=", 2);
                    if (kv.length != 2) {
                        usage("--user takes NAME=PASSWORD");
                    }
                    b.user(kv[0], kv[1]);
                    break;
                }
                case "--topic": {
                    String[] t = value(args, ++i, a).split(":", 2);
                    b.topic(t[0], t.length == 2 ? Integer.parseInt(t[1]) : 1);
                    break;
                }
                case "--token-secret": {
                    if (authority != null) {
                        usage("--token-secret is given twice");
                    }
                    authority = new TokenAuthority(value(args, ++i, a));
                    b.tokens(authority);
                    break;
                }
                case "--gssapi-keytab": keytab = value(args, ++i, a); break;
                case "--gssapi-principal": principal = value(args, ++i, a); break;
                case "--gssapi-rules": rules = value(args, ++i, a); break;
                case "--advertised-host": b.advertisedHost(value(args, ++i, a)); break;
                case "--jwks-endpoint-url": jwksUrl = value(args, ++i, a); break;
                case "--expected-issuer": issuer = value(args, ++i, a); break;
                case "--expected-audience": audiences.add(value(args, ++i, a)); break;
                case "--ca-file": caFile = value(args, ++i, a); break;
                case "-v": case "--verbose": verbose = true; break;
                case "-h": case "--help": System.out.println(USAGE); return;
                default: usage("unknown argument " + a);
            }
        }
        if (configFile != null && !saslGiven.isEmpty()) {
            usage("--config configures SASL from the file: not with " + String.join(", ", saslGiven));
        }
        if (listener != null && configFile == null) {
            usage("--listener goes with --config");
        }
        String fileText = null;
        if (configFile != null) {
            try {
                fileText = Files.readString(Path.of(configFile));
            } catch (IOException e) {
                System.err.println("cannot read " + configFile + ": " + e.getMessage());
                System.exit(1);
                return;
            }
            try {
                listener = listener(fileText, listener);
            } catch (KsaslException | IllegalArgumentException e) {
                System.err.println(configFile + ": " + e.getMessage());
                System.exit(2);
                return;
            }
            b.config(fileText, listener);
            if (requestedPort == null) {
                // The listener's port in the file's listeners (this example listens on 127.0.0.1).
                try {
                    requestedPort = Config.listenerAddress(fileText, listener).map(Config.ListenerAddress::port).orElse(0);
                } catch (KsaslException | IllegalArgumentException e) {
                    System.err.println(configFile + ": " + e.getMessage());
                    System.exit(2);
                    return;
                }
            }
        }
        b.port(requestedPort == null ? 0 : requestedPort);
        if ((keytab == null) != (principal == null)) {
            usage("--gssapi-keytab and --gssapi-principal go together");
        }
        if (keytab != null) {
            b.gssapi(keytab, principal, rules);
        }
        if (jwksUrl == null && (issuer != null || !audiences.isEmpty() || caFile != null)) {
            usage("--expected-issuer, --expected-audience and --ca-file go with --jwks-endpoint-url");
        }
        if (verbose) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %5$s%6$s%n");
            ConsoleHandler h = new ConsoleHandler();
            h.setLevel(Level.ALL);
            EXAMPLES_LOGGER.setLevel(Level.FINE);
            EXAMPLES_LOGGER.addHandler(h);
            EXAMPLES_LOGGER.setUseParentHandlers(false);
        }
        // The identity provider's keys, when OAUTHBEARER takes signed tokens: an unreachable or
        // untrusted endpoint (or a bad option) stops the server here, before it listens.
        JwksKeys keys = null;
        if (jwksUrl != null) {
            try {
                keys = JwksKeys.open(jwksUrl, issuer, audiences, caFile);
            } catch (KsaslException e) {
                System.err.println("JWKS endpoint: " + e.getMessage());
                System.exit(1);
                return;
            }
            b.oauthBearerJwks(keys.endpoint);
        }
        KsaslKafkaServer server;
        try {
            server = b.build();
        } catch (KsaslException | KsaslArgumentException | UnsupportedOperationException e) {
            if (configFile == null) {
                throw e;
            }
            // The file's problem as ksasl names it (no password appears in it).
            System.err.println(configFile + ", listener " + listener + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        int port = server.start();
        System.out.println(port); // first line: the port, for scripts
        if (configFile != null) {
            System.out.println("listening on " + HOST + ":" + port + " (listener " + listener + " of " + configFile
                    + (server.signedOAuthBearer() ? "; OAUTHBEARER keys from "
                            + server.serverSetup().jwks().get(0).url() : "")
                    + (server.tokens() != null ? "; delegation tokens" : "") + "); Ctrl-C stops");
        } else {
            System.out.println("listening on " + HOST + ":" + port + " (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"
                    + (keys != null ? " [signed JWTs, keys from " + jwksUrl + "]" : "")
                    + (keytab != null ? ", GSSAPI" : "")
                    + (authority != null ? ", delegation tokens" : "") + "; connections.max.reauth.ms="
                    + server.maxReauthMs() + "); Ctrl-C stops");
        }
        System.out.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        TokenAuthority tokenAuthority = authority;
        JwksKeys jwksKeys = keys;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Print the summary before closing: the metrics need the live configuration.
            for (ConnectionStats c : server.connections()) {
                System.out.println(c);
            }
            server.metrics().forEach((k, v) -> System.out.println(k + " " + v));
            server.close();
            if (tokenAuthority != null) {
                tokenAuthority.close();
            }
            if (jwksKeys != null) {
                jwksKeys.close();
            }
            stopped.countDown();
        }, "ksasl-kafka-shutdown"));
        stopped.await();
    }

    /**
     * A JWKS endpoint with its validator and refresh thread, as the command line's
     * {@code --jwks-endpoint-url} options make it (the tests make theirs the same way): the key
     * set is fetched once when opened, so that a provider that cannot be reached (or whose
     * certificate is not trusted) fails the start, then kept fresh by ksasl's thread until
     * {@link #close()}. Give {@link #endpoint} to {@link Builder#oauthBearerJwks}.
     */
    static final class JwksKeys implements AutoCloseable {
        final JwksValidator validator;
        final JwksEndpoint endpoint;
        final JwksEndpoint.Fetching fetching;

        private JwksKeys(JwksValidator validator, JwksEndpoint endpoint, JwksEndpoint.Fetching fetching) {
            this.validator = validator;
            this.endpoint = endpoint;
            this.fetching = fetching;
        }

        static JwksKeys open(String url, String issuer, List<String> audiences, String caFile) throws KsaslException {
            // Only the options given are set: the others keep ksasl's defaults, which are Kafka's.
            JwksValidator.Builder vb = JwksValidator.builder();
            if (issuer != null) {
                vb.setIssuer(issuer);
            }
            if (!audiences.isEmpty()) {
                vb.setAudiences(audiences);
            }
            Map<String, String> https = new HashMap<>();
            if (caFile != null) {
                https.put("ssl.truststore.location", caFile);
                https.put("ssl.truststore.type", "PEM");
            }
            JwksValidator validator = vb.build();
            JwksEndpoint endpoint = null;
            try {
                endpoint = new JwksEndpoint(url, validator, https);
                endpoint.fetch(System.currentTimeMillis());
                return new JwksKeys(validator, endpoint, endpoint.start());
            } catch (KsaslException | RuntimeException e) {
                if (endpoint != null) {
                    endpoint.close();
                }
                validator.close();
                throw e;
            }
        }

        /** Stops the refresh thread and frees the endpoint and the validator (after the server is closed). */
        @Override
        public void close() {
            fetching.close();
            endpoint.close();
            validator.close();
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            usage(option + " needs a value");
        }
        return args[i];
    }

    private static void usage(String problem) {
        System.err.println(problem);
        System.err.println(USAGE);
        System.exit(2);
    }

    /**
     * The answer to a delegation-token request on an authenticated connection, from the token
     * authority as the connection's principal ({@code null}, closing the connection, when the
     * request does not parse). Kafka's authorizer is not modelled: every authenticated principal
     * may create tokens (also on someone's behalf) and describe any; renewing and expiring follow
     * the authority's rules (the owner or a renewer).
     */
    private byte[] tokenRequest(ServerConnection conn, byte[] frame, ConnectionStats stats, long now) {
        RequestReader r = new RequestReader(frame);
        short apiKey = r.int16();
        r.int16(); // version
        r.int32(); // correlation id
        stats.request(apiKey, r.string(false), now);
        sweepTokensIfDue(now);
        try {
            return tokens.handleRequest(frame, conn.session(), now);
        } catch (KsaslException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "connection " + stats.id() + ": bad token request: " + e);
            return null;
        }
    }

    /**
     * The answer to a DescribeUserScramCredentials or AlterUserScramCredentials request on an
     * authenticated connection, from the store ({@code null}, closing the connection, when the
     * request does not parse). Kafka's authorizer is not modelled: every authenticated principal
     * may describe and alter SCRAM credentials. A changed credential applies to the user's next
     * login or re-authentication.
     */
    private byte[] scramRequest(byte[] frame, ConnectionStats stats, long now) {
        RequestReader r = new RequestReader(frame);
        short apiKey = r.int16();
        r.int16(); // version
        r.int32(); // correlation id
        stats.request(apiKey, r.string(false), now);
        try {
            return store.handleScramRequest(frame);
        } catch (KsaslException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING,
                    () -> "connection " + stats.id() + ": bad SCRAM credential request: " + e);
            return null;
        }
    }

    /** The api keys of {@link CredentialStore#scramCredentialApiVersions()}. */
    private static Set<Short> scramCredentialApis() {
        Set<Short> keys = new LinkedHashSet<>();
        for (DelegationTokenCodec.ApiRange api : CredentialStore.scramCredentialApiVersions()) {
            keys.add(api.apiKey());
        }
        return Set.copyOf(keys);
    }

    /** Removes expired delegation tokens when the authority's check interval has passed. */
    private void sweepTokensIfDue(long now) {
        if (tokens == null) {
            return;
        }
        try {
            if (now < tokens.nextSweepMs()) {
                return;
            }
            List<String> gone = tokens.sweep(now);
            if (!gone.isEmpty()) {
                LOG.log(System.Logger.Level.DEBUG, () -> "expired delegation tokens removed: " + gone);
            }
        } catch (KsaslException | IllegalStateException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "delegation token sweep failed: " + e);
        }
    }

    /** The answer to an ApiVersions request on an authenticated connection. */
    private byte[] apiVersions(byte[] frame, ConnectionStats stats, long now) {
        stats.request(Broker.API_VERSIONS, null, now);
        try {
            return apiVersionsConfig.apiVersionsResponse(frame);
        } catch (KsaslException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "connection " + stats.id() + ": bad ApiVersions request: " + e);
            return null;
        }
    }
}
