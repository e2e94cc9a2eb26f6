package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** OIDC settings and failures that need no provider: names, values, a closed port. */
class OidcSettingsTest {
    static Map<String, String> closed() {
        Map<String, String> m = new HashMap<>();
        m.put("sasl.oauthbearer.token.endpoint.url", "https://127.0.0.1:1/token");
        m.put("clientId", "kafka");
        m.put("clientSecret", "hunter2");
        m.put("sasl.login.retry.backoff.ms", "20");
        m.put("sasl.login.retry.backoff.max.ms", "100");
        return m;
    }

    @Test
    void badSettingsNameWhatToFix() {
        Map<String, String> m = closed();
        m.put("sasl.oauthbearer.bogus", "1");
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class, () -> new OidcLogin(m));
        assertEquals("INVALID_CONFIG", e.codeName());
        assertTrue(e.getMessage().contains("sasl.oauthbearer.bogus"), e.getMessage());
        Map<String, String> noSecret = closed();
        noSecret.remove("clientSecret");
        e = assertThrows(KsaslArgumentException.class, () -> new OidcLogin(noSecret));
        assertTrue(e.getMessage().contains("client secret"), e.getMessage());
        Map<String, String> badMs = closed();
        badMs.put("sasl.login.read.timeout.ms", "soon");
        e = assertThrows(KsaslArgumentException.class, () -> new OidcLogin(badMs));
        assertFalse(e.getMessage().contains("hunter2"));
    }

    @Test
    void aClosedPortIsRetriedThenReported() throws Exception {
        try (OidcLogin login = new OidcLogin(closed())) {
            KsaslCredentialException e = assertThrows(KsaslCredentialException.class,
                    () -> login.fetch(System.currentTimeMillis()));
            assertEquals("OIDC_PROVIDER_UNAVAILABLE", e.codeName());
            assertTrue(e.getMessage().contains("attempts"), e.getMessage());
        }
        try (JwksValidator v = new JwksValidator();
                JwksEndpoint e = new JwksEndpoint("https://127.0.0.1:1/certs", v, Map.of())) {
            KsaslCredentialException x = assertThrows(KsaslCredentialException.class, () -> e.fetch(1_000));
            assertEquals("OIDC_PROVIDER_UNAVAILABLE", x.codeName());
            assertEquals(1_100, e.poll(1_000), "the next fetch waits for the retry backoff");
        }
        KsaslArgumentException e = assertThrows(KsaslArgumentException.class,
                () -> new JwksEndpoint("https://x/certs", new JwksValidator(), Map.of("clientId", "x")));
        assertTrue(e.getMessage().contains("clientId"));
    }
}
