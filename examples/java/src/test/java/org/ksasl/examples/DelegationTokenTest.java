package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.common.errors.DelegationTokenNotFoundException;
import org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.ksasl.DelegationToken;
import org.ksasl.TokenAuthority;

/**
 * Delegation tokens (KIP-48) with Kafka's own Java client against the example server and a
 * ksasl {@link TokenAuthority}: an Admin logs in with a token the authority created
 * ({@code ScramLoginModule ... tokenauth="true"}), is the token's owner, and its sessions are
 * capped by the token's expiry; and Kafka's Admin API creates, describes, renews and expires
 * tokens served by {@link TokenAuthority#handleRequest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DelegationTokenTest {
    static final String SECRET = "example-token-secret";
    /** {@code delegation.token.expiry.time.ms}: far below {@code connections.max.reauth.ms}. */
    static final long TOKEN_EXPIRY_MS = 5000;
    static final long MAX_REAUTH_MS = 60_000;
    static final long RUN_MS = 7000;
    static final long PERIOD_MS = 50;
    /** The host renews the token every second once the client is connected, as an application would. */
    static final long RENEW_EVERY_MS = 1000;

    @Test
    void kafkasClientLogsInWithATokenAsItsOwnerAndItsSessionsAreCappedByTheToken() throws Exception {
        try (TokenAuthority authority = new TokenAuthority(SECRET, TokenAuthority.DEFAULT_MAX_LIFETIME_MS,
                        TOKEN_EXPIRY_MS, TokenAuthority.DEFAULT_EXPIRY_CHECK_INTERVAL_MS);
                KsaslKafkaServer server = KsaslKafkaServer.builder().maxReauthMs(MAX_REAUTH_MS)
                        .user("alice", "alice-secret").topic("orders", 2).tokens(authority).build()) {
            server.start();
            long created = System.currentTimeMillis();
            DelegationToken token = authority.create("alice", created);
            assertEquals(created + TOKEN_EXPIRY_MS, token.expiryMs());
            List<String> failures = new ArrayList<>();
            List<Long> renewals = new ArrayList<>();
            int calls = 0;
            try (Admin admin = Admin.create(Clients.admin(server, "token-admin", "SCRAM-SHA-256",
                    Clients.tokenJaas(token.tokenId(), token.hmacBase64())))) {
                long end = created + RUN_MS;
                // Renewals start once the client is connected, so that its first logins see the
                // token as created.
                long nextRenewal = Long.MAX_VALUE;
                while (System.currentTimeMillis() < end) {
                    long now = System.currentTimeMillis();
                    if (now >= nextRenewal) {
                        authority.renew(token.hmac(), "User:alice", -1, now);
                        renewals.add(now);
                        nextRenewal += RENEW_EVERY_MS;
                    }
                    try {
                        Set<String> names = admin.listTopics().names().get(10, TimeUnit.SECONDS);
                        if (!names.contains("orders")) {
                            failures.add("listTopics returned " + names);
                        }
                    } catch (Exception e) {
                        failures.add(String.valueOf(e));
                    }
                    calls++;
                    if (nextRenewal == Long.MAX_VALUE) {
                        nextRenewal = System.currentTimeMillis() + RENEW_EVERY_MS;
                    }
                    Thread.sleep(PERIOD_MS);
                }
            }
            String summary = summary(server, created);
            assertEquals(List.of(), failures, "every call succeeds\n" + summary);
            assertTrue(calls >= RUN_MS / PERIOD_MS / 4, calls + " calls");
            assertFalse(renewals.isEmpty());
            long firstRenewal = renewals.get(0);

            List<ConnectionStats> connections = server.connections();
            assertFalse(connections.isEmpty());
            int reauthentications = 0;
            for (ConnectionStats c : connections) {
                // The token's owner, marked as a token login.
                assertEquals("User:alice", c.principal(), summary);
                assertEquals("SCRAM-SHA-256", c.mechanism(), summary);
                assertTrue(c.tokenAuthenticated(), summary);
                assertFalse(c.closedForExpiry(), summary);
                assertEquals(0, c.failedAuthentications() + c.failedReauthentications(), summary);
                List<ConnectionStats.Authentication> auths = c.authentications();
                // The first login saw the token as created: its session ends with the token.
                ConnectionStats.Authentication first = auths.get(0);
                assertTrue(first.atMs() < firstRenewal, summary);
                assertEquals(token.expiryMs(), first.credentialExpiryMs().getAsLong(), summary);
                for (ConnectionStats.Authentication a : auths) {
                    assertTrue(a.tokenAuthenticated(), a.toString());
                    // Capped by the token (5 s), not connections.max.reauth.ms (60 s).
                    assertTrue(a.lifetimeMs() > 0 && a.lifetimeMs() <= TOKEN_EXPIRY_MS, a + "\n" + summary);
                    assertEquals(a.credentialExpiryMs().getAsLong() - a.atMs(), a.lifetimeMs(), a.toString());
                }
                // Each re-authentication began before the session it replaced ended.
                List<Long> starts = c.reauthenticationStarts();
                assertEquals(auths.size() - 1, starts.size(), summary);
                for (int i = 1; i < auths.size(); i++) {
                    ConnectionStats.Authentication previous = auths.get(i - 1);
                    assertTrue(starts.get(i - 1) < previous.atMs() + previous.lifetimeMs(),
                            "re-authentication " + i + " began before the session ended\n" + summary);
                }
                // Every request was answered within a live session.
                ConnectionStats.Authentication last = auths.get(auths.size() - 1);
                assertTrue(c.lastRequestMs() <= last.atMs() + last.lifetimeMs(), summary);
                reauthentications += c.reauthentications();
            }
            // The connection that carried the requests outlived its first session: it re-authenticated.
            assertTrue(connections.stream().anyMatch(c -> c.reauthentications() >= 1
                    && c.lastRequestMs() > c.authentications().get(0).atMs() + c.authentications().get(0).lifetimeMs()),
                    summary);
            Map<String, Double> metrics = server.metrics();
            assertEquals(0.0, metrics.get("expired-connections-killed-count"), summary);
            assertEquals(reauthentications, metrics.get("successful-reauthentication-total"), 0.0, summary);

            // Once the token is expired (removed), it no longer logs anyone in.
            long now = System.currentTimeMillis();
            assertEquals(now, authority.expire(token.hmac(), "alice", -1, now));
            try (Admin admin = Admin.create(Clients.admin(server, "expired-token-admin", "SCRAM-SHA-512",
                    Clients.tokenJaas(token.tokenId(), token.hmacBase64())))) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> admin.listTopics().names().get(10, TimeUnit.SECONDS));
                assertInstanceOf(SaslAuthenticationException.class, e.getCause());
            }
        }
    }

    @Test
    void kafkasAdminCreatesDescribesRenewsAndExpiresTokens() throws Exception {
        try (TokenAuthority authority = new TokenAuthority(SECRET);
                KsaslKafkaServer server = KsaslKafkaServer.builder().maxReauthMs(MAX_REAUTH_MS)
                        .user("alice", "alice-secret").user("bob", "bob-secret").user("carol", "carol-secret")
                        .topic("orders", 1).tokens(authority).build()) {
            server.start();
            try (Admin alice = Admin.create(Clients.admin(server, "alice-admin", "SCRAM-SHA-512",
                            Clients.jaas("SCRAM-SHA-512", "alice", "alice-secret")));
                    Admin bob = Admin.create(Clients.admin(server, "bob-admin", "PLAIN",
                            Clients.jaas("PLAIN", "bob", "bob-secret")));
                    Admin carol = Admin.create(Clients.admin(server, "carol-admin", "SCRAM-SHA-256",
                            Clients.jaas("SCRAM-SHA-256", "carol", "carol-secret")))) {
                long before = System.currentTimeMillis();
                org.apache.kafka.common.security.token.delegation.DelegationToken created = alice
                        .createDelegationToken(new CreateDelegationTokenOptions()
                                .renewers(List.of(new KafkaPrincipal("User", "bob"))))
                        .delegationToken().get(10, TimeUnit.SECONDS);
                String id = created.tokenInfo().tokenId();
                assertEquals(new KafkaPrincipal("User", "alice"), created.tokenInfo().owner());
                assertEquals(new KafkaPrincipal("User", "alice"), created.tokenInfo().tokenRequester());
                assertEquals(List.of(new KafkaPrincipal("User", "bob")), List.copyOf(created.tokenInfo().renewers()));
                assertArrayEquals(authority.hmac(id), created.hmac());
                long issued = created.tokenInfo().issueTimestamp();
                assertTrue(issued >= before && issued <= System.currentTimeMillis());
                assertEquals(issued + TokenAuthority.DEFAULT_EXPIRY_TIME_MS, created.tokenInfo().expiryTimestamp());
                assertEquals(issued + TokenAuthority.DEFAULT_MAX_LIFETIME_MS, created.tokenInfo().maxTimestamp());

                // The authority holds the same token; Kafka's base64 of the HMAC is ksasl's password.
                List<DelegationToken> held = authority.describe(List.of("User:alice"));
                assertEquals(1, held.size());
                assertEquals(id, held.get(0).tokenId());
                assertEquals(created.hmacAsBase64String(), held.get(0).hmacBase64());

                // Described through Kafka's API: all tokens, and alice's.
                List<org.apache.kafka.common.security.token.delegation.DelegationToken> described = alice
                        .describeDelegationToken().delegationTokens().get(10, TimeUnit.SECONDS);
                assertEquals(List.of(created), described);
                assertEquals(List.of(created), bob.describeDelegationToken(new DescribeDelegationTokenOptions()
                        .owners(List.of(new KafkaPrincipal("User", "alice")))).delegationTokens()
                        .get(10, TimeUnit.SECONDS));

                // The token logs Kafka's client in as alice; that connection may not manage tokens (64).
                try (Admin viaToken = Admin.create(Clients.admin(server, "token-admin", "SCRAM-SHA-512",
                        Clients.tokenJaas(id, created.hmacAsBase64String())))) {
                    assertTrue(viaToken.listTopics().names().get(10, TimeUnit.SECONDS).contains("orders"));
                    ExecutionException e = assertThrows(ExecutionException.class,
                            () -> viaToken.createDelegationToken().delegationToken().get(10, TimeUnit.SECONDS));
                    assertInstanceOf(UnsupportedByAuthenticationException.class, e.getCause());
                }
                List<ConnectionStats> viaTokenConnections = server.connections().stream()
                        .filter(c -> "token-admin".equals(c.clientId())).collect(Collectors.toList());
                assertFalse(viaTokenConnections.isEmpty());
                for (ConnectionStats c : viaTokenConnections) {
                    assertEquals("User:alice", c.principal(), c.toString());
                    assertTrue(c.tokenAuthenticated(), c.toString());
                }

                // Renew: the renewer may, carol may not.
                long renewed = bob.renewDelegationToken(created.hmac()).expiryTimestamp().get(10, TimeUnit.SECONDS);
                assertTrue(renewed >= created.tokenInfo().expiryTimestamp(), renewed + "");
                ExecutionException mismatch = assertThrows(ExecutionException.class,
                        () -> carol.renewDelegationToken(created.hmac()).expiryTimestamp().get(10, TimeUnit.SECONDS));
                assertInstanceOf(DelegationTokenOwnerMismatchException.class, mismatch.getCause());

                // Expire now: gone from the authority and from Kafka's describe; renewing is then NOT_FOUND.
                long expired = alice.expireDelegationToken(created.hmac(),
                        new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp()
                        .get(10, TimeUnit.SECONDS);
                assertTrue(expired <= System.currentTimeMillis());
                assertEquals(List.of(), authority.describe(null));
                assertEquals(List.of(), alice.describeDelegationToken().delegationTokens().get(10, TimeUnit.SECONDS));
                ExecutionException gone = assertThrows(ExecutionException.class,
                        () -> alice.renewDelegationToken(created.hmac()).expiryTimestamp().get(10, TimeUnit.SECONDS));
                assertInstanceOf(DelegationTokenNotFoundException.class, gone.getCause());
            }
            for (ConnectionStats c : server.connections()) {
                assertFalse(c.closeReason() == ConnectionStats.CloseReason.PROTOCOL, c.toString());
            }
        }
    }

    @Test
    void aServerWithoutTokensDoesNotAdvertiseTheTokenApis() throws Exception {
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().build()) {
            server.start();
            try (Admin alice = Admin.create(Clients.admin(server, "alice-admin", "SCRAM-SHA-256",
                    Clients.jaas("SCRAM-SHA-256", "alice", "alice-secret")))) {
                assertTrue(alice.listTopics().names().get(10, TimeUnit.SECONDS).isEmpty());
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> alice.createDelegationToken().delegationToken().get(10, TimeUnit.SECONDS));
                assertInstanceOf(UnsupportedVersionException.class, e.getCause());
            }
            for (ConnectionStats c : server.connections()) {
                assertFalse(c.closeReason() == ConnectionStats.CloseReason.PROTOCOL, c.toString());
            }
        }
    }

    private static void sleepUntil(long atMs) throws InterruptedException {
        long wait = atMs - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    /** Every connection with its authentications, times relative to {@code t0}: for failure messages. */
    private static String summary(KsaslKafkaServer server, long t0) {
        StringBuilder b = new StringBuilder();
        for (ConnectionStats c : server.connections()) {
            b.append(c).append("\n  authenticated at");
            for (ConnectionStats.Authentication a : c.authentications()) {
                b.append(' ').append(a.atMs() - t0).append(" (lifetime ").append(a.lifetimeMs()).append(')');
            }
            b.append(", re-authentications began at");
            for (long s : c.reauthenticationStarts()) {
                b.append(' ').append(s - t0);
            }
            b.append(", last request at ").append(c.lastRequestMs() - t0).append('\n');
        }
        return b.append(server.metrics()).toString();
    }
}
