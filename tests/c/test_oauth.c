/*
 * OAUTHBEARER: unsecured tokens, the unsecured validator (scope), a host validator callback
 * (accept / reject / no verdict), and JWKS validators (tests/vectors/jwt.json).
 */
#include <stdlib.h>

#include "check.h"

#define NOW ((int64_t)1700000000000)

static const char INVALID_TOKEN_JSON[] = "{\"status\":\"invalid_token\"}";

/* A client registry presenting `token` (principal `principal`, expiring at `expiry`). */
static ksasl_mechanism_registry *token_client(ksasl_refresher **refresher, const char *token,
                                              const char *principal, int64_t expiry, int64_t now) {
    ksasl_mechanism_registry *r = NULL;
    CHECK_OK(ksasl_refresher_new(NULL, refresher));
    CHECK_INT(ksasl_refresher_poll(*refresher, now), 1);
    CHECK_OK(ksasl_refresher_set_token(*refresher, token, expiry, principal, NULL, NULL, 0, now));
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_client(r, *refresher));
    return r;
}

static void tokens(void) {
    ksasl_oauth_token *t = NULL;
    const char *v;
    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, "kafka.read kafka.write", NOW, &t));
    v = ksasl_oauth_token_value(t);
    CHECK(v != NULL);
    if (v != NULL) {
        /* {"alg":"none"} header, a payload, an empty signature. */
        CHECK(strncmp(v, "eyJhbGciOiJub25lIn0.", 20) == 0);
        CHECK(v[strlen(v) - 1] == '.');
        CHECK(strchr(v + 20, '.') == v + strlen(v) - 1);
    }
    CHECK_INT(ksasl_oauth_token_expiry_ms(t), NOW + 3600000);
    ksasl_oauth_token_free(t);
    t = NULL;
    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 1, NULL, NOW, &t));
    CHECK_INT(ksasl_oauth_token_expiry_ms(t), NOW + 1000);
    ksasl_oauth_token_free(t);
}

