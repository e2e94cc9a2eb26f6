/*
 * Single SASL exchanges through ksasl_client_* and ksasl_server_*: stores, registries,
 * credential callbacks (including failures and KSASL_CREDENTIAL_ANSWER_LATER), the pull form,
 * wrong-state calls and use after a failed step.
 */
#include <stdlib.h>

#include "check.h"

static const char GENERIC_256[] = "Authentication failed during authentication due to invalid "
                                  "credentials with SASL mechanism SCRAM-SHA-256";
static const char GENERIC_512[] = "Authentication failed during authentication due to invalid "
                                  "credentials with SASL mechanism SCRAM-SHA-512";
static const char PLAIN_INVALID[] = "Authentication failed: Invalid username or password";
static const char PLAIN_UNVERIFIED[] =
    "Authentication failed: credentials for user could not be verified";

/* ---- the exchange driver ---- */

static void answer_pull(exchange *x, pull_answer *pull, int64_t now_ms, ksasl_result *rc,
                        ksasl_server_step_kind *st, const uint8_t **out, size_t *len) {
    const char *m = NULL, *u = NULL;
    int ta = -1;
    CHECK(pull != NULL);
    if (pull == NULL) {
        *rc = KSASL_INTERNAL;
        return;
    }
    pull->pulls++;
    CHECK_OK(ksasl_server_exchange_credential_request(x->server, &m, &u, &ta));
    if (m != NULL && u != NULL) {
        snprintf(pull->mechanism, sizeof pull->mechanism, "%s", m);
        snprintf(pull->username, sizeof pull->username, "%s", u);
    }
    pull->token_auth = ta;
    *rc = ksasl_server_exchange_provide_credential(x->server, pull->kind, pull->value,
                                                   pull->expiry_ms, pull->token_owner, now_ms, st,
                                                   out, len);
}

void exchange_run(exchange *x, const ksasl_mechanism_registry *creg,
                  const ksasl_mechanism_registry *sreg, const char *mechanism, pull_answer *pull,
                  int64_t now_ms) {
    const uint8_t *out = NULL;
    size_t len = 0;
    int done = 0;
    buf msg = {0};
    ksasl_result rc;

    memset(x, 0, sizeof *x);
    CHECK_OK(ksasl_client_exchange_new(creg, mechanism, &x->client));
    CHECK_OK(ksasl_server_exchange_new(sreg, mechanism, &x->server));
    if (x->client == NULL || x->server == NULL) {
        x->client_rc = x->server_rc = KSASL_INTERNAL;
        return;
    }
    rc = ksasl_client_exchange_start(x->client, now_ms, &out, &len, &done);
    if (rc != KSASL_OK) {
        x->client_rc = rc;
        return;
    }
    buf_append(&msg, out, len);
    x->client_done = done;
    for (int round = 0; round < 8; round++) {
        ksasl_server_step_kind st = 0;
        rc = ksasl_server_exchange_step(x->server, msg.data, msg.len, now_ms, &st, &out, &len);
        while (rc == KSASL_OK && st == KSASL_SERVER_STEP_NEED_CREDENTIAL) {
            CHECK(out == NULL && len == 0);
            answer_pull(x, pull, now_ms, &rc, &st, &out, &len);
        }
        if (rc != KSASL_OK) {
            x->server_rc = rc;
            /* The broker tells the client what failed, as Kafka does. */
            x->client_rc = ksasl_client_exchange_server_failed(
                x->client, ksasl_server_exchange_client_message(x->server));
            CHECK(x->client_rc != KSASL_OK);
            break;
        }
        buf_clear(&msg);
        if (out != NULL) {
            buf_append(&msg, out, len);
        }
        if (st == KSASL_SERVER_STEP_DONE) {
            x->server_done = 1;
            if (!x->client_done) {
                /* The server's final message (SCRAM's v=..., OAUTHBEARER's empty one). */
                CHECK(out != NULL);
                rc = ksasl_client_exchange_step(x->client, msg.data, msg.len, now_ms, &out, &len,
                                                &done);
                if (rc != KSASL_OK) {
                    x->client_rc = rc;
                    break;
                }
                CHECK(out == NULL && len == 0);
                x->client_done = done;
            }
            break;
        }
        CHECK_INT(st, KSASL_SERVER_STEP_CHALLENGE);
        CHECK(out != NULL);
        buf_clear(&x->challenge);
        buf_append(&x->challenge, msg.data, msg.len);
        if (x->client_done) {
            x->client_rc = KSASL_INTERNAL;
            CHECK(!"a challenge after the client completed");
            break;
        }
        rc = ksasl_client_exchange_step(x->client, msg.data, msg.len, now_ms, &out, &len, &done);
        if (rc != KSASL_OK) {
            x->client_rc = rc;
            break;
        }
        buf_clear(&msg);
        buf_append(&msg, out, len);
        x->client_done = done;
    }
    buf_free(&msg);
}

int exchange_ok(const exchange *x) {
    return x->client_rc == KSASL_OK && x->server_rc == KSASL_OK && x->client_done &&
           x->server_done;
}

void exchange_free(exchange *x) {
    ksasl_client_exchange_free(x->client);
    ksasl_server_exchange_free(x->server);
    buf_free(&x->challenge);
    memset(x, 0, sizeof *x);
}

/* Checks a successful exchange's outcome. */
static void check_outcome(ksasl_server_exchange *s, const char *principal, const char *name,
                          const char *mechanism, int64_t expiry, int token) {
    const char *p = NULL, *n = NULL, *m = NULL;
    int64_t e = 0;
    int t = -1;
    CHECK_OK(ksasl_server_exchange_outcome(s, &p, &n, &m, &e, &t, NULL, NULL));
    CHECK_STR(p, principal);
    CHECK_STR(n, name);
    CHECK_STR(m, mechanism);
    CHECK_INT(e, expiry);
    CHECK_INT(t, token);
}

static const char *const PASSWORD_MECHS[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};

/* ---- store-backed servers ---- */

