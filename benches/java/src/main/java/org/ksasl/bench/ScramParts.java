package org.ksasl.bench;

import java.util.concurrent.TimeUnit;
import org.ksasl.AuthOutcome;
import org.ksasl.ClientExchange;
import org.ksasl.ClientStep;
import org.ksasl.CredentialStore;
import org.ksasl.MechanismRegistry;
import org.ksasl.ServerExchange;
import org.ksasl.ServerStep;
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

/**
 * Where a ksasl SCRAM-SHA-256 login's time goes in the Java binding: the pieces of
 * {@code Scram.scram1/scram2} that can be run alone (the server's final step needs a live
 * proof, so it is what remains).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ScramParts {
    static final String MECH = "SCRAM-SHA-256";
    static final long NOW = Scram.NOW;

    @State(Scope.Benchmark)
    public static class Setting {
        CredentialStore store;
        MechanismRegistry serverRegistry;
        MechanismRegistry clientRegistry;
        byte[] clientFirst;
        ServerExchange done;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            store = new CredentialStore();
            store.addUser(Scram.USER, Scram.PASSWORD);
            serverRegistry = new MechanismRegistry().addPasswordServers(store);
            clientRegistry = new MechanismRegistry().addPasswordClients(Scram.USER, Scram.PASSWORD);
            // A completed server exchange, for outcome().
            done = new ServerExchange(serverRegistry, MECH);
            try (ClientExchange c = new ClientExchange(clientRegistry, MECH)) {
                clientFirst = c.start(NOW).message();
                ServerStep first = done.step(clientFirst, NOW);
                ServerStep last = done.step(c.step(first.message(), NOW).message(), NOW);
                if (last.kind() != ServerStep.Kind.DONE || !c.step(last.message(), NOW).done()) {
                    throw new IllegalStateException("login did not complete");
                }
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            done.close();
            serverRegistry.close();
            clientRegistry.close();
            store.close();
        }
    }

    /** new ServerExchange + close: two JNI calls, a Cleaner registration, a lock object. */
    @Benchmark
    public boolean part1_serverNewClose(Setting s) throws Exception {
        ServerExchange a = new ServerExchange(s.serverRegistry, MECH);
        a.close();
        return a.isClosed();
    }

    /** The same plus the first server step (parse client-first, credential lookup, nonce, server-first). */
    @Benchmark
    public ServerStep part2_serverNewFirstStepClose(Setting s) throws Exception {
        try (ServerExchange a = new ServerExchange(s.serverRegistry, MECH)) {
            return a.step(s.clientFirst, NOW);
        }
    }

    /** outcome() of a completed exchange: the principal and session facts as Java objects. */
    @Benchmark
    public AuthOutcome part3_serverOutcome(Setting s) {
        return s.done.outcome();
    }

    /** new ClientExchange + start (client-first with a fresh nonce) + close. */
    @Benchmark
    public ClientStep part4_clientNewStartClose(Setting s) throws Exception {
        try (ClientExchange c = new ClientExchange(s.clientRegistry, MECH)) {
            return c.start(NOW);
        }
    }
}
