/*
 * Hostile input: random and mutated messages and frames for every parser reachable from C
 * (server and client exchanges of every mechanism, both Kafka drivers, JWKS documents). The
 * library must answer with an error code or carry on, never crash, never report a panic, and
 * (under valgrind / ASan) never touch memory it should not. A fixed seed (the library's own
 * nonces still vary, so the number of checks varies a little from run to run).
 */
#include <stdlib.h>

#include "check.h"

#define NOW ((int64_t)1700000000000)

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void) {
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* Fills `out` with a mutation of `seed` (or random bytes); returns the length. */
static size_t mutate(const uint8_t *seed, size_t seed_len, uint8_t *out, size_t cap) {
    size_t len;
    uint64_t how = rnd() % 4;
    if (seed_len == 0 || how == 0) {
        len = (size_t)(rnd() % (cap < 64 ? cap : 64));
        for (size_t i = 0; i < len; i++) {
            out[i] = (uint8_t)rnd();
        }
        return len;
    }
    len = seed_len < cap ? seed_len : cap;
    memcpy(out, seed, len);
    if (how == 1) { /* flip a few bytes */
        for (int k = 0; k < 1 + (int)(rnd() % 3); k++) {
            out[rnd() % len] = (uint8_t)rnd();
        }
    } else if (how == 2) { /* truncate */
        len = (size_t)(rnd() % len);
    } else { /* insert a structural byte */
        static const uint8_t specials[] = {',', '=', 0, 0x01, '"', '{', '}', 0xff, 0x80};
        out[rnd() % len] = specials[rnd() % sizeof specials];
    }
    return len;
}

static void no_panic(ksasl_result rc) {
    CHECK(rc != KSASL_PANIC);
    CHECK(rc != KSASL_INTERNAL);
    CHECK(rc == KSASL_OK || strcmp(ksasl_result_name(rc), "UNKNOWN") != 0);
}

static void fuzz_exchanges(ksasl_mechanism_registry *creg, ksasl_mechanism_registry *sreg) {
    static const char *const mechs[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                        "OAUTHBEARER"};
    uint8_t msg[1024];
    for (size_t m = 0; m < sizeof mechs / sizeof mechs[0]; m++) {
        for (int iter = 0; iter < 150; iter++) {
            ksasl_client_exchange *c = NULL;
            ksasl_server_exchange *s = NULL;
            const uint8_t *out = NULL;
            size_t len = 0, n;
            int done = 0;
            ksasl_server_step_kind st = 0;
            buf first = {0}, challenge = {0};
            CHECK_OK(ksasl_client_exchange_new(creg, mechs[m], &c));
            CHECK_OK(ksasl_server_exchange_new(sreg, mechs[m], &s));
            CHECK_OK(ksasl_client_exchange_start(c, NOW, &out, &len, &done));
            buf_append(&first, out, len);
            /* The server gets a mutated first message. */
            n = mutate(first.data, first.len, msg, sizeof msg);
            ksasl_result rc = ksasl_server_exchange_step(s, msg, n, NOW, &st, &out, &len);
            no_panic(rc);
            if (rc == KSASL_OK && st == KSASL_SERVER_STEP_CHALLENGE) {
                buf_append(&challenge, out, len);
                /* A second, random, message. */
                n = mutate(challenge.data, challenge.len, msg, sizeof msg);
                no_panic(ksasl_server_exchange_step(s, msg, n, NOW, &st, &out, &len));
            } else if (rc != KSASL_OK) {
                CHECK(strlen(ksasl_server_exchange_client_message(s)) > 0);
            }
            /* The client gets a mutated challenge from a real server. */
            {
                ksasl_server_exchange *real = NULL;
                CHECK_OK(ksasl_server_exchange_new(sreg, mechs[m], &real));
                rc = ksasl_server_exchange_step(real, first.data, first.len, NOW, &st, &out, &len);
                CHECK_OK(rc);
                if (rc == KSASL_OK && out != NULL) {
                    buf_clear(&challenge);
                    buf_append(&challenge, out, len);
                    n = mutate(challenge.data, challenge.len, msg, sizeof msg);
                    rc = ksasl_client_exchange_step(c, msg, n, NOW, &out, &len, &done);
                    no_panic(rc);
                }
                ksasl_server_exchange_free(real);
            }
            no_panic(ksasl_client_exchange_server_failed(
                c, (const char *)"{\"status\":\"invalid_token\"}"));
            buf_free(&first);
            buf_free(&challenge);
            ksasl_client_exchange_free(c);
            ksasl_server_exchange_free(s);
        }
    }
}

static void fuzz_frames(ksasl_mechanism_registry *creg, ksasl_mechanism_registry *sreg) {
    ksasl_client_config *cc = NULL;
    ksasl_server_config *sc = NULL;
    uint8_t frame[512];
    cc = client_config_done(client_builder(creg, "SCRAM-SHA-256"));
    sc = server_config_done(server_builder(sreg));
    for (int iter = 0; iter < 300; iter++) {
        ksasl_client_connection *c = NULL;
        ksasl_server_connection *s = NULL;
        const uint8_t *out = NULL;
        size_t len = 0, n;
        buf wire = {0}, req = {0}, resp = {0};
        ksasl_server_action act = 0;
        ksasl_client_event ev = 0;
        const uint8_t *app = NULL;
        size_t app_len = 0;
        int64_t dl = 0;
        CHECK_OK(ksasl_client_connection_new(cc, &c));
        CHECK_OK(ksasl_server_connection_new(sc, &s));
        CHECK_OK(ksasl_client_connection_start(c, NOW));
        CHECK_OK(ksasl_client_connection_transmit(c, &out, &len));
        buf_append(&wire, out, len);
        CHECK(buf_take_frame(&wire, &req));
        /* A mutated ApiVersions request to the server. */
        n = mutate(req.data, req.len, frame, sizeof frame);
        CHECK_OK(ksasl_server_connection_handle_frame(s, frame, n, NOW, &act, &out, &len, &dl));
        CHECK(act <= KSASL_SERVER_ACTION_CLOSE_NOW);
        /* A mutated ApiVersions response to the client. */
        {
            ksasl_server_connection *real = NULL;
            CHECK_OK(ksasl_server_connection_new(sc, &real));
            CHECK_OK(ksasl_server_connection_handle_frame(real, req.data, req.len, NOW, &act, &out,
                                                          &len, &dl));
            buf_append(&resp, out, len);
            ksasl_server_connection_free(real);
        }
        buf_clear(&wire);
        buf_append(&wire, resp.data, resp.len);
        if (buf_take_frame(&wire, &req)) {
            n = mutate(req.data, req.len, frame, sizeof frame);
            no_panic(ksasl_client_connection_handle_frame(c, frame, n, NOW, &ev, &app, &app_len));
        }
        no_panic(ksasl_client_connection_closed(c, NOW));
        buf_free(&wire);
        buf_free(&req);
        buf_free(&resp);
        ksasl_client_connection_free(c);
        ksasl_server_connection_free(s);
    }
    /* An oversized frame. */
    {
        ksasl_server_connection *s = NULL;
        ksasl_server_action act = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        int64_t dl = 0;
        size_t big = 512 * 1024 + 1;
        uint8_t *b = calloc(big, 1);
        CHECK(b != NULL);
        CHECK_OK(ksasl_server_connection_new(sc, &s));
        if (b != NULL) {
            CHECK_OK(ksasl_server_connection_handle_frame(s, b, big, NOW, &act, &out, &len, &dl));
            CHECK_INT(act, KSASL_SERVER_ACTION_FAIL_AT);
            CHECK(strstr(ksasl_server_connection_last_error(s), "MESSAGE_TOO_LARGE") != NULL);
        }
        free(b);
        ksasl_server_connection_free(s);
    }
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
}

static void fuzz_jwks(void) {
    static const char seed[] =
        "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"sK0n-Kz8qO6BbCIkFpWd286d2xRJj0cwKsbg"
        "ddL24H8\",\"y\":\"oYmBCskBhUyQskK_7F2WEIEngbE0om6aCUCqY6hAazo\",\"kid\":\"ec256-1\","
        "\"use\""
        ":\"sig\"}]}";
    ksasl_jwks_validator *v = NULL;
    char doc[sizeof seed];
    CHECK_OK(ksasl_jwks_validator_new(NULL, NULL, &v));
    CHECK_OK(ksasl_jwks_validator_set_jwks(v, seed, NOW));
    for (int iter = 0; iter < 300; iter++) {
        size_t n = mutate((const uint8_t *)seed, sizeof seed - 1, (uint8_t *)doc, sizeof doc - 1);
        doc[n] = '\0'; /* an embedded NUL only shortens the string */
        no_panic(ksasl_jwks_validator_set_jwks(v, doc, NOW));
    }
    ksasl_jwks_validator_free(v);
}

void test_fuzz(void) {
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL, *creg = NULL;
    ksasl_refresher *refresher = NULL;
    ksasl_oauth_token *t = NULL;

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(sreg, NULL, 0));
    CHECK_OK(ksasl_refresher_new(NULL, &refresher));
    CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW, &t));
    CHECK_OK(ksasl_refresher_set_token(refresher, ksasl_oauth_token_value(t),
                                       ksasl_oauth_token_expiry_ms(t), "alice", NULL, NULL, 0,
                                       NOW));
    ksasl_oauth_token_free(t);
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(creg, "alice", "alice-secret"));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_client(creg, refresher));

    fuzz_exchanges(creg, sreg);
    fuzz_frames(creg, sreg);
    fuzz_jwks();

    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(creg);
    ksasl_refresher_free(refresher);
    ksasl_credential_store_free(store);
}