static void store_logins(void) {
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL, *good = NULL, *bad = NULL, *nobody = NULL;
    exchange x;

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
    CHECK_OK(ksasl_mechanism_registry_new(&good));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(good, "alice", "alice-secret"));
    CHECK_OK(ksasl_mechanism_registry_new(&bad));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(bad, "alice", "wrong"));
    CHECK_OK(ksasl_mechanism_registry_new(&nobody));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(nobody, "bob", "bob-secret"));

    for (size_t i = 0; i < 3; i++) {
        const char *mech = PASSWORD_MECHS[i];
        const uint8_t *out = NULL;
        size_t len = 0;
        int done = 0;
        ksasl_server_step_kind st = 0;

        exchange_run(&x, good, sreg, mech, NULL, 1000);
        CHECK(exchange_ok(&x));
        check_outcome(x.server, "User:alice", "alice", mech, -1, 0);
        CHECK_STR(ksasl_server_exchange_client_message(x.server), "");
        /* Steps after completion. */
        CHECK_RC(ksasl_server_exchange_step(x.server, (const uint8_t *)"x", 1, 0, &st, &out, &len),
                 KSASL_STEP_AFTER_DONE);
        CHECK_RC(
            ksasl_client_exchange_step(x.client, (const uint8_t *)"x", 1, 0, &out, &len, &done),
            KSASL_STEP_AFTER_DONE);
        CHECK_RC(ksasl_client_exchange_start(x.client, 0, &out, &len, &done),
                 KSASL_STEP_AFTER_DONE);
        exchange_free(&x);

        /* A wrong password: an authentication error, then no more steps. */
        exchange_run(&x, bad, sreg, mech, NULL, 1000);
        CHECK(!exchange_ok(&x));
        CHECK_RC(x.server_rc, KSASL_INVALID_CREDENTIALS);
        CHECK_STR(ksasl_result_kind(x.server_rc), "authentication");
        CHECK_STR(ksasl_server_exchange_client_message(x.server), i == 0 ? PLAIN_INVALID
                                                         : i == 1 ? GENERIC_256
                                                                  : GENERIC_512);
        CHECK(strlen(ksasl_server_exchange_last_error(x.server)) > 0);
        CHECK(strstr(ksasl_server_exchange_last_error(x.server), "wrong") == NULL);
        CHECK(strlen(ksasl_client_exchange_last_error(x.client)) > 0);
        CHECK_RC(ksasl_server_exchange_step(x.server, (const uint8_t *)"x", 1, 0, &st, &out, &len),
                 KSASL_STEP_AFTER_FAILURE);
        CHECK_RC(ksasl_server_exchange_step(x.server, NULL, 0, 0, &st, &out, &len),
                 KSASL_STEP_AFTER_FAILURE);
        CHECK_RC(ksasl_server_exchange_outcome(x.server, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 KSASL_WRONG_STATE);
        /* The client was told of the failure (ksasl_client_exchange_server_failed). */
        CHECK_RC(
            ksasl_client_exchange_step(x.client, (const uint8_t *)"x", 1, 0, &out, &len, &done),
            KSASL_STEP_AFTER_FAILURE);
        CHECK_RC(ksasl_client_exchange_server_failed(x.client, NULL), x.client_rc);
        exchange_free(&x);

        /* An unknown user. */
        exchange_run(&x, nobody, sreg, mech, NULL, 1000);
        CHECK_RC(x.server_rc, KSASL_UNKNOWN_USER);
        CHECK_STR(ksasl_server_exchange_client_message(x.server), i == 0 ? PLAIN_INVALID
                                                         : i == 1 ? GENERIC_256
                                                                  : GENERIC_512);
        CHECK_RC(ksasl_server_exchange_step(x.server, (const uint8_t *)"x", 1, 0, &st, &out, &len),
                 KSASL_STEP_AFTER_FAILURE);
        exchange_free(&x);
    }

    /* A credential expiry shows in the outcome; a negative one clears it. */
    CHECK_OK(ksasl_credential_store_set_user_expiry(store, "alice", 5000000));
    exchange_run(&x, good, sreg, "SCRAM-SHA-256", NULL, 1000);
    CHECK(exchange_ok(&x));
    check_outcome(x.server, "User:alice", "alice", "SCRAM-SHA-256", 5000000, 0);
    exchange_free(&x);
    CHECK_OK(ksasl_credential_store_set_user_expiry(store, "alice", -1));
    exchange_run(&x, good, sreg, "PLAIN", NULL, 1000);
    CHECK(exchange_ok(&x));
    check_outcome(x.server, "User:alice", "alice", "PLAIN", -1, 0);
    exchange_free(&x);

    /* Replacing a user changes the password everywhere; removing it fails the login. */
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "wrong", 4096));
    exchange_run(&x, bad, sreg, "SCRAM-SHA-512", NULL, 1000);
    CHECK(exchange_ok(&x));
    exchange_free(&x);
    {
        int existed = -1;
        CHECK_OK(ksasl_credential_store_remove_user(store, "alice", &existed));
        CHECK_INT(existed, 1);
        CHECK_OK(ksasl_credential_store_remove_user(store, "alice", &existed));
        CHECK_INT(existed, 0);
    }
    exchange_run(&x, bad, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_UNKNOWN_USER);
    exchange_free(&x);

    /* The store freed by its owner stays alive in the registry. */
    ksasl_credential_store_free(store);
    exchange_run(&x, bad, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_UNKNOWN_USER);
    exchange_free(&x);

    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(good);
    ksasl_mechanism_registry_free(bad);
    ksasl_mechanism_registry_free(nobody);
}

/* ---- wrong states and bad messages ---- */

