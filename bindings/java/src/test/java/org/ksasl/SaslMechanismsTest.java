package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Supplier;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.RealmChoiceCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The JDK's own CRAM-MD5 and DIGEST-MD5, plugged in with {@link SaslMechanisms}, over Kafka framing. */
class SaslMechanismsTest {
    static final long T0 = Wire.T0;
    static final Map<String, String> PASSWORDS = Map.of("alice", "alice-secret", "bob", "bob-secret");

    /** The broker's callbacks: the stored password of the named user; authorize only oneself. */
    static final CallbackHandler SERVER_CALLBACKS = callbacks -> {
        String name = null;
        for (Callback c : callbacks) {
            if (c instanceof NameCallback) {
                NameCallback n = (NameCallback) c;
                name = n.getName() != null ? n.getName() : n.getDefaultName();
            } else if (c instanceof PasswordCallback) {
                String p = PASSWORDS.get(name);
                if (p != null) {
                    ((PasswordCallback) c).setPassword(p.toCharArray());
                }
            } else if (c instanceof RealmCallback) {
                RealmCallback r = (RealmCallback) c;
                r.setText(r.getDefaultText());
            } else if (c instanceof AuthorizeCallback) {
                AuthorizeCallback a = (AuthorizeCallback) c;
                a.setAuthorized(a.getAuthenticationID().equals(a.getAuthorizationID()));
                if (a.isAuthorized()) {
                    a.setAuthorizedID(a.getAuthorizationID());
                }
            } else {
                throw new UnsupportedCallbackException(c);
            }
        }
    };

    static CallbackHandler clientCallbacks(String user, String password) {
        return callbacks -> {
            for (Callback c : callbacks) {
                if (c instanceof NameCallback) {
                    ((NameCallback) c).setName(user);
                } else if (c instanceof PasswordCallback) {
                    ((PasswordCallback) c).setPassword(password.toCharArray());
                } else if (c instanceof RealmCallback) {
                    RealmCallback r = (RealmCallback) c;
                    r.setText(r.getDefaultText());
                } else if (c instanceof RealmChoiceCallback) {
                    ((RealmChoiceCallback) c).setSelectedIndex(0);
                } else {
                    throw new UnsupportedCallbackException(c);
                }
            }
        };
    }

    static Supplier<SaslClient> jdkClient(String mech, String user, String password) {
        return () -> {
            try {
                return Sasl.createSaslClient(new String[] {mech}, null, "kafka", "localhost",
                        Map.of(), clientCallbacks(user, password));
            } catch (SaslException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    static Supplier<SaslServer> jdkServer(String mech) {
        return () -> {
            try {
                return Sasl.createSaslServer(mech, "kafka", "localhost", Map.of(), SERVER_CALLBACKS);
            } catch (SaslException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    static Wire.Pair pair(String mech, String user, String password, long maxReauthMs,
            Supplier<HostServerMechanism> server) throws KsaslException {
        try (MechanismRegistry cr = new MechanismRegistry()
                .addClientMechanism(mech, SaslMechanisms.client(jdkClient(mech, user, password)));
                MechanismRegistry sr = new MechanismRegistry()
                        .addPasswordServers(new CredentialStore())
                        .addServerMechanism(mech, server);
                ClientConfig cc = ClientConfig.builder(cr, mech).build();
                ServerConfig sc = ServerConfig.builder(sr).setMaxReauthMs(maxReauthMs).setFailedAuthenticationDelayMs(100).build()) {
            return new Wire.Pair(cc, sc);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"CRAM-MD5", "DIGEST-MD5"})
    void jdkMechanismsAuthenticateAndReauthenticateThroughTheDrivers(String mech) throws Exception {
        Wire.Pair p = pair(mech, "alice", "alice-secret", 3_000, SaslMechanisms.server(jdkServer(mech)));
        p.client.start(T0);
        p.pump(T0);
        assertEquals(List.of(ClientEvent.Kind.AUTHENTICATED), p.events);
        ServerSession s = p.server.session();
        assertEquals("User:alice", s.principal());
        assertEquals(mech, s.mechanism());
        assertEquals(OptionalLong.empty(), s.outcome().credentialExpiryMs());
        assertEquals(3_000, s.lifetimeMs());
        long due = p.client.nextDeadline().getAsLong();
        assertTrue(p.client.handleTimeout(due));
        p.pump(due);
        assertEquals(ClientEvent.Kind.REAUTHENTICATED, p.events.get(p.events.size() - 1));
        assertNull(p.closed);
        p.client.close();
        p.server.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"CRAM-MD5", "DIGEST-MD5"})
    void aWrongPasswordIsRefusedWithTheJdkMessage(String mech) throws Exception {
        Wire.Pair p = pair(mech, "alice", "not-the-password", 0, SaslMechanisms.server(jdkServer(mech)));
        p.client.start(T0);
        KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class, () -> p.pump(T0));
        assertEquals("SERVER_REJECTED_AUTHENTICATION", e.codeName());
        ServerOutput last = p.serverOutputs.get(p.serverOutputs.size() - 1);
        assertEquals(ServerAction.FAIL_AT, last.action());
        assertEquals("HOST_MECHANISM_FAILED", last.error().codeName());
        assertTrue(last.error().getMessage().startsWith(
                "the " + mech + " mechanism's step failed: javax.security.sasl.SaslException: "), last.error().getMessage());
        assertInstanceOf(SaslException.class, last.error().getCause());
        assertNull(p.server.session());
    }

    @Test
    void theCredentialExpiryOfAnAdaptedServerBoundsTheSession() throws Exception {
        Wire.Pair p = pair("CRAM-MD5", "bob", "bob-secret", 0,
                SaslMechanisms.server(jdkServer("CRAM-MD5"), server -> OptionalLong.of(T0 + 7_000)));
        p.client.start(T0);
        p.pump(T0);
        assertEquals("User:bob", p.server.session().principal());
        assertEquals(7_000, p.server.session().lifetimeMs());
        assertEquals(OptionalLong.of(T0 + 7_000), p.server.session().expiryMs());
        assertEquals(7_000, p.client.session().lifetimeMs());
    }

    @Test
    void aSaslClientFactoryFailureIsReported() throws Exception {
        try (MechanismRegistry cr = new MechanismRegistry().addClientMechanism("CRAM-MD5",
                SaslMechanisms.client(() -> null))) {
            // The authenticator makes its mechanism when it is created.
            KsaslAuthenticationException e = assertThrows(KsaslAuthenticationException.class,
                    () -> new ClientExchange(cr, "CRAM-MD5"));
            assertEquals("HOST_MECHANISM_FAILED", e.codeName());
            assertTrue(e.getMessage().contains("the SaslClient factory returned null"), e.getMessage());
            assertInstanceOf(NullPointerException.class, e.getCause());
        }
    }

    @Test
    void negotiatedExpiryReadsKafkasProperty() throws Exception {
        SaslServer s = jdkServer("CRAM-MD5").get();
        assertThrows(IllegalStateException.class, () -> SaslMechanisms.negotiatedExpiry(s));
        s.dispose();
    }
}
