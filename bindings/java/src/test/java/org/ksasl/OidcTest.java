package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * OIDC against a real Keycloak: Maven runs under {@code tests/oidc/keycloak.py --exec --} (as
 * {@code make test-java} does), which names the provider's facts in {@code KSASL_OIDC_INFO};
 * without it these tests are skipped (settings errors are tested in {@link OidcSettingsTest}).
 */
@EnabledIfEnvironmentVariable(named = "KSASL_OIDC_INFO", matches = ".+", disabledReason = "KSASL_OIDC_INFO is not"
        + " set: run Maven under tests/oidc/keycloak.py --exec -- mvn ... (make test-java does)")
class OidcTest {
    static JsonNode idp;

    @BeforeAll
    static void idp() throws Exception {
        idp = new ObjectMapper().readTree(new File(System.getenv("KSASL_OIDC_INFO")));
    }

    static String s(String... path) {
        JsonNode n = idp;
        for (String p : path) {
            n = n.get(p);
        }
        return n.asText();
    }

    static Map<String, String> secretSettings(String secret) {
        Map<String, String> m = new HashMap<>();
        m.put("sasl.oauthbearer.token.endpoint.url", s("token_endpoint"));
        m.put("clientId", s("secret_client", "id"));
        m.put("clientSecret", secret);
        m.put("ssl.truststore.location", s("ca_pem"));
        return m;
    }

    static long now() {
        return System.currentTimeMillis();
    }

    @Test
    void clientSecretTokenValidatesAgainstTheJwksEndpoint() throws Exception {
        try (OidcLogin login = new OidcLogin(secretSettings(s("secret_client", "secret")));
                JwksValidator v = new JwksValidator(s("issuer"), s("audience"), 30_000);
                JwksEndpoint e = new JwksEndpoint(s("jwks_uri"), v, Map.of("ssl.truststore.location", s("ca_pem")))) {
            OAuthBearerToken t = login.fetch(now());
            assertTrue(Math.abs(t.expiryMs() - now() - idp.get("token_lifespan_s").asLong() * 1000) < 5000);
            assertTrue(e.fetch(now()) >= 1);
            assertEquals(t.principal(), v.validate(t.value(), now()).principal());
            // Through a registry's OAUTHBEARER server, as a broker would.
            try (MechanismRegistry r = new MechanismRegistry().addOAuthBearerServer(e)) {
                assertFalse(r.isClosed());
            }
        }
    }

    @Test
    void signedClientAssertion() throws Exception {
        Map<String, String> m = new HashMap<>();
        m.put("sasl.oauthbearer.token.endpoint.url", s("token_endpoint"));
        m.put("clientId", s("jwt_client", "id"));
        m.put("sasl.oauthbearer.assertion.private.key.file", s("jwt_client", "key_pem"));
        m.put("sasl.oauthbearer.assertion.claim.aud", s("issuer"));
        m.put("sasl.oauthbearer.assertion.claim.jti.include", "true");
        m.put("ssl.truststore.location", s("ca_pem"));
        try (OidcLogin login = new OidcLogin(m)) {
            OAuthBearerToken t = login.fetch(now());
            assertFalse(t.principal().isBlank());
        }
    }

    @Test
    void wrongSecretCarriesTheProvidersDescription() throws Exception {
        try (OidcLogin login = new OidcLogin(secretSettings("not-the-secret"))) {
            KsaslCredentialException e = assertThrows(KsaslCredentialException.class, () -> login.fetch(now()));
            assertEquals("OIDC_REQUEST_REFUSED", e.codeName());
            assertEquals("Invalid client or Invalid client credentials", e.details().get("error_description"));
            assertFalse(e.getMessage().contains("not-the-secret"));
        }
    }

    @Test
    void unknownCaIsRefused() throws Exception {
        Map<String, String> m = secretSettings(s("secret_client", "secret"));
        m.put("ssl.truststore.location", s("other_ca_pem"));
        try (OidcLogin login = new OidcLogin(m)) {
            KsaslCredentialException e = assertThrows(KsaslCredentialException.class, () -> login.fetch(now()));
            assertEquals("TLS_CERTIFICATE_REFUSED", e.codeName());
        }
    }

    @Test
    void startInstallsAFirstTokenThenRefreshes() throws Exception {
        try (OidcLogin login = new OidcLogin(secretSettings(s("secret_client", "secret")));
                Refresher r = new Refresher();
                OidcLogin.Refresh running = login.start(r, Map.of("traceId", "t1"))) {
            OAuthBearerToken t = r.current(now());
            assertFalse(running.isClosed());
            assertEquals(1, t.generation());
            assertEquals(Map.of("traceId", "t1"), t.extensions());
        }
        try (OidcLogin login = new OidcLogin(secretSettings("wrong")); Refresher r = new Refresher()) {
            KsaslCredentialException e = assertThrows(KsaslCredentialException.class,
                    () -> login.start(r, null));
            assertEquals("OIDC_REQUEST_REFUSED", e.codeName());
            assertEquals(0, r.generation());
        }
    }
}