static void wrong_states(void) {
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *r = NULL;
    ksasl_client_exchange *c = NULL;
    ksasl_server_exchange *s = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    int done = 0;
    ksasl_server_step_kind st = 0;
    const char *m = NULL, *u = NULL;
    int ta = 0;

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, store));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "alice", "alice-secret"));

    /* A client steps before it starts. */
    CHECK_OK(ksasl_client_exchange_new(r, "SCRAM-SHA-256", &c));
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"r=abc", 5, 0, &out, &len, &done),
             KSASL_WRONG_STATE);
    CHECK(strlen(ksasl_client_exchange_last_error(c)) > 0);
    CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
    CHECK_RC(ksasl_client_exchange_start(c, 0, &out, &len, &done), KSASL_WRONG_STATE);
    /* A malformed server-first message fails the client for good. */
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"garbage", 7, 0, &out, &len, &done),
             KSASL_MALFORMED_MESSAGE);
    CHECK_STR(ksasl_result_kind(KSASL_MALFORMED_MESSAGE), "protocol");
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"garbage", 7, 0, &out, &len, &done),
             KSASL_STEP_AFTER_FAILURE);
    ksasl_client_exchange_free(c);
    c = NULL;

    /* Issue 17, defect 4: a 30,000-character mechanism name is quoted in 64 characters. */
    {
        static char name[30001];
        ksasl_server_exchange *srv = NULL;
        memset(name, 'M', sizeof name - 1);
        CHECK_RC(ksasl_server_exchange_new(r, name, &srv), KSASL_UNKNOWN_MECHANISM);
        CHECK(srv == NULL);
        CHECK(strlen(ksasl_last_constructor_error()) < 300);
        CHECK(strstr(ksasl_last_constructor_error(), "(30000 bytes)") != NULL);
    }

    /* Issue 17, defect 3: RFC 5802's reserved m= attribute fails both sides. */
    {
        static const char client_first[] = "n,,m=ext,n=alice,r=abc";
        ksasl_server_exchange *srv = NULL;
        buf b = {0};
        CHECK_OK(ksasl_server_exchange_new(r, "SCRAM-SHA-256", &srv));
        CHECK_RC(ksasl_server_exchange_step(srv, (const uint8_t *)client_first,
                                            strlen(client_first), 0, &st, &out, &len),
                 KSASL_SCRAM_RESERVED_ATTRIBUTE);
        CHECK(strstr(ksasl_server_exchange_last_error(srv), "m=") != NULL);
        ksasl_server_exchange_free(srv);
        CHECK_OK(ksasl_client_exchange_new(r, "SCRAM-SHA-256", &c));
        CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
        /* The client's nonce follows "r=" in its first message; the server extends it. */
        buf_append(&b, (const uint8_t *)"m=x,", 4);
        {
            size_t at = 0; /* the output is not NUL-terminated: search within len */
            while (at + 3 <= len && memcmp(out + at, ",r=", 3) != 0) at++;
            CHECK(at + 3 <= len);
            if (at + 3 <= len) buf_append(&b, out + at + 1, len - at - 1);
        }
        buf_append(&b, (const uint8_t *)"xyz,s=QUJD,i=4096", 17);
        CHECK_RC(ksasl_client_exchange_step(c, b.data, b.len, 0, &out, &len, &done),
                 KSASL_SCRAM_RESERVED_ATTRIBUTE);
        buf_free(&b);
        ksasl_client_exchange_free(c);
        c = NULL;
    }

    /* PLAIN starts done. */
    CHECK_OK(ksasl_client_exchange_new(r, "PLAIN", &c));
    CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
    CHECK_INT(done, 1);
    CHECK_INT(len, strlen("alice") + strlen("alice-secret") + 2);
    CHECK_RC(ksasl_client_exchange_step(c, NULL, 0, 0, &out, &len, &done), KSASL_STEP_AFTER_DONE);
    ksasl_client_exchange_free(c);
    c = NULL;

    /* The server's outcome before it is done; credential calls when none is pending. */
    CHECK_OK(ksasl_server_exchange_new(r, "PLAIN", &s));
    CHECK_RC(ksasl_server_exchange_outcome(s, &m, &u, &m, NULL, &ta, NULL, NULL),
             KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_exchange_credential_request(s, &m, &u, &ta), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                      "alice-secret", -1, NULL, 0, &st, &out, &len),
             KSASL_WRONG_STATE);
    CHECK(strstr(ksasl_server_exchange_last_error(s), "credential") != NULL);
    /* A malformed PLAIN message. */
    CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)"abc", 3, 0, &st, &out, &len),
             KSASL_INVALID_PLAIN_MESSAGE);
    CHECK(strlen(ksasl_server_exchange_client_message(s)) > 0);
    CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)"\0alice\0alice-secret", 19, 0, &st,
                                        &out, &len),
             KSASL_STEP_AFTER_FAILURE);
    ksasl_server_exchange_free(s);
    s = NULL;

    /* A store-backed server answered by its store never asks for a credential. */
    CHECK_OK(ksasl_server_exchange_new(r, "SCRAM-SHA-512", &s));
    CHECK_OK(ksasl_client_exchange_new(r, "SCRAM-SHA-512", &c));
    CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
    CHECK_OK(ksasl_server_exchange_step(s, out, len, 0, &st, &out, &len));
    CHECK_INT(st, KSASL_SERVER_STEP_CHALLENGE);
    CHECK_RC(ksasl_server_exchange_credential_request(s, &m, &u, &ta), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_exchange_outcome(s, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             KSASL_WRONG_STATE);
    /* A client-final message with a wrong proof. */
    {
        static const char bad_final[] = "c=biws,r=nonce,p=AAAA";
        CHECK(ksasl_server_exchange_step(s, (const uint8_t *)bad_final, strlen(bad_final), 0, &st,
                                         &out, &len) != KSASL_OK);
        CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)bad_final, strlen(bad_final), 0,
                                            &st, &out, &len),
                 KSASL_STEP_AFTER_FAILURE);
    }
    ksasl_client_exchange_free(c);
    ksasl_server_exchange_free(s);
    ksasl_mechanism_registry_free(r);
    ksasl_credential_store_free(store);
}

/* ---- credential callbacks ---- */

