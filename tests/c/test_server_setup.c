/*
 * ksasl_server_setup: a broker listener built from server.properties.
 *
 * A two-listener file: INTERNAL with PLAIN users from its JAAS entry (sessions of 5 s),
 * EXTERNAL with SCRAM-SHA-256 users from a credential store and unsecured OAUTHBEARER
 * (sessions of at most 7 s). A ksasl client connection authenticates in memory against each
 * listener's configuration (the pump of test_client_setup.c) with the principal and session
 * lifetime the file says; with delegation.token.secret.key the listener has a token
 * authority whose tokens log in and whose APIs (38-41) its ApiVersions answer lists; the
 * host's own APIs appear there too; a JWKS listener hands out its (unfetched) endpoint; a
 * NULL listener is the file's only SASL listener; invalid values, a GSSAPI listener without
 * its keytab and NULL arguments fail as documented, never showing a secret.
 */
#include <stdlib.h>

#include "check.h"

#define T0 ((int64_t)1700000000000)

static const char SECRET[] = "alice-secret";
static const char TOKEN_KEY[] = "token-key-alice-secret";

#define JAAS_PLAIN "org.apache.kafka.common.security.plain.PlainLoginModule required "
#define JAAS_SCRAM "org.apache.kafka.common.security.scram.ScramLoginModule required;"
#define JAAS_OAUTH "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"

/* Two SASL listeners and a PLAINTEXT one. */
#define BROKER                                                                                  \
    "listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://[::1]:9093,CONTROLLER://:9094\n"            \
    "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_SSL,"                 \
    "CONTROLLER:PLAINTEXT\n"                                                                    \
    "listener.name.internal.sasl.enabled.mechanisms=PLAIN\n"                                    \
    "listener.name.internal.plain.sasl.jaas.config=" JAAS_PLAIN "user_alice=\"alice-secret\";\n" \
    "listener.name.internal.plain.connections.max.reauth.ms=5000\n"                             \
    "listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER\n"                \
    "listener.name.external.scram-sha-256.sasl.jaas.config=" JAAS_SCRAM "\n"                    \
    "listener.name.external.oauthbearer.sasl.jaas.config=" JAAS_OAUTH "\n"                      \
    "listener.name.external.connections.max.reauth.ms=7000\n"

/* The same with delegation tokens. */
#define BROKER_TOKENS                                                                           \
    BROKER "delegation.token.secret.key=token-key-alice-secret\n"                               \
           "delegation.token.max.lifetime.ms=600000\n"                                          \
           "delegation.token.expiry.time.ms=60000\n"

/* A listener validating tokens with a JWKS endpoint (config_table.json's form). */
#define JWKS_BROKER                                                                             \
    "listeners=X://:9095\n"                                                                     \
    "listener.security.protocol.map=X:SASL_SSL\n"                                               \
    "sasl.enabled.mechanisms=OAUTHBEARER\n"                                                     \
    "listener.name.x.oauthbearer.sasl.jaas.config=" JAAS_OAUTH "\n"                             \
    "listener.name.x.oauthbearer.sasl.server.callback.handler.class="                           \
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler\n"        \
    "listener.name.x.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=http://127.0.0.1:1/jwks\n"  \
    "sasl.oauthbearer.expected.issuer=https://idp.example\n"

typedef link_outcome outcome;

/* Authenticates `cc` against `sc` at `now` (no failure text may hold the secret). */
static outcome authenticate(const ksasl_client_config *cc, const ksasl_server_config *sc,
                            int64_t now) {
    return link_authenticate(cc, sc, now, SECRET);
}

/* Authenticates `user`/`password` with `mechanism` against `sc`. */
static outcome login(const ksasl_server_config *sc, const char *mechanism, const char *user,
                     const char *password) {
    ksasl_mechanism_registry *creg = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(creg, user, password));
    ksasl_client_config *cc = client_config_done(client_builder(creg, mechanism));
    outcome o = authenticate(cc, sc, T0);
    ksasl_client_config_free(cc);
    ksasl_mechanism_registry_free(creg);
    return o;
}