static void unsecured_server(void) {
    ksasl_mechanism_registry *sreg = NULL, *scoped = NULL, *creg = NULL, *creg_scope = NULL;
    ksasl_refresher *rf = NULL, *rf_scope = NULL;
    ksasl_oauth_token *t = NULL, *ts = NULL;
    exchange x;

    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(sreg, NULL, 0));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(sreg, 1), 1);
    CHECK_OK(ksasl_mechanism_registry_new(&scoped));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(scoped, "kafka.read", 1000));

    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW, &t));
    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, "kafka.read kafka.write", NOW, &ts));
    creg =
        token_client(&rf, ksasl_oauth_token_value(t), "alice", ksasl_oauth_token_expiry_ms(t), NOW);
    creg_scope = token_client(&rf_scope, ksasl_oauth_token_value(ts), "alice",
                              ksasl_oauth_token_expiry_ms(ts), NOW);

    exchange_run(&x, creg, sreg, "OAUTHBEARER", NULL, NOW + 10);
    CHECK(exchange_ok(&x));
    {
        const char *p = NULL, *n = NULL, *m = NULL;
        int64_t e = 0;
        int tok = -1;
        CHECK_OK(ksasl_server_exchange_outcome(x.server, &p, &n, &m, &e, &tok, NULL, NULL));
        CHECK_STR(p, "User:alice");
        CHECK_STR(n, "alice");
        CHECK_STR(m, "OAUTHBEARER");
        CHECK_INT(e, NOW + 3600000);
        CHECK_INT(tok, 0);
    }
    exchange_free(&x);

    /* The required scope: missing → insufficient_scope; present → accepted. */
    exchange_run(&x, creg, scoped, "OAUTHBEARER", NULL, NOW + 10);
    CHECK(!exchange_ok(&x));
    CHECK_RC(x.server_rc, KSASL_INSUFFICIENT_SCOPE);
    CHECK(bytes_contain(x.challenge.data, x.challenge.len, "\"status\":\"insufficient_scope\""));
    CHECK_RC(x.client_rc, KSASL_SERVER_REJECTED_AUTHENTICATION);
    exchange_free(&x);
    exchange_run(&x, creg_scope, scoped, "OAUTHBEARER", NULL, NOW + 10);
    CHECK(exchange_ok(&x));
    exchange_free(&x);

    /* An expired token: the refresher no longer offers it. */
    exchange_run(&x, creg, sreg, "OAUTHBEARER", NULL, NOW + 3600000);
    CHECK_RC(x.client_rc, KSASL_NO_VALID_CREDENTIAL);
    exchange_free(&x);

    /* A token the server judges at a later time than the client: expired. */
    {
        ksasl_client_exchange *c = NULL;
        ksasl_server_exchange *s = NULL;
        const uint8_t *out = NULL;
        size_t len = 0;
        int done = 0;
        ksasl_server_step_kind st = 0;
        buf first = {0};
        CHECK_OK(ksasl_client_exchange_new(creg, "OAUTHBEARER", &c));
        CHECK_OK(ksasl_server_exchange_new(sreg, "OAUTHBEARER", &s));
        CHECK_OK(ksasl_client_exchange_start(c, NOW, &out, &len, &done));
        CHECK_INT(done, 0);
        CHECK(bytes_contain(out, len, "auth=Bearer eyJ"));
        buf_append(&first, out, len);
        CHECK_OK(
            ksasl_server_exchange_step(s, first.data, first.len, NOW + 7200000, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_CHALLENGE);
        CHECK(len == strlen(INVALID_TOKEN_JSON) && memcmp(out, INVALID_TOKEN_JSON, len) == 0);
        buf_clear(&first);
        buf_append(&first, out, len);
        CHECK_OK(ksasl_client_exchange_step(c, first.data, first.len, NOW, &out, &len, &done));
        CHECK(len == 1 && out[0] == 0x01);
        CHECK_RC(ksasl_server_exchange_step(s, out, len, NOW + 7200000, &st, &out, &len),
                 KSASL_TOKEN_EXPIRED);
        CHECK_STR(ksasl_server_exchange_client_message(s), INVALID_TOKEN_JSON);
        CHECK_RC(ksasl_client_exchange_server_failed(c, ksasl_server_exchange_client_message(s)),
                 KSASL_SERVER_REJECTED_AUTHENTICATION);
        CHECK(strstr(ksasl_client_exchange_last_error(c), "invalid_token") != NULL);
        buf_free(&first);
        ksasl_client_exchange_free(c);
        ksasl_server_exchange_free(s);
    }

    /* Malformed client messages. */
    {
        ksasl_server_exchange *s = NULL;
        const uint8_t *out = NULL;
        size_t len = 0;
        ksasl_server_step_kind st = 0;
        CHECK_OK(ksasl_server_exchange_new(sreg, "OAUTHBEARER", &s));
        CHECK(ksasl_server_exchange_step(s, (const uint8_t *)"n,,garbage", 10, NOW, &st, &out,
                                         &len) != KSASL_OK);
        CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)"n,,", 3, NOW, &st, &out, &len),
                 KSASL_STEP_AFTER_FAILURE);
        ksasl_server_exchange_free(s);
    }

    ksasl_oauth_token_free(t);
    ksasl_oauth_token_free(ts);
    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(scoped);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(creg_scope);
    ksasl_refresher_free(rf);
    ksasl_refresher_free(rf_scope);
}

/* The host's validator: accepts exactly one token (as "bob", expiring at `expiry`). */
typedef struct {
    counter count;
    const char *accepted;
    int64_t expiry;
    int rc;         /* returned after a verdict */
    int no_verdict; /* return without a verdict */
    const char *principal; /* accepted as (NULL: "bob") */
    int64_t last_now;
} validator;

static int validator_cb(void *userdata, const char *token, int64_t now_ms,
                        ksasl_oauth_verdict *verdict) {
    validator *v = userdata;
    v->count.calls++;
    v->last_now = now_ms;
    if (v->no_verdict) {
        return v->rc;
    }
    if (strcmp(token, v->accepted) == 0) {
        CHECK_OK(ksasl_oauth_verdict_accept(verdict, v->principal ? v->principal : "bob",
                                            v->expiry));
    } else {
        CHECK_OK(ksasl_oauth_verdict_reject(verdict, "not the one"));
    }
    return v->rc;
}

static void validator_free(void *userdata) {
    validator *v = userdata;
    v->count.frees++;
}