typedef struct {
    counter count;
    int rc;                     /* what the callback returns */
    ksasl_credential_answer_kind kind; /* how it answers (0: no answer) */
    const char *value;
    int64_t expiry_ms;
    const char *owner;
    char last_mechanism[32];
    char last_username[64];
    int last_token_auth;
    ksasl_result answer_rc; /* what ksasl_credential_answer_set returned */
} lookup;

static int lookup_cb(void *userdata, const ksasl_credential_request *request,
                     ksasl_credential_answer *answer) {
    lookup *l = userdata;
    l->count.calls++;
    snprintf(l->last_mechanism, sizeof l->last_mechanism, "%s",
             ksasl_credential_request_mechanism(request));
    snprintf(l->last_username, sizeof l->last_username, "%s",
             ksasl_credential_request_username(request));
    l->last_token_auth = ksasl_credential_request_token_authenticated(request);
    l->answer_rc = KSASL_OK;
    if (l->kind != 0) {
        l->answer_rc = ksasl_credential_answer_set(answer, l->kind, l->value, l->expiry_ms,
                                                   l->owner);
    }
    return l->rc;
}

static void lookup_free(void *userdata) {
    lookup *l = userdata;
    l->count.frees++;
}

static void credential_callbacks(void) {
    ksasl_mechanism_registry *sreg = NULL, *alice = NULL, *user = NULL, *token = NULL;
    lookup l;
    exchange x;

    CHECK_OK(ksasl_mechanism_registry_new(&alice));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(alice, "alice", "alice-secret"));
    CHECK_OK(ksasl_mechanism_registry_new(&user));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(user, "user", "pencil"));
    CHECK_OK(ksasl_mechanism_registry_new(&token));
    CHECK_OK(ksasl_mechanism_registry_add_token_clients(token, "user", "pencil"));

    /* A callback answering with the password. */
    memset(&l, 0, sizeof l);
    l.kind = KSASL_CREDENTIAL_ANSWER_PASSWORD;
    l.value = "alice-secret";
    l.expiry_ms = -1;
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, NULL));
    CHECK_OK(ksasl_mechanism_registry_set_credential_callback(sreg, lookup_cb, &l, lookup_free));
    for (size_t i = 0; i < 3; i++) {
        exchange_run(&x, alice, sreg, PASSWORD_MECHS[i], NULL, 1000);
        CHECK(exchange_ok(&x));
        CHECK_INT(l.count.calls, (int)i + 1);
        CHECK_STR(l.last_mechanism, PASSWORD_MECHS[i]);
        CHECK_STR(l.last_username, "alice");
        CHECK_INT(l.last_token_auth, 0);
        check_outcome(x.server, "User:alice", "alice", PASSWORD_MECHS[i], -1, 0);
        exchange_free(&x);
    }
    /* ... with an expiry. */
    l.expiry_ms = 7777777;
    exchange_run(&x, alice, sreg, "SCRAM-SHA-512", NULL, 1000);
    CHECK(exchange_ok(&x));
    check_outcome(x.server, "User:alice", "alice", "SCRAM-SHA-512", 7777777, 0);
    exchange_free(&x);
    l.expiry_ms = -1;

    /* A callback returning non-zero: the login fails as "could not be verified". */
    l.rc = -1;
    l.kind = 0;
    exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), PLAIN_UNVERIFIED);
    CHECK(strstr(ksasl_server_exchange_last_error(x.server), "-1") != NULL);
    exchange_free(&x);
    exchange_run(&x, alice, sreg, "SCRAM-SHA-256", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), GENERIC_256);
    exchange_free(&x);
    /* ... even when it answered first. */
    l.rc = 3;
    l.kind = KSASL_CREDENTIAL_ANSWER_PASSWORD;
    exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), PLAIN_UNVERIFIED);
    exchange_free(&x);

    /* A callback returning 0 without an answer, or with an invalid one. */
    l.rc = 0;
    l.kind = 0;
    exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), PLAIN_UNVERIFIED);
    exchange_free(&x);
    l.kind = 77;
    exchange_run(&x, alice, sreg, "SCRAM-SHA-512", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), GENERIC_512);
    exchange_free(&x);

    /* UNKNOWN and UNAVAILABLE answers. */
    l.kind = KSASL_CREDENTIAL_ANSWER_UNKNOWN;
    l.value = NULL;
    exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_UNKNOWN_USER);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), PLAIN_INVALID);
    exchange_free(&x);
    l.kind = KSASL_CREDENTIAL_ANSWER_UNAVAILABLE;
    l.value = "the directory is down";
    exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(x.server), PLAIN_UNVERIFIED);
    CHECK(strstr(ksasl_server_exchange_last_error(x.server), "the directory is down") != NULL);
    /* Each detail names its code once. */
    CHECK_INT(occurrences(ksasl_server_exchange_last_error(x.server), "CREDENTIAL_LOOKUP_FAILED"),
              1);
    CHECK_INT(occurrences(ksasl_client_exchange_last_error(x.client),
                          "SERVER_REJECTED_AUTHENTICATION"),
              1);
    exchange_free(&x);
    l.value = NULL; /* the reason is optional */
    exchange_run(&x, alice, sreg, "SCRAM-SHA-256", NULL, 1000);
    CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
    CHECK(strstr(ksasl_server_exchange_client_message(x.server), "directory") == NULL);
    exchange_free(&x);

    /* A SCRAM answer in Kafka's text form (the RFC 7677 credential of user/pencil). */
    l.kind = KSASL_CREDENTIAL_ANSWER_SCRAM;
    l.value = RFC7677_KAFKA_CREDENTIAL;
    exchange_run(&x, user, sreg, "SCRAM-SHA-256", NULL, 1000);
    CHECK(exchange_ok(&x));
    check_outcome(x.server, "User:user", "user", "SCRAM-SHA-256", -1, 0);
    exchange_free(&x);
    CHECK_RC(l.answer_rc, KSASL_OK);
    /* ... which also serves PLAIN (the password is checked against the SCRAM keys), as the
     * in-memory store does for a user that only has a SCRAM credential (test_vectors.c).
     * A SCRAM-SHA-512 string works: */
    l.value = SHA512_KAFKA_CREDENTIAL;
    exchange_run(&x, user, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(l.answer_rc, KSASL_OK);
    CHECK(exchange_ok(&x));
    exchange_free(&x);
    /* ... and a SCRAM-SHA-256 string too: for a PLAIN request the key length tells the hash,
     * as for the in-memory store's PLAIN fallback to a SHA-256 credential. */
    l.value = RFC7677_KAFKA_CREDENTIAL;
    exchange_run(&x, user, sreg, "PLAIN", NULL, 1000);
    CHECK_RC(l.answer_rc, KSASL_OK);
    CHECK(exchange_ok(&x));
    exchange_free(&x);
    /* ... a delegation token: the owner is the principal. */
    l.owner = "owner";
    l.expiry_ms = 9000000;
    exchange_run(&x, token, sreg, "SCRAM-SHA-256", NULL, 1000);
    CHECK(exchange_ok(&x));
    CHECK_INT(l.last_token_auth, 1);
    CHECK_STR(l.last_username, "user");
    check_outcome(x.server, "User:owner", "owner", "SCRAM-SHA-256", 9000000, 1);
    exchange_free(&x);
    /* ... a token credential for a password login is refused. */
    exchange_run(&x, user, sreg, "SCRAM-SHA-256", NULL, 1000);
    CHECK(!exchange_ok(&x));
    CHECK(x.server_rc != KSASL_OK);
    exchange_free(&x);
    l.owner = NULL;
    l.expiry_ms = -1;

    /* KSASL_CREDENTIAL_ANSWER_LATER: the exchange stops with a credential request (pull form). */
    {
        pull_answer p;
        memset(&p, 0, sizeof p);
        p.kind = KSASL_CREDENTIAL_ANSWER_PASSWORD;
        p.value = "alice-secret";
        p.expiry_ms = -1;
        l.kind = KSASL_CREDENTIAL_ANSWER_LATER;
        int calls = l.count.calls;
        for (size_t i = 0; i < 3; i++) {
            exchange_run(&x, alice, sreg, PASSWORD_MECHS[i], &p, 1000);
            CHECK(exchange_ok(&x));
            CHECK_INT(p.pulls, (int)i + 1);
            CHECK_STR(p.mechanism, PASSWORD_MECHS[i]);
            CHECK_STR(p.username, "alice");
            CHECK_INT(p.token_auth, 0);
            exchange_free(&x);
        }
        CHECK_INT(l.count.calls, calls + 3);
    }

    /* The userdata is freed once, when nothing uses the callback any more. */
    {
        ksasl_server_exchange *held = NULL;
        CHECK_OK(ksasl_server_exchange_new(sreg, "PLAIN", &held));
        CHECK_INT(l.count.frees, 0);
        ksasl_mechanism_registry_free(sreg);
        sreg = NULL;
        CHECK_INT(l.count.frees, 0); /* the server still holds the callback */
        ksasl_server_exchange_free(held);
        CHECK_INT(l.count.frees, 1);
    }

    /* Replacing a callback frees the old userdata. */
    {
        lookup a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, NULL));
        CHECK_OK(
            ksasl_mechanism_registry_set_credential_callback(sreg, lookup_cb, &a, lookup_free));
        CHECK_OK(
            ksasl_mechanism_registry_set_credential_callback(sreg, lookup_cb, &b, lookup_free));
        CHECK_INT(a.count.frees, 1);
        CHECK_INT(b.count.frees, 0);
        /* A callback without a free function. */
        CHECK_OK(ksasl_mechanism_registry_set_credential_callback(sreg, lookup_cb, &a, NULL));
        CHECK_INT(b.count.frees, 1);
        ksasl_mechanism_registry_free(sreg);
        CHECK_INT(a.count.frees, 1);
        CHECK_INT(b.count.frees, 1);
        CHECK_INT(a.count.calls + b.count.calls, 0);
    }

    /* A callback replaces a store given to ksasl_mechanism_registry_add_password_servers. */
    {
        ksasl_credential_store *store = NULL;
        lookup c;
        memset(&c, 0, sizeof c);
        c.kind = KSASL_CREDENTIAL_ANSWER_UNKNOWN;
        CHECK_OK(ksasl_credential_store_new(&store));
        CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
        exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
        CHECK(exchange_ok(&x));
        exchange_free(&x);
        CHECK_OK(
            ksasl_mechanism_registry_set_credential_callback(sreg, lookup_cb, &c, lookup_free));
        exchange_run(&x, alice, sreg, "PLAIN", NULL, 1000);
        CHECK_RC(x.server_rc, KSASL_UNKNOWN_USER);
        CHECK_INT(c.count.calls, 1);
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg);
        ksasl_credential_store_free(store);
        CHECK_INT(c.count.frees, 1);
    }

    ksasl_mechanism_registry_free(alice);
    ksasl_mechanism_registry_free(user);
    ksasl_mechanism_registry_free(token);
}