/* Authenticates with an unsecured OAUTHBEARER token for `sub` (60 s) made at T0. */
static outcome login_oauthbearer(const ksasl_server_config *sc, const char *sub) {
    char text[512];
    snprintf(text, sizeof text,
             "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
             "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
             "OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"%s\" "
             "unsecuredLoginLifetimeSeconds=\"60\";\n",
             sub);
    ksasl_client_setup *cs = NULL;
    ksasl_client_config *cc = NULL;
    ksasl_refresher *r = NULL;
    int ran = 0;
    CHECK_OK(ksasl_client_setup_new(text, strlen(text), &cs));
    CHECK_OK(ksasl_client_setup_config(cs, &cc));
    CHECK_OK(ksasl_client_setup_refresher(cs, &r));
    CHECK_OK(ksasl_refresher_run_due(r, T0, &ran));
    CHECK_INT(ran, 1);
    outcome o = authenticate(cc, sc, T0);
    ksasl_refresher_free(r);
    ksasl_client_config_free(cc);
    ksasl_client_setup_free(cs);
    return o;
}


/* Every string the setup hands out, none holding a secret. */
static void no_secret(const ksasl_server_setup *s) {
    const char *strs[] = {ksasl_server_setup_listener(s), ksasl_server_setup_host(s),
                          ksasl_server_setup_last_error(s)};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        CHECK(strs[i] == NULL || strstr(strs[i], SECRET) == NULL);
    }
    for (size_t i = 0; i < ksasl_server_setup_jwks_count(s); i++) {
        CHECK(strstr(ksasl_server_setup_jwks_url(s, i), SECRET) == NULL);
    }
}

static ksasl_server_setup *setup_full(const char *text, const char *listener,
                                      const ksasl_credential_store *store, const int64_t *apis,
                                      size_t n_apis) {
    ksasl_server_setup *s = NULL;
    ksasl_result rc = ksasl_server_setup_new((const uint8_t *)text, strlen(text), listener, store,
                                             apis, n_apis, &s);
    if (rc != KSASL_OK) {
        fprintf(stderr, "server setup: %s\n", ksasl_last_constructor_error());
    }
    CHECK_OK(rc);
    if (s != NULL) {
        no_secret(s);
    }
    return s;
}

static ksasl_server_setup *setup_text(const char *text, const char *listener,
                                      const ksasl_credential_store *store) {
    return setup_full(text, listener, store, NULL, 0);
}

/* The configuration of a setup (a new reference), checked to exist. */
static ksasl_server_config *setup_config(const ksasl_server_setup *s) {
    ksasl_server_config *c = NULL;
    CHECK_OK(ksasl_server_setup_config(s, &c));
    CHECK(c != NULL);
    return c;
}

/* The setup's token authority (NULL without one). */
static ksasl_token_authority *setup_tokens(const ksasl_server_setup *s) {
    ksasl_token_authority *a = (ksasl_token_authority *)&a; /* overwritten */
    CHECK_OK(ksasl_server_setup_tokens(s, &a));
    return a;
}

/* A failing setup: NULL handle, `code`, `needle` in the detail, no secret. */
static void fails(const char *text, const char *listener, const char *code,
                  const char *needle) {
    ksasl_server_setup *s = NULL;
    CHECK_STR(ksasl_result_name(ksasl_server_setup_new((const uint8_t *)text, strlen(text),
                                                       listener, NULL, NULL, 0, &s)),
              code);
    CHECK(s == NULL);
    const char *e = ksasl_last_constructor_error();
    if (strstr(e, needle) == NULL) {
        fprintf(stderr, "server setup: \"%s\" not in \"%s\"\n", needle, e);
    }
    CHECK(strstr(e, needle) != NULL);
    CHECK(strstr(e, SECRET) == NULL);
    CHECK(strstr(e, TOKEN_KEY) == NULL);
    ksasl_server_setup_free(s);
}

static void invalid(const char *text, const char *listener, const char *key) {
    fails(text, listener, "INVALID_CONFIG", key);
    CHECK(strncmp(ksasl_last_constructor_error(), "INVALID_CONFIG: ", 16) == 0);
}