static void callback_server(void) {
    ksasl_mechanism_registry *sreg = NULL, *good = NULL, *other = NULL;
    ksasl_refresher *rf_good = NULL, *rf_other = NULL;
    ksasl_oauth_token *t1 = NULL, *t2 = NULL;
    validator v;
    exchange x;

    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW, &t1));
    CHECK_OK(ksasl_oauth_token_new_unsecured("mallory", 3600, NULL, NOW, &t2));
    memset(&v, 0, sizeof v);
    v.accepted = ksasl_oauth_token_value(t1);
    v.expiry = NOW + 60000;
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_callback_server(sreg, validator_cb, &v,
                                                                      validator_free));
    good = token_client(&rf_good, ksasl_oauth_token_value(t1), "alice",
                        ksasl_oauth_token_expiry_ms(t1), NOW);
    other = token_client(&rf_other, ksasl_oauth_token_value(t2), "mallory",
                         ksasl_oauth_token_expiry_ms(t2), NOW);

    /* The accepted token: the principal and expiry are the callback's. */
    exchange_run(&x, good, sreg, "OAUTHBEARER", NULL, NOW + 5);
    CHECK(exchange_ok(&x));
    CHECK_INT(v.count.calls, 1);
    CHECK_INT(v.last_now, NOW + 5);
    {
        const char *p = NULL;
        int64_t e = 0;
        CHECK_OK(ksasl_server_exchange_outcome(x.server, &p, NULL, NULL, &e, NULL, NULL, NULL));
        CHECK_STR(p, "User:bob");
        CHECK_INT(e, NOW + 60000);
    }
    exchange_free(&x);

    /* Any other token: the JSON error challenge, then the failure. */
    exchange_run(&x, other, sreg, "OAUTHBEARER", NULL, NOW + 5);
    CHECK(!exchange_ok(&x));
    CHECK_INT(v.count.calls, 2);
    CHECK(x.challenge.len == strlen(INVALID_TOKEN_JSON) &&
          memcmp(x.challenge.data, INVALID_TOKEN_JSON, x.challenge.len) == 0);
    CHECK_RC(x.server_rc, KSASL_TOKEN_REJECTED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), INVALID_TOKEN_JSON);
    CHECK(strstr(ksasl_server_exchange_last_error(x.server), "not the one") != NULL);
    CHECK_RC(x.client_rc, KSASL_SERVER_REJECTED_AUTHENTICATION);
    exchange_free(&x);

    /* A non-zero return rejects even an accepted token; no verdict rejects too. */
    v.rc = 5;
    exchange_run(&x, good, sreg, "OAUTHBEARER", NULL, NOW + 5);
    CHECK_RC(x.server_rc, KSASL_TOKEN_REJECTED);
    CHECK(strstr(ksasl_server_exchange_last_error(x.server), "5") != NULL);
    CHECK(x.challenge.len == strlen(INVALID_TOKEN_JSON));
    exchange_free(&x);
    v.rc = 0;
    v.no_verdict = 1;
    exchange_run(&x, good, sreg, "OAUTHBEARER", NULL, NOW + 5);
    CHECK_RC(x.server_rc, KSASL_TOKEN_REJECTED);
    exchange_free(&x);
    v.no_verdict = 0;
    /* Accepting the token for an empty principal rejects it: nobody is authenticated. */
    v.principal = "";
    exchange_run(&x, good, sreg, "OAUTHBEARER", NULL, NOW + 5);
    CHECK_RC(x.server_rc, KSASL_TOKEN_REJECTED);
    CHECK(strstr(ksasl_server_exchange_last_error(x.server), "empty principal") != NULL);
    exchange_free(&x);
    v.principal = NULL;

    /* The callback's userdata is freed once, after the registry and its servers. */
    {
        ksasl_server_exchange *held = NULL;
        CHECK_OK(ksasl_server_exchange_new(sreg, "OAUTHBEARER", &held));
        ksasl_mechanism_registry_free(sreg);
        CHECK_INT(v.count.frees, 0);
        ksasl_server_exchange_free(held);
        CHECK_INT(v.count.frees, 1);
    }

    /* A second OAUTHBEARER server replaces the first: its userdata is freed then. */
    {
        validator a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        a.accepted = b.accepted = ksasl_oauth_token_value(t1);
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_callback_server(sreg, validator_cb, &a,
                                                                          validator_free));
        CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_callback_server(sreg, validator_cb, &b,
                                                                          validator_free));
        CHECK_INT(a.count.frees, 1);
        exchange_run(&x, good, sreg, "OAUTHBEARER", NULL, NOW + 5);
        CHECK(exchange_ok(&x));
        CHECK_INT(a.count.calls, 0);
        CHECK_INT(b.count.calls, 1);
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg);
        CHECK_INT(b.count.frees, 1);
    }

    ksasl_mechanism_registry_free(good);
    ksasl_mechanism_registry_free(other);
    ksasl_refresher_free(rf_good);
    ksasl_refresher_free(rf_other);
    ksasl_oauth_token_free(t1);
    ksasl_oauth_token_free(t2);
}