/* ---- the pull form ---- */

static void pull_form(void) {
    ksasl_mechanism_registry *sreg = NULL, *alice = NULL, *user = NULL, *token = NULL;
    pull_answer p;
    exchange x;

    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, NULL));
    CHECK_OK(ksasl_mechanism_registry_new(&alice));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(alice, "alice", "alice-secret"));
    CHECK_OK(ksasl_mechanism_registry_new(&user));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(user, "user", "pencil"));
    CHECK_OK(ksasl_mechanism_registry_new(&token));
    CHECK_OK(ksasl_mechanism_registry_add_token_clients(token, "user", "pencil"));

    /* PASSWORD answers for every mechanism. */
    for (size_t i = 0; i < 3; i++) {
        memset(&p, 0, sizeof p);
        p.kind = KSASL_CREDENTIAL_ANSWER_PASSWORD;
        p.value = "alice-secret";
        p.expiry_ms = i == 0 ? -1 : 123456789;
        exchange_run(&x, alice, sreg, PASSWORD_MECHS[i], &p, 1000);
        CHECK(exchange_ok(&x));
        CHECK_INT(p.pulls, 1);
        CHECK_STR(p.mechanism, PASSWORD_MECHS[i]);
        CHECK_STR(p.username, "alice");
        CHECK_INT(p.token_auth, 0);
        check_outcome(x.server, "User:alice", "alice", PASSWORD_MECHS[i], p.expiry_ms, 0);
        exchange_free(&x);

        /* A wrong password. */
        p.value = "not-it";
        exchange_run(&x, alice, sreg, PASSWORD_MECHS[i], &p, 1000);
        CHECK_RC(x.server_rc, KSASL_INVALID_CREDENTIALS);
        exchange_free(&x);

        /* UNKNOWN. */
        p.kind = KSASL_CREDENTIAL_ANSWER_UNKNOWN;
        p.value = NULL;
        exchange_run(&x, alice, sreg, PASSWORD_MECHS[i], &p, 1000);
        CHECK_RC(x.server_rc, KSASL_UNKNOWN_USER);
        CHECK_STR(ksasl_server_exchange_client_message(x.server), i == 0 ? PLAIN_INVALID
                                                         : i == 1 ? GENERIC_256
                                                                  : GENERIC_512);
        exchange_free(&x);

        /* UNAVAILABLE: the reason stays on the server. */
        p.kind = KSASL_CREDENTIAL_ANSWER_UNAVAILABLE;
        p.value = "ldap timeout";
        exchange_run(&x, alice, sreg, PASSWORD_MECHS[i], &p, 1000);
        CHECK_RC(x.server_rc, KSASL_CREDENTIAL_LOOKUP_FAILED);
        CHECK(strstr(ksasl_server_exchange_last_error(x.server), "ldap timeout") != NULL);
        CHECK(strstr(ksasl_server_exchange_client_message(x.server), "ldap") == NULL);
        CHECK_STR(ksasl_server_exchange_client_message(x.server), i == 0 ? PLAIN_UNVERIFIED
                                                         : i == 1 ? GENERIC_256
                                                                  : GENERIC_512);
        exchange_free(&x);
    }

    /* SCRAM answers in Kafka's text form. */
    memset(&p, 0, sizeof p);
    p.kind = KSASL_CREDENTIAL_ANSWER_SCRAM;
    p.value = RFC7677_KAFKA_CREDENTIAL;
    p.expiry_ms = -1;
    exchange_run(&x, user, sreg, "SCRAM-SHA-256", &p, 1000);
    CHECK(exchange_ok(&x));
    CHECK_STR(p.username, "user");
    check_outcome(x.server, "User:user", "user", "SCRAM-SHA-256", -1, 0);
    exchange_free(&x);
    /* ... PLAIN against a SCRAM credential, SHA-512 or SHA-256. */
    {
        const char *m = NULL, *u = NULL;
        int ta = 0;
        ksasl_client_exchange *c = NULL;
        ksasl_server_exchange *s = NULL;
        const uint8_t *out = NULL;
        size_t len = 0;
        int done = 0;
        ksasl_server_step_kind st = 0;
        for (int k = 0; k < 2; k++) {
            CHECK_OK(ksasl_client_exchange_new(user, "PLAIN", &c));
            CHECK_OK(ksasl_server_exchange_new(sreg, "PLAIN", &s));
            CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
            CHECK_OK(ksasl_server_exchange_step(s, out, len, 0, &st, &out, &len));
            CHECK_INT(st, KSASL_SERVER_STEP_NEED_CREDENTIAL);
            CHECK_OK(ksasl_server_exchange_credential_request(s, &m, &u, &ta));
            /* Either hash serves PLAIN (the key length tells which). */
            CHECK_OK(ksasl_server_exchange_provide_credential(
                s, KSASL_CREDENTIAL_ANSWER_SCRAM,
                k == 0 ? SHA512_KAFKA_CREDENTIAL : RFC7677_KAFKA_CREDENTIAL, -1, NULL, 0, &st,
                &out, &len));
            CHECK_INT(st, KSASL_SERVER_STEP_DONE);
            ksasl_client_exchange_free(c);
            ksasl_server_exchange_free(s);
            c = NULL;
            s = NULL;
        }
    }
    /* ... a SHA-256 credential cannot serve SCRAM-SHA-512 logins. */
    exchange_run(&x, user, sreg, "SCRAM-SHA-512", &p, 1000);
    CHECK(!exchange_ok(&x));
    CHECK(x.server_rc != KSASL_OK);
    exchange_free(&x);
    /* ... a delegation token. */
    p.token_owner = "owner";
    exchange_run(&x, token, sreg, "SCRAM-SHA-256", &p, 1000);
    CHECK(exchange_ok(&x));
    CHECK_INT(p.token_auth, 1);
    check_outcome(x.server, "User:owner", "owner", "SCRAM-SHA-256", -1, 1);
    exchange_free(&x);
    /* ... an unknown token. */
    p.kind = KSASL_CREDENTIAL_ANSWER_UNKNOWN;
    exchange_run(&x, token, sreg, "SCRAM-SHA-256", &p, 1000);
    CHECK_RC(x.server_rc, KSASL_UNKNOWN_TOKEN);
    exchange_free(&x);

    /* Step by step: a step while a credential is pending, refused answers, then the
     * answer; afterwards nothing is pending. */
    {
        ksasl_client_exchange *c = NULL;
        ksasl_server_exchange *s = NULL;
        const uint8_t *out = NULL;
        size_t len = 0;
        int done = 0, ta = 0;
        ksasl_server_step_kind st = 0;
        const char *m = NULL, *u = NULL;
        buf first = {0};

        CHECK_OK(ksasl_client_exchange_new(alice, "SCRAM-SHA-256", &c));
        CHECK_OK(ksasl_server_exchange_new(sreg, "SCRAM-SHA-256", &s));
        CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
        buf_append(&first, out, len);
        CHECK_OK(ksasl_server_exchange_step(s, first.data, first.len, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_NEED_CREDENTIAL);
        CHECK(out == NULL && len == 0);
        CHECK_RC(ksasl_server_exchange_step(s, first.data, first.len, 0, &st, &out, &len),
                 KSASL_WRONG_STATE);
        CHECK_OK(ksasl_server_exchange_credential_request(s, &m, &u, &ta));
        CHECK_STR(m, "SCRAM-SHA-256");
        CHECK_STR(u, "alice");
        CHECK_INT(ta, 0);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_SCRAM,
                                                          "salt=x", -1, NULL, 0, &st, &out, &len),
                 KSASL_INVALID_CREDENTIAL_FORMAT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_SCRAM,
                                                          "\xff\xfe", -1, NULL, 0, &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_OK(ksasl_server_exchange_credential_request(s, &m, &u, &ta));
        CHECK_OK(ksasl_server_exchange_provide_credential(
            s, KSASL_CREDENTIAL_ANSWER_PASSWORD, "alice-secret", -1, NULL, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_CHALLENGE);
        CHECK(out != NULL && len > 0 && bytes_contain(out, len, "i=4096"));
        CHECK_RC(ksasl_server_exchange_credential_request(s, &m, &u, &ta), KSASL_WRONG_STATE);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          "alice-secret", -1, NULL, 0, &st, &out,
                                                          &len),
                 KSASL_WRONG_STATE);
        /* Finish the exchange. */
        {
            buf ch = {0};
            buf_append(&ch, out, len);
            CHECK_OK(ksasl_client_exchange_step(c, ch.data, ch.len, 0, &out, &len, &done));
            buf_clear(&ch);
            buf_append(&ch, out, len);
            CHECK_OK(ksasl_server_exchange_step(s, ch.data, ch.len, 0, &st, &out, &len));
            CHECK_INT(st, KSASL_SERVER_STEP_DONE);
            buf_clear(&ch);
            buf_append(&ch, out, len);
            CHECK_OK(ksasl_client_exchange_step(c, ch.data, ch.len, 0, &out, &len, &done));
            CHECK_INT(done, 1);
            buf_free(&ch);
        }
        ksasl_client_exchange_free(c);
        ksasl_server_exchange_free(s);
        buf_free(&first);
    }

    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(alice);
    ksasl_mechanism_registry_free(user);
    ksasl_mechanism_registry_free(token);
}