static void internal_listener(void) {
    ksasl_server_setup *s = setup_text(BROKER, "internal", NULL);
    CHECK_STR(ksasl_server_setup_listener(s), "internal");
    CHECK_STR(ksasl_server_setup_host(s), "127.0.0.1");
    CHECK_INT(ksasl_server_setup_port(s), 9092);
    CHECK_INT(ksasl_server_setup_jwks_count(s), 0);
    CHECK_STR(ksasl_server_setup_jwks_url(s, 0), NULL);
    CHECK(setup_tokens(s) == NULL);
    ksasl_server_config *sc = setup_config(s);
    /* The configuration outlives the setup. */
    ksasl_server_setup_free(s);

    outcome o = login(sc, "PLAIN", "alice", SECRET);
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:alice");
    CHECK_INT(o.token, 0);
    CHECK_INT(o.lifetime_ms, 5000);
    CHECK_INT(o.client_lifetime_ms, 5000);
    CHECK(!login(sc, "PLAIN", "alice", "wrong").ok);
    CHECK(!login(sc, "PLAIN", "bob", "bob-secret").ok);
    /* Not enabled on this listener. */
    CHECK(!login(sc, "SCRAM-SHA-256", "alice", SECRET).ok);
    ksasl_server_config_free(sc);
}

static void external_listener(void) {
    ksasl_credential_store *store = NULL;
    CHECK_OK(ksasl_credential_store_new(&store));
    /* Listener names ignore case. */
    ksasl_server_setup *s = setup_text(BROKER, "External", store);
    CHECK_STR(ksasl_server_setup_listener(s), "External");
    CHECK_STR(ksasl_server_setup_host(s), "::1");
    CHECK_INT(ksasl_server_setup_port(s), 9093);
    CHECK_INT(ksasl_server_setup_jwks_count(s), 0);
    CHECK(setup_tokens(s) == NULL);
    ksasl_server_config *sc = setup_config(s);
    /* Two references are two handles, each freed. */
    ksasl_server_config *sc2 = setup_config(s);
    CHECK(sc2 != sc);
    ksasl_server_config_free(sc2);
    ksasl_server_setup_free(s);

    /* The store is live: a user added after the build logs in. */
    CHECK(!login(sc, "SCRAM-SHA-256", "bob", "bob-secret").ok);
    CHECK_OK(ksasl_credential_store_add_user(store, "bob", "bob-secret", 4096));
    outcome o = login(sc, "SCRAM-SHA-256", "bob", "bob-secret");
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:bob");
    CHECK_INT(o.lifetime_ms, 7000);
    CHECK_INT(o.client_lifetime_ms, 7000);
    CHECK(!login(sc, "SCRAM-SHA-256", "bob", "wrong").ok);
    /* PLAIN is INTERNAL's; SCRAM-SHA-512 is not enabled. */
    CHECK(!login(sc, "PLAIN", "alice", SECRET).ok);
    CHECK(!login(sc, "SCRAM-SHA-512", "bob", "bob-secret").ok);

    /* Unsecured OAUTHBEARER: a 60 s token, a session of at most 7 s. */
    o = login_oauthbearer(sc, "carol");
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:carol");
    CHECK_INT(o.lifetime_ms, 7000);
    CHECK_INT(o.client_lifetime_ms, 7000);
    ksasl_server_config_free(sc);

    /* Without a store no SCRAM user exists. */
    s = setup_text(BROKER, "EXTERNAL", NULL);
    sc = setup_config(s);
    CHECK(!login(sc, "SCRAM-SHA-256", "bob", "bob-secret").ok);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);
    ksasl_credential_store_free(store);
}

