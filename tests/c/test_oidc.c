/*
 * OIDC logins and JWKS endpoints without a provider: settings by Kafka's names (an unknown
 * name or a malformed value refused, nothing changed), the checks made when a login is
 * created, a provider that refuses connections (retried within the configured budget, then
 * KSASL_OIDC_PROVIDER_UNAVAILABLE, recorded by the refresher, which keeps no token), and a
 * JWKS endpoint that cannot be reached (its validator waits for the retry backoff). Logins
 * and validation against a real provider (Keycloak) are in tests/oidc.rs and the bindings'.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NOW ((int64_t)1700000000000)
/* Nothing listens on port 1 of the loopback: connections are refused at once. */
#define CLOSED "https://127.0.0.1:1/token"

void test_oidc(void) {
    ksasl_oidc_settings *s = NULL;
    ksasl_oidc_login *login = NULL;
    ksasl_oauth_token *token = NULL;
    ksasl_refresher_config_builder *rb = NULL;
    ksasl_refresher_config *rc = NULL;
    ksasl_refresher *r = NULL;
    ksasl_jwks_validator *v = NULL;
    ksasl_jwks_endpoint *e = NULL;
    ksasl_mechanism_registry *reg = NULL;
    size_t keys = 99;

    CHECK_OK(ksasl_oidc_settings_new(&s));
    CHECK_RC(ksasl_oidc_settings_set(s, "sasl.oauthbearer.bogus", "1"), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_oidc_settings_last_error(s), "sasl.oauthbearer.bogus") != NULL);
    CHECK_RC(ksasl_oidc_settings_set(s, "sasl.login.read.timeout.ms", "soon"),
             KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_oidc_settings_last_error(s), "milliseconds") != NULL);
    CHECK_RC(ksasl_oidc_settings_set(s, "ssl.truststore.type", "JKS"), KSASL_INVALID_CONFIG);
    CHECK_RC(ksasl_oidc_settings_set(s, NULL, "x"), KSASL_NULL_ARGUMENT);

    /* Nothing set yet: the URL is missing. */
    CHECK_RC(ksasl_oidc_login_new(s, &login), KSASL_INVALID_CONFIG);
    CHECK(login == NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "token.endpoint.url") != NULL);
    CHECK_OK(ksasl_oidc_settings_set(s, "sasl.oauthbearer.token.endpoint.url", CLOSED));
    CHECK_OK(ksasl_oidc_settings_set(s, "clientId", "kafka"));
    CHECK_RC(ksasl_oidc_login_new(s, &login), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_last_constructor_error(), "client secret") != NULL);
    CHECK_OK(ksasl_oidc_settings_set(s, "clientSecret", "hunter2"));
    CHECK_OK(ksasl_oidc_settings_set(s, "ssl.truststore.location", "/nonexistent/ca.pem"));
    CHECK_RC(ksasl_oidc_login_new(s, &login), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_last_constructor_error(), "/nonexistent/ca.pem") != NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "hunter2") == NULL);
    CHECK_OK(ksasl_oidc_settings_set(s, "ssl.truststore.certificates",
                                     "-----BEGIN CERTIFICATE-----\nAA==\n"
                                     "-----END CERTIFICATE-----\n"));
    /* Both a CA file and PEM text: refused until one is chosen. */
    CHECK_RC(ksasl_oidc_login_new(s, &login), KSASL_INVALID_CONFIG);
    ksasl_oidc_settings_free(s);

    CHECK_OK(ksasl_oidc_settings_new(&s));
    CHECK_OK(ksasl_oidc_settings_set(s, "sasl.oauthbearer.token.endpoint.url", CLOSED));
    CHECK_OK(ksasl_oidc_settings_set(s, "sasl.oauthbearer.client.credentials.client.id", "kafka"));
    CHECK_OK(
        ksasl_oidc_settings_set(s, "sasl.oauthbearer.client.credentials.client.secret", "s3"));
    CHECK_OK(ksasl_oidc_settings_set(s, "sasl.login.retry.backoff.ms", "20"));
    CHECK_OK(ksasl_oidc_settings_set(s, "sasl.login.retry.backoff.max.ms", "100"));
    CHECK_OK(ksasl_oidc_login_new(s, &login));

    /* Refused connections: retried for 100 ms (20 + 40 + 40), then reported. */
    CHECK_RC(ksasl_oidc_login_fetch(login, NOW, &token), KSASL_OIDC_PROVIDER_UNAVAILABLE);
    CHECK(token == NULL);
    CHECK(strstr(ksasl_oidc_login_last_error(login), "attempts") != NULL);
    CHECK_RC(ksasl_oidc_login_fetch(login, NOW, NULL), KSASL_NULL_ARGUMENT);

    /* As a refresher's answer: the failure is recorded, no token is offered, and the next
     * attempt waits for the refresher's backoff. */
    CHECK_OK(ksasl_refresher_config_builder_new(&rb));
    CHECK_OK(ksasl_refresher_config_builder_build(rb, &rc));
    CHECK_OK(ksasl_refresher_new(rc, &r));
    CHECK_INT(ksasl_refresher_poll(r, NOW), 1);
    CHECK_RC(ksasl_oidc_login_refresh(login, r, NOW), KSASL_OIDC_PROVIDER_UNAVAILABLE);
    CHECK_INT(ksasl_refresher_generation(r), 0);
    CHECK(ksasl_refresher_next_deadline(r) > NOW);
    CHECK_RC(ksasl_oidc_login_refresh(login, NULL, NOW), KSASL_NULL_ARGUMENT);

    /* A JWKS endpoint: a bad URL, then one that refuses connections. */
    CHECK_OK(ksasl_jwks_validator_new(NULL, NULL, &v));
    CHECK_RC(ksasl_jwks_endpoint_new("file:/etc/jwks.json", v, NULL, &e), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_last_constructor_error(), "jwks.endpoint.url") != NULL);
    CHECK_OK(ksasl_jwks_endpoint_new("https://127.0.0.1:1/certs", v, s, &e));
    CHECK_RC(ksasl_jwks_endpoint_fetch(e, NOW, &keys), KSASL_OIDC_PROVIDER_UNAVAILABLE);
    CHECK_INT(keys, 99);
    /* The failed fetch sets the retry backoff: the next poll is 100 ms later... */
    CHECK_INT(ksasl_jwks_validator_next_refresh_ms(v), NOW + 100);
    /* ...and a poll at that time fails again and doubles it. */
    CHECK_INT(ksasl_jwks_endpoint_poll(e, NOW + 100), NOW + 100 + 200);
    CHECK_INT(ksasl_jwks_endpoint_poll(NULL, NOW), -1);
    CHECK_OK(ksasl_mechanism_registry_new(&reg));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server(reg, e));
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server(reg, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK(ksasl_jwks_endpoint_last_error(e) != NULL);

    ksasl_mechanism_registry_free(reg);
    ksasl_jwks_endpoint_free(e);
    ksasl_jwks_validator_free(v);
    ksasl_refresher_free(r);
    ksasl_refresher_config_free(rc);
    ksasl_refresher_config_builder_free(rb);
    ksasl_oidc_login_free(login);
    ksasl_oidc_settings_free(s);
}