/* A server-final message with a wrong signature fails the client with
 * KSASL_INVALID_SERVER_SIGNATURE. */
static void bad_server_signature(void) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_client_exchange *c = NULL;
    ksasl_server_exchange *s = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    int done = 0;
    ksasl_server_step_kind st = 0;
    buf b = {0};

    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, NULL));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "alice", "alice-secret"));
    CHECK_OK(ksasl_client_exchange_new(r, "SCRAM-SHA-256", &c));
    CHECK_OK(ksasl_server_exchange_new(r, "SCRAM-SHA-256", &s));
    CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
    buf_append(&b, out, len);
    CHECK_OK(ksasl_server_exchange_step(s, b.data, b.len, 0, &st, &out, &len));
    CHECK_INT(st, KSASL_SERVER_STEP_NEED_CREDENTIAL);
    CHECK_OK(ksasl_server_exchange_provide_credential(
        s, KSASL_CREDENTIAL_ANSWER_PASSWORD, "alice-secret", -1, NULL, 0, &st, &out, &len));
    buf_clear(&b);
    buf_append(&b, out, len);
    CHECK_OK(ksasl_client_exchange_step(c, b.data, b.len, 0, &out, &len, &done));
    buf_clear(&b);
    buf_append(&b, out, len);
    CHECK_OK(ksasl_server_exchange_step(s, b.data, b.len, 0, &st, &out, &len));
    CHECK_INT(st, KSASL_SERVER_STEP_DONE);
    buf_clear(&b);
    buf_append(&b, out, len);
    CHECK(b.len > 4 && b.data[0] == 'v' && b.data[1] == '=');
    if (b.len > 4) {
        b.data[2] = b.data[2] == 'A' ? 'B' : 'A'; /* still base64, a different signature */
    }
    CHECK_RC(ksasl_client_exchange_step(c, b.data, b.len, 0, &out, &len, &done),
             KSASL_INVALID_SERVER_SIGNATURE);
    CHECK_RC(ksasl_client_exchange_step(c, b.data, b.len, 0, &out, &len, &done),
             KSASL_STEP_AFTER_FAILURE);
    buf_free(&b);
    ksasl_client_exchange_free(c);
    ksasl_server_exchange_free(s);
    ksasl_mechanism_registry_free(r);
}