static void delegation_tokens(void) {
    int min = -1, max = -1;
    ksasl_server_setup *s = setup_text(BROKER_TOKENS, "EXTERNAL", NULL);
    ksasl_token_authority *a = setup_tokens(s);
    CHECK(a != NULL);
    /* Another handle on the same authority. */
    ksasl_token_authority *a2 = setup_tokens(s);
    CHECK(a2 != NULL && a2 != a);
    ksasl_server_config *sc = setup_config(s);
    ksasl_server_setup_free(s);
    for (int16_t key = 38; key <= 41; key++) {
        CHECK_INT(api_advertised(sc, key, &min, &max), 1);
    }
    CHECK_INT(api_advertised(sc, 17, &min, &max), 1);

    /* A token of the authority logs in (SCRAM, tokenauth) for its owner, and the other handle
     * sees it. */
    ksasl_delegation_token *t = NULL;
    if (a != NULL && a2 != NULL) {
        CHECK_OK(ksasl_token_authority_create(a, "User:dave", NULL, NULL, 0, 0, T0, &t));
    }
    if (t != NULL) {
        CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + 60000);
        ksasl_mechanism_registry *creg = NULL;
        CHECK_OK(ksasl_mechanism_registry_new(&creg));
        CHECK_OK(ksasl_mechanism_registry_add_token_clients(creg, ksasl_delegation_token_id(t),
                                                            ksasl_delegation_token_hmac_base64(t)));
        ksasl_client_config *cc = client_config_done(client_builder(creg, "SCRAM-SHA-256"));
        outcome o = authenticate(cc, sc, T0);
        CHECK(o.ok);
        CHECK_STR(o.principal, "User:dave");
        CHECK_INT(o.token, 1);
        /* Expired through the other handle: the listener refuses it. */
        int64_t expiry = 0;
        const uint8_t *hmac = NULL;
        size_t hmac_len = 0;
        CHECK_OK(ksasl_delegation_token_hmac(t, &hmac, &hmac_len));
        CHECK_OK(ksasl_token_authority_expire(a2, hmac, hmac_len, "User:dave", -1, T0, &expiry));
        CHECK(!authenticate(cc, sc, T0 + 1).ok);
        ksasl_client_config_free(cc);
        ksasl_mechanism_registry_free(creg);
        ksasl_delegation_token_free(t);
    }
    ksasl_token_authority_free(a);
    ksasl_token_authority_free(a2);
    ksasl_server_config_free(sc);

    /* Without the key: no authority, no token APIs. */
    s = setup_text(BROKER, "EXTERNAL", NULL);
    CHECK(setup_tokens(s) == NULL);
    sc = setup_config(s);
    CHECK_INT(api_advertised(sc, 38, &min, &max), 0);
    CHECK_INT(api_advertised(sc, 17, &min, &max), 1);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);
}

static void host_apis(void) {
    /* Metadata 0-12 and Produce 3-9, the host's. */
    const int64_t apis[] = {3, 0, 12, 0, 3, 9};
    int min = -1, max = -1;
    ksasl_server_setup *s = setup_full(BROKER, "INTERNAL", NULL, apis, 2);
    ksasl_server_config *sc = setup_config(s);
    CHECK_INT(api_advertised(sc, 3, &min, &max), 1);
    CHECK_INT(min, 0);
    CHECK_INT(max, 12);
    CHECK_INT(api_advertised(sc, 0, &min, &max), 1);
    CHECK_INT(min, 3);
    CHECK_INT(max, 9);
    CHECK_INT(api_advertised(sc, 17, &min, &max), 1);
    CHECK_INT(api_advertised(sc, 38, &min, &max), 0);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);

    /* With the token APIs as well. */
    s = setup_full(BROKER_TOKENS, "INTERNAL", NULL, apis, 2);
    sc = setup_config(s);
    CHECK_INT(api_advertised(sc, 3, &min, &max), 1);
    CHECK_INT(max, 12);
    CHECK_INT(api_advertised(sc, 40, &min, &max), 1);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);

    /* No APIs of the host: those of the file only. */
    s = setup_full(BROKER, "INTERNAL", NULL, NULL, 0);
    sc = setup_config(s);
    CHECK_INT(api_advertised(sc, 3, &min, &max), 0);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);
}

static void jwks(void) {
    ksasl_server_setup *s = setup_text(JWKS_BROKER, NULL, NULL);
    CHECK_STR(ksasl_server_setup_listener(s), "X");
    CHECK_STR(ksasl_server_setup_host(s), "");
    CHECK_INT(ksasl_server_setup_port(s), 9095);
    CHECK_INT(ksasl_server_setup_jwks_count(s), 1);
    CHECK_STR(ksasl_server_setup_jwks_url(s, 0), "http://127.0.0.1:1/jwks");
    CHECK_STR(ksasl_server_setup_jwks_url(s, 1), NULL);
    CHECK(setup_tokens(s) == NULL);
    ksasl_jwks_endpoint *e = NULL, *e2 = NULL;
    CHECK_OK(ksasl_server_setup_jwks_endpoint(s, 0, &e));
    CHECK(e != NULL);
    CHECK_OK(ksasl_server_setup_jwks_endpoint(s, 0, &e2));
    CHECK(e2 != NULL && e2 != e);
    CHECK_STR(ksasl_jwks_endpoint_last_error(e), "");
    CHECK_RC(ksasl_server_setup_jwks_endpoint(s, 1, &e2), KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_server_setup_last_error(s), "index 1") != NULL);
    ksasl_server_config *sc = setup_config(s);
    ksasl_server_setup_free(s);
    /* The endpoints and the configuration outlive the setup (nothing is fetched here). */
    ksasl_jwks_endpoint_free(e2);
    ksasl_jwks_endpoint_free(e);
    ksasl_server_config_free(sc);
}