/* tests/vectors/jwt.json: the "rsa-1" key and the "rs256" token, valid at now_ms. */
#define JWT_NOW ((int64_t)1795000000000)
#define JWT_EXP ((int64_t)1795003600000)
static const char JWKS_RSA1[] =
    "{\"keys\":[{\"kty\":\"RSA\",\"key_ops\":[\"verify\"],\"n\":\"lc3_PFVX8lrAySACKCdqXmVb1mGss"
    "20XzpLn0XCKnUceRycvCymTFRRQk4c8QJ2xMNEeg2amn8qbgd3g_tiDfMNLseLBL7TKYdlOAyNuzsL1S6Xx4sgPd9"
    "GzLj7qF1tsgtMSsT52Gtngty5F8-W_clPaHD81VSYCXBIDMMHy4_cg0KVMQhTQeCXl51gRkV9xHy7wDLa4usZXNee"
    "euHsXArL3H1sdzZLe_UOXyCoK6J_NRH0bvh9A_mZ3Rebl8D-f7xaRL9eiDmaqJnSxUgcayjb3Y6kMP6NptHqVDRck"
    "jlnNdHe172rlTXHupoPNEZjkgDHci7wL0MWYqNug8lXVMw\",\"e\":\"AQAB\",\"kid\":\"rsa-1\",\"use\":"
    "\"sig\"}]}";
static const char JWT_RS256[] =
    "eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0xIiwidHlwIjoiSldUIn0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcG"
    "xlLmNvbSIsImF1ZCI6ImthZmthLWNsdXN0ZXIiLCJzdWIiOiJhbGljZSIsImlhdCI6MTc5NDk5OTk5MCwiZXhwIjox"
    "Nzk1MDAzNjAwLCJzY29wZSI6WyJrYWZrYS5yZWFkIiwia2Fma2Eud3JpdGUiXX0.C3xlvIq5G3anBctKYmpk7DN7SU"
    "mspwWH16_n6moMKgkPebIPBScMnRBhhtfedTqyK3giScJO_2VJityC5iSNVv8q7yIDUHLUzy0mTOXuTPvbEV1ydk2Y"
    "oaCtyWP6oKoRyuH_k5uD2TSxU_sa5w0yseT6CYFLrJBm3mIhVuiXayfXxSNs2iojFY0dTHbeYgTyHJiygKA3iFlsJe"
    "HKoMKWE_bXu31Xsnd2lfCuOPTQLvuL_feigTMF5YqwilI5LnqkXFsWpOsQo3S6S1-N4FcLcgp5XxCSbgeXsDrk_V2y"
    "DnHcgaNG-ivT-VvQQx5Cg2GAiSxLK4t0V93Ue7VnV-awKQ";