/* Odd but valid names and passwords: SCRAM's saslname escaping (',' and '='), non-ASCII
 * UTF-8, and limits. Like Kafka's broker (ScramMessages' saslname pattern is ASCII-only),
 * the SCRAM server refuses non-ASCII usernames; PLAIN takes them. */
static void names_and_limits(void) {
    static const struct {
        const char *user;
        const char *password;
        int scram_ok;
    } users[] = {
        {"we,ird=name", "p,a=ss", 1},
        {"juergen", "p\xc3\xa4ss w\xc3\xb6rd \xf0\x9f\x94\x91", 1},
        {"J\xc3\xbcrgen", "pw", 0},
        {"\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x94\x91", 0},
    };
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL;
    exchange x;

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
    for (size_t u = 0; u < sizeof users / sizeof users[0]; u++) {
        ksasl_mechanism_registry *creg = NULL;
        char principal[64];
        CHECK_OK(ksasl_credential_store_add_user(store, users[u].user, users[u].password, 4096));
        CHECK_OK(ksasl_mechanism_registry_new(&creg));
        CHECK_OK(
            ksasl_mechanism_registry_add_password_clients(creg, users[u].user, users[u].password));
        snprintf(principal, sizeof principal, "User:%s", users[u].user);
        for (size_t i = 0; i < 3; i++) {
            exchange_run(&x, creg, sreg, PASSWORD_MECHS[i], NULL, 0);
            if (i == 0 || users[u].scram_ok) {
                CHECK(exchange_ok(&x));
                check_outcome(x.server, principal, users[u].user, PASSWORD_MECHS[i], -1, 0);
            } else {
                CHECK_RC(x.server_rc, KSASL_INVALID_USERNAME);
            }
            exchange_free(&x);
        }
        ksasl_mechanism_registry_free(creg);
    }

    /* PLAIN: an authorization id other than the user; empty user or password. */
    {
        ksasl_server_exchange *s = NULL;
        ksasl_server_step_kind st = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        static const uint8_t other[] = "bob\0we,ird=name\0p,a=ss";
        static const uint8_t same[] = "we,ird=name\0we,ird=name\0p,a=ss";
        static const uint8_t no_user[] = "\0\0p";
        static const uint8_t no_password[] = "\0alice\0";
        CHECK_OK(ksasl_server_exchange_new(sreg, "PLAIN", &s));
        CHECK_RC(ksasl_server_exchange_step(s, other, sizeof other - 1, 0, &st, &out, &len),
                 KSASL_AUTHZID_MISMATCH);
        CHECK(strstr(ksasl_server_exchange_client_message(s), "authorization id") != NULL);
        ksasl_server_exchange_free(s);
        CHECK_OK(ksasl_server_exchange_new(sreg, "PLAIN", &s));
        CHECK_OK(ksasl_server_exchange_step(s, same, sizeof same - 1, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_DONE);
        ksasl_server_exchange_free(s);
        CHECK_OK(ksasl_server_exchange_new(sreg, "PLAIN", &s));
        CHECK_RC(ksasl_server_exchange_step(s, no_user, sizeof no_user - 1, 0, &st, &out, &len),
                 KSASL_USERNAME_NOT_SPECIFIED);
        ksasl_server_exchange_free(s);
        CHECK_OK(ksasl_server_exchange_new(sreg, "PLAIN", &s));
        CHECK_RC(
            ksasl_server_exchange_step(s, no_password, sizeof no_password - 1, 0, &st, &out, &len),
            KSASL_PASSWORD_NOT_SPECIFIED);
        ksasl_server_exchange_free(s);
    }

    /* Messages above the 512 KiB limit, both ways. */
    {
        size_t big = 512 * 1024 + 1;
        uint8_t *b = calloc(big, 1);
        ksasl_server_exchange *s = NULL;
        ksasl_client_exchange *c = NULL;
        ksasl_mechanism_registry *creg = NULL;
        ksasl_server_step_kind st = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        int done = 0;
        CHECK(b != NULL);
        if (b != NULL) {
            memset(b, 'a', big);
            CHECK_OK(ksasl_server_exchange_new(sreg, "SCRAM-SHA-256", &s));
            CHECK_RC(ksasl_server_exchange_step(s, b, big, 0, &st, &out, &len),
                     KSASL_MESSAGE_TOO_LARGE);
            ksasl_server_exchange_free(s);
            CHECK_OK(ksasl_mechanism_registry_new(&creg));
            CHECK_OK(ksasl_mechanism_registry_add_password_clients(creg, "alice", "x"));
            CHECK_OK(ksasl_client_exchange_new(creg, "SCRAM-SHA-256", &c));
            CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
            CHECK_RC(ksasl_client_exchange_step(c, b, big, 0, &out, &len, &done),
                     KSASL_MESSAGE_TOO_LARGE);
            ksasl_client_exchange_free(c);
            ksasl_mechanism_registry_free(creg);
        }
        free(b);
    }

    ksasl_mechanism_registry_free(sreg);
    ksasl_credential_store_free(store);
}

/* The KIP-368 session a single server exchange grants (Kafka's formula, the core's): the
 * smaller of the credential's remaining life and connections.max.reauth.ms, and the expiry it
 * implies; neither: no lifetime, no expiry. */
static void single_exchange_session(void) {
    static const uint8_t plain[] = "\0alice\0alice-secret";
    static const struct {
        int64_t user_expiry, max_reauth, lifetime, expiry;
    } cases[] = {
        {-1, 0, 0, -1},
        {-1, 10000, 10000, 1000 + 10000},
        {1000 + 50000, 0, 50000, 1000 + 50000},
        {1000 + 50000, 10000, 10000, 1000 + 10000},
        {1000 + 5000, 10000, 5000, 1000 + 5000},
    };
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *r = NULL;
    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, store));
    CHECK_RC(ksasl_server_exchange_set_max_reauth_ms(NULL, 1000), KSASL_NULL_ARGUMENT);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ksasl_server_exchange *s = NULL;
        ksasl_server_step_kind st = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        int64_t life = -7, exp = -7;
        CHECK_OK(ksasl_credential_store_set_user_expiry(store, "alice", cases[i].user_expiry));
        CHECK_OK(ksasl_server_exchange_new(r, "PLAIN", &s));
        CHECK_OK(ksasl_server_exchange_set_max_reauth_ms(s, cases[i].max_reauth));
        CHECK_RC(ksasl_server_exchange_outcome(s, NULL, NULL, NULL, NULL, NULL, &life, &exp),
                 KSASL_WRONG_STATE);
        CHECK_INT(life, -7);
        CHECK_OK(ksasl_server_exchange_step(s, plain, sizeof plain - 1, 1000, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_DONE);
        CHECK_OK(ksasl_server_exchange_outcome(s, NULL, NULL, NULL, NULL, NULL, &life, &exp));
        CHECK_INT(life, cases[i].lifetime);
        CHECK_INT(exp, cases[i].expiry);
        ksasl_server_exchange_free(s);
    }
    ksasl_mechanism_registry_free(r);
    ksasl_credential_store_free(store);
}

void test_exchanges(void) {
    single_exchange_session();
    names_and_limits();
    store_logins();
    wrong_states();
    credential_callbacks();
    pull_form();
    bad_server_signature();
}