static void choosing(void) {
    /* NULL: the only SASL listener, as written in `listeners`. */
    ksasl_server_setup *s = setup_text(
        "listeners=PLAINTEXT://:9092,Inside://localhost:9093\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INSIDE:SASL_PLAINTEXT\n"
        "sasl.enabled.mechanisms=PLAIN\n"
        "listener.name.inside.plain.sasl.jaas.config=" JAAS_PLAIN "user_alice=\"alice-secret\";\n",
        NULL, NULL);
    CHECK_STR(ksasl_server_setup_listener(s), "Inside");
    CHECK_STR(ksasl_server_setup_host(s), "localhost");
    CHECK_INT(ksasl_server_setup_port(s), 9093);
    ksasl_server_config *sc = setup_config(s);
    outcome o = login(sc, "PLAIN", "alice", SECRET);
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:alice");
    /* No connections.max.reauth.ms: no session lifetime. */
    CHECK_INT(o.lifetime_ms, 0);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);

    /* Several: the choices are named. */
    invalid(BROKER, NULL, "INTERNAL, EXTERNAL");
    /* Not a SASL listener of the file. */
    invalid(BROKER, "CONTROLLER", "CONTROLLER");
    CHECK(strstr(ksasl_last_constructor_error(), "INTERNAL, EXTERNAL") != NULL);
    invalid(BROKER, "nowhere", "nowhere");

    /* A snippet without `listeners`: any name, no address; NULL has nothing to choose from. */
    const char *snippet = "sasl.enabled.mechanisms=PLAIN\n"
                          "listener.name.l.plain.sasl.jaas.config=" JAAS_PLAIN
                          "user_alice=\"alice-secret\";\n";
    s = setup_text(snippet, "L", NULL);
    CHECK_STR(ksasl_server_setup_listener(s), "L");
    CHECK_STR(ksasl_server_setup_host(s), NULL);
    CHECK_INT(ksasl_server_setup_port(s), -1);
    sc = setup_config(s);
    CHECK(login(sc, "PLAIN", "alice", SECRET).ok);
    ksasl_server_config_free(sc);
    ksasl_server_setup_free(s);
    invalid(snippet, NULL, "listeners");
}