static void jwks(void) {
    ksasl_jwks_validator *v = NULL, *other = NULL;
    ksasl_mechanism_registry *sreg = NULL, *creg = NULL, *creg_none = NULL, *sreg_wrong = NULL;
    ksasl_refresher *rf = NULL, *rf_none = NULL;
    ksasl_oauth_token *unsecured = NULL;
    exchange x;

    CHECK_OK(ksasl_jwks_validator_new("https://idp.example.com", "kafka-cluster", &v));
    CHECK_STR(ksasl_jwks_validator_last_error(v), "");
    CHECK_INT(ksasl_jwks_validator_next_refresh_ms(v), 0); /* nothing loaded: fetch now */
    /* Invalid documents. */
    CHECK_RC(ksasl_jwks_validator_set_jwks(v, "this is not json", JWT_NOW),
             KSASL_INVALID_CONFIG);
    CHECK(strlen(ksasl_jwks_validator_last_error(v)) > 0);
    CHECK(ksasl_jwks_validator_set_jwks(v, "{\"keys\":42}", JWT_NOW) != KSASL_OK);
    CHECK(ksasl_jwks_validator_set_jwks(v, "[]", JWT_NOW) != KSASL_OK);
    CHECK(ksasl_jwks_validator_set_jwks(v, "", JWT_NOW) != KSASL_OK);
    CHECK_INT(ksasl_jwks_validator_next_refresh_ms(v), 0);
    /* The vector's key. */
    CHECK_OK(ksasl_jwks_validator_set_jwks(v, JWKS_RSA1, JWT_NOW));
    CHECK(ksasl_jwks_validator_next_refresh_ms(v) > JWT_NOW);

    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_jwks_server(sreg, v));
    ksasl_jwks_validator_free(v); /* the registry keeps it alive */
    creg = token_client(&rf, JWT_RS256, "alice", JWT_EXP, JWT_NOW);
    exchange_run(&x, creg, sreg, "OAUTHBEARER", NULL, JWT_NOW);
    CHECK(exchange_ok(&x));
    {
        const char *p = NULL;
        int64_t e = 0;
        CHECK_OK(ksasl_server_exchange_outcome(x.server, &p, NULL, NULL, &e, NULL, NULL, NULL));
        CHECK_STR(p, "User:alice");
        CHECK_INT(e, JWT_EXP);
    }
    exchange_free(&x);

    /* An unsecured token is refused by a JWKS validator. */
    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, JWT_NOW, &unsecured));
    creg_none = token_client(&rf_none, ksasl_oauth_token_value(unsecured), "alice",
                             ksasl_oauth_token_expiry_ms(unsecured), JWT_NOW);
    exchange_run(&x, creg_none, sreg, "OAUTHBEARER", NULL, JWT_NOW);
    CHECK(!exchange_ok(&x));
    CHECK_RC(x.server_rc, KSASL_TOKEN_ALGORITHM_REFUSED);
    CHECK(x.challenge.len == strlen(INVALID_TOKEN_JSON));
    exchange_free(&x);

    /* A validator expecting another audience refuses the vector's token. */
    CHECK_OK(ksasl_jwks_validator_new(NULL, "another-cluster", &other));
    CHECK_OK(ksasl_jwks_validator_set_jwks(other, JWKS_RSA1, JWT_NOW));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg_wrong));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_jwks_server(sreg_wrong, other));
    exchange_run(&x, creg, sreg_wrong, "OAUTHBEARER", NULL, JWT_NOW);
    CHECK_RC(x.server_rc, KSASL_TOKEN_INVALID_AUDIENCE);
    exchange_free(&x);
    /* ... and with only another key, the key is unknown. An empty key set is refused. */
    {
        ksasl_jwks_validator *empty = NULL;
        ksasl_mechanism_registry *sreg_empty = NULL;
        CHECK_OK(ksasl_jwks_validator_new(NULL, NULL, &empty));
        CHECK_RC(ksasl_jwks_validator_set_jwks(empty, "{\"keys\":[]}", JWT_NOW),
                 KSASL_INVALID_CONFIG);
        CHECK_OK(ksasl_jwks_validator_set_jwks(
            empty,
            "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"sK0n-Kz8qO6BbCIkFpWd286d2"
            "xRJj0cwKsbgddL24H8\",\"y\":\"oYmBCskBhUyQskK_7F2WEIEngbE0om6aCUCqY6hAazo\",\"kid"
            "\":\"ec256-1\",\"use\":\"sig\"}]}",
            JWT_NOW));
        CHECK_OK(ksasl_mechanism_registry_new(&sreg_empty));
        CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_jwks_server(sreg_empty, empty));
        exchange_run(&x, creg, sreg_empty, "OAUTHBEARER", NULL, JWT_NOW);
        CHECK_RC(x.server_rc, KSASL_TOKEN_UNKNOWN_KEY);
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg_empty);
        ksasl_jwks_validator_free(empty);
    }

    ksasl_jwks_validator_free(other);
    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(sreg_wrong);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(creg_none);
    ksasl_refresher_free(rf);
    ksasl_refresher_free(rf_none);
    ksasl_oauth_token_free(unsecured);
}

/* SASL extensions from the refresher reach the server's message. */
static void extensions(void) {
    static const char *const names[] = {"traceId", "logicalCluster"};
    static const char *const values[] = {"abc-123", "lkc-1"};
    ksasl_refresher *r = NULL;
    ksasl_mechanism_registry *creg = NULL, *sreg = NULL;
    ksasl_oauth_token *t = NULL;
    ksasl_client_exchange *c = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    int done = 0;
    exchange x;

    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW, &t));
    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_OK(ksasl_refresher_set_token(r, ksasl_oauth_token_value(t),
                                       ksasl_oauth_token_expiry_ms(t), "alice", names, values, 2,
                                       NOW));
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_client(creg, r));
    CHECK_OK(ksasl_client_exchange_new(creg, "OAUTHBEARER", &c));
    CHECK_OK(ksasl_client_exchange_start(c, NOW, &out, &len, &done));
    CHECK(len > 3 && memcmp(out, "n,,\x01", 4) == 0);
    CHECK(bytes_contain(out, len, "\x01traceId=abc-123\x01"));
    CHECK(bytes_contain(out, len, "\x01logicalCluster=lkc-1\x01"));
    CHECK(len >= 2 && out[len - 1] == 0x01 && out[len - 2] == 0x01);
    ksasl_client_exchange_free(c);
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(sreg, NULL, 0));
    exchange_run(&x, creg, sreg, "OAUTHBEARER", NULL, NOW);
    CHECK(exchange_ok(&x));
    exchange_free(&x);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(sreg);
    ksasl_refresher_free(r);
    ksasl_oauth_token_free(t);
}

void test_oauth(void) {
    extensions();
    tokens();
    unsecured_server();
    callback_server();
    jwks();
}