static void failures(void) {
    invalid(BROKER "listener.name.internal.plain.connections.max.reauth.ms=soon\n", "INTERNAL",
            "listener.name.internal.plain.connections.max.reauth.ms");
    /* A JAAS text without its ';': the error quotes none of it. */
    invalid("sasl.enabled.mechanisms=PLAIN\n"
            "listener.name.l.plain.sasl.jaas.config=" JAAS_PLAIN "user_alice=\"alice-secret\"\n",
            "L", "listener.name.l.plain.sasl.jaas.config");
    invalid("listeners=INTERNAL://127.0.0.1:port\n"
            "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT\n"
            "sasl.enabled.mechanisms=PLAIN\n"
            "listener.name.internal.plain.sasl.jaas.config=" JAAS_PLAIN
            "user_alice=\"alice-secret\";\n",
            "INTERNAL", "listeners");
    invalid(BROKER_TOKENS "delegation.token.max.lifetime.ms=forever\n", "INTERNAL",
            "delegation.token.max.lifetime.ms");
    /* The host's APIs: a range the builder refuses. */
    const int64_t bad_apis[] = {3, 12, 0};
    ksasl_server_setup *s = NULL;
    CHECK_RC(ksasl_server_setup_new((const uint8_t *)BROKER, strlen(BROKER), "INTERNAL", NULL,
                                    bad_apis, 1, &s),
             KSASL_INVALID_CONFIG);
    CHECK(s == NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "API 3") != NULL);

    /* GSSAPI: the keytab is read when the setup is built; whatever the code (a host without
     * a GSSAPI library fails differently), the listener and the mechanism are named. */
    const char gssapi[] =
        "listeners=K://:9096\nlistener.security.protocol.map=K:SASL_PLAINTEXT\n"
        "sasl.enabled.mechanisms=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        "listener.name.k.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule "
        "required useKeyTab=true storeKey=true keyTab=\"/nonexistent/ksasl/kafka.keytab\" "
        "principal=\"kafka/broker.example.com@EXAMPLE.COM\";\n";
    s = NULL;
    CHECK(ksasl_server_setup_new((const uint8_t *)gssapi, sizeof gssapi - 1, NULL, NULL, NULL, 0,
                                 &s) != KSASL_OK);
    CHECK(s == NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "listener K: GSSAPI: ") != NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "/nonexistent/ksasl/kafka.keytab") != NULL ||
          !ksasl_gssapi_available());

    /* Bytes that are not UTF-8 are ISO-8859-1. */
    const char latin1[] = "sasl.enabled.mechanisms=PLAIN\n"
                          "listener.name.l.plain.sasl.jaas.config=" JAAS_PLAIN
                          "user_caf\xe9=\"p\";\n";
    s = NULL;
    CHECK_OK(ksasl_server_setup_new((const uint8_t *)latin1, sizeof latin1 - 1, "L", NULL, NULL, 0,
                                    &s));
    ksasl_server_config *sc = setup_config(s);
    CHECK(login(sc, "PLAIN", "caf\xc3\xa9", "p").ok);
    ksasl_server_config_free(sc);

    /* Arguments. */
    ksasl_server_setup *n = NULL;
    ksasl_server_config *c = NULL;
    ksasl_token_authority *a = NULL;
    ksasl_jwks_endpoint *e = NULL;
    const uint8_t *text = (const uint8_t *)BROKER;
    CHECK_RC(ksasl_server_setup_new(NULL, 3, "INTERNAL", NULL, NULL, 0, &n), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_last_constructor_error(), "text") != NULL);
    CHECK_RC(ksasl_server_setup_new(text, strlen(BROKER), "INTERNAL", NULL, NULL, 0, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_setup_new(text, strlen(BROKER), "INTERNAL", NULL, NULL, 1, &n),
             KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_last_constructor_error(), "apis") != NULL);
    CHECK(ksasl_server_setup_new(text, strlen(BROKER), "\xff", NULL, NULL, 0, &n) != KSASL_OK);
    CHECK(n == NULL);
    /* Nothing at all: no listener to read. */
    CHECK_RC(ksasl_server_setup_new(NULL, 0, NULL, NULL, NULL, 0, &n), KSASL_INVALID_CONFIG);
    CHECK(n == NULL);
    CHECK_RC(ksasl_server_setup_config(s, NULL), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_server_setup_last_error(s), "out") != NULL);
    CHECK_RC(ksasl_server_setup_tokens(s, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_setup_jwks_endpoint(s, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_setup_jwks_endpoint(s, 0, &e), KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_server_setup_last_error(s), "0 JWKS endpoints") != NULL);
    ksasl_server_setup_free(s);
    CHECK_RC(ksasl_server_setup_config(NULL, &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_setup_tokens(NULL, &a), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_setup_jwks_endpoint(NULL, 0, &e), KSASL_NULL_ARGUMENT);
    CHECK(c == NULL && a == NULL && e == NULL);
    CHECK_INT(ksasl_server_setup_jwks_count(NULL), 0);
    CHECK_STR(ksasl_server_setup_jwks_url(NULL, 0), NULL);
    CHECK_STR(ksasl_server_setup_listener(NULL), NULL);
    CHECK_STR(ksasl_server_setup_host(NULL), NULL);
    CHECK_INT(ksasl_server_setup_port(NULL), -1);
    CHECK_STR(ksasl_server_setup_last_error(NULL), "");
    ksasl_server_setup_free(NULL);
}

void test_server_setup(void) {
    internal_listener();
    external_listener();
    delegation_tokens();
    host_apis();
    jwks();
    choosing();
    failures();
}
