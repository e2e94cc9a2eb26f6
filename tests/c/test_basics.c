/*
 * Version, result codes, the panic boundary, and NULL / invalid-UTF-8 arguments for every
 * function of the C ABI. Nothing here may crash: NULL handles give KSASL_NULL_ARGUMENT,
 * *_free(NULL) is a no-op, and accessors given NULL return "" / NULL / 0 / -1 as documented
 * in src/ffi.
 */
#include <stdlib.h>

#include "check.h"

static const char BAD_UTF8[] = "\xff\xfe";

void test_basics(void) {
    /* ksasl_version */
    CHECK_STR(ksasl_version(), KSASL_VERSION_STRING);

    /* ksasl_result_name / ksasl_result_kind */
    CHECK_STR(ksasl_result_name(KSASL_OK), "OK");
    CHECK_STR(ksasl_result_kind(KSASL_OK), "ok");
    CHECK_STR(ksasl_result_name(KSASL_INVALID_ARGUMENT), "INVALID_ARGUMENT");
    CHECK_STR(ksasl_result_kind(KSASL_INVALID_ARGUMENT), "misuse");
    CHECK_STR(ksasl_result_name(KSASL_NULL_ARGUMENT), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_kind(KSASL_NULL_ARGUMENT), "misuse");
    CHECK_STR(ksasl_result_name(KSASL_STEP_AFTER_FAILURE), "STEP_AFTER_FAILURE");
    CHECK_STR(ksasl_result_name(KSASL_WRONG_STATE), "WRONG_STATE");
    CHECK_STR(ksasl_result_name(KSASL_MALFORMED_MESSAGE), "MALFORMED_MESSAGE");
    CHECK_STR(ksasl_result_kind(KSASL_MALFORMED_MESSAGE), "protocol");
    CHECK_STR(ksasl_result_name(KSASL_INVALID_CREDENTIALS), "INVALID_CREDENTIALS");
    CHECK_STR(ksasl_result_kind(KSASL_INVALID_CREDENTIALS), "authentication");
    CHECK_STR(ksasl_result_name(KSASL_CREDENTIAL_LOOKUP_FAILED), "CREDENTIAL_LOOKUP_FAILED");
    CHECK_STR(ksasl_result_kind(KSASL_CREDENTIAL_LOOKUP_FAILED), "credential");
    CHECK_STR(ksasl_result_name(KSASL_PANIC), "PANIC");
    CHECK_STR(ksasl_result_kind(KSASL_PANIC), "internal");
    CHECK_STR(ksasl_result_name(KSASL_RANDOM_SOURCE_FAILED), "RANDOM_SOURCE_FAILED");
    CHECK_STR(ksasl_result_name(1), "UNKNOWN");
    CHECK_STR(ksasl_result_kind(1), "unknown");
    CHECK_STR(ksasl_result_name(99999), "UNKNOWN");
    CHECK_STR(ksasl_result_kind(99999), "unknown");
    CHECK_STR(ksasl_result_name(UINT32_MAX), "UNKNOWN");
    CHECK_STR(ksasl_result_kind(UINT32_MAX), "unknown");
    /* Every code of the header has a name other than UNKNOWN, and its kind matches its
     * hundreds digit. */
    {
        static const ksasl_result codes[] = {
            KSASL_INVALID_ARGUMENT, KSASL_STEP_AFTER_DONE, KSASL_STEP_AFTER_FAILURE,
            KSASL_WRONG_STATE, KSASL_UNKNOWN_MECHANISM, KSASL_INVALID_CONFIG,
            KSASL_NULL_ARGUMENT, KSASL_MALFORMED_MESSAGE, KSASL_INVALID_BASE64,
            KSASL_INVALID_ENCODING, KSASL_UNSUPPORTED_CHANNEL_BINDING, KSASL_NONCE_MISMATCH,
            KSASL_ITERATIONS_TOO_LOW, KSASL_ITERATIONS_TOO_HIGH, KSASL_MESSAGE_TOO_LARGE,
            KSASL_INVALID_USERNAME, KSASL_INVALID_PLAIN_MESSAGE, KSASL_UNEXPECTED_CHALLENGE,
            KSASL_SERVER_REPORTED_ERROR, KSASL_INVALID_NONCE, KSASL_INVALID_EXTENSION,
            KSASL_UNSUPPORTED_SASL_MECHANISM, KSASL_ILLEGAL_SASL_STATE,
            KSASL_UNSUPPORTED_VERSION, KSASL_INVALID_REQUEST, KSASL_INVALID_FRAME_SIZE,
            KSASL_CORRELATION_MISMATCH, KSASL_CONNECTION_CLOSED, KSASL_KAFKA_ERROR,
            KSASL_SCRAM_RESERVED_ATTRIBUTE,
            KSASL_INVALID_CREDENTIALS, KSASL_UNKNOWN_USER, KSASL_AUTHZID_MISMATCH,
            KSASL_INVALID_SERVER_SIGNATURE, KSASL_USERNAME_NOT_SPECIFIED,
            KSASL_PASSWORD_NOT_SPECIFIED, KSASL_UNKNOWN_TOKEN,
            KSASL_SERVER_REJECTED_AUTHENTICATION, KSASL_TOKEN_EXPIRED,
            KSASL_TOKEN_NOT_YET_VALID, KSASL_TOKEN_INVALID_ISSUER,
            KSASL_TOKEN_INVALID_AUDIENCE, KSASL_TOKEN_MISSING_CLAIM,
            KSASL_TOKEN_INVALID_CLAIM, KSASL_TOKEN_UNKNOWN_KEY, KSASL_TOKEN_BAD_SIGNATURE,
            KSASL_TOKEN_ALGORITHM_REFUSED, KSASL_TOKEN_MALFORMED, KSASL_TOKEN_TOO_LARGE,
            KSASL_INSUFFICIENT_SCOPE, KSASL_INVALID_EXTENSIONS, KSASL_TOKEN_REJECTED,
            KSASL_SESSION_EXPIRED, KSASL_PRINCIPAL_CHANGED, KSASL_MECHANISM_CHANGED,
            KSASL_INVALID_CREDENTIAL_FORMAT, KSASL_CREDENTIAL_ITERATIONS_TOO_LOW,
            KSASL_CREDENTIAL_LOOKUP_FAILED, KSASL_CREDENTIAL_MECHANISM_MISMATCH,
            KSASL_NO_VALID_CREDENTIAL, KSASL_INVALID_CREDENTIAL_EXPIRY, KSASL_REFRESHER_GONE,
            KSASL_INTERNAL, KSASL_PANIC, KSASL_RANDOM_SOURCE_FAILED,
        };
        static const char *const kinds[] = {"", "misuse", "protocol", "authentication",
                                            "credential", "internal"};
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
            const char *name = ksasl_result_name(codes[i]);
            CHECK(name != NULL && strcmp(name, "UNKNOWN") != 0 && strcmp(name, "OK") != 0);
            CHECK_STR(ksasl_result_kind(codes[i]), kinds[codes[i] / 100]);
        }
    }

    /* ksasl_check_panic_boundary: a panic inside the library comes back as a code and the
     * process keeps running (the library's panic hook prints the panic on stderr). */
    fprintf(stderr, "[test_ffi] the next panic message on stderr is deliberate\n");
    CHECK_RC(ksasl_check_panic_boundary(), KSASL_PANIC);
    CHECK_RC(ksasl_check_panic_boundary(), KSASL_PANIC);
    CHECK_STR(ksasl_version(), KSASL_VERSION_STRING);

    /* ksasl_last_constructor_error: set by a failed constructor on this thread. A failed
     * build keeps its detail on the builder. */
    {
        ksasl_refresher_config_builder *rb = NULL;
        ksasl_refresher_config *rc = NULL;
        CHECK_OK(ksasl_refresher_config_builder_new(&rb));
        CHECK_OK(ksasl_refresher_config_builder_set_window_factor(rb, 2.0));
        CHECK_RC(ksasl_refresher_config_builder_build(rb, &rc), KSASL_INVALID_CONFIG);
        CHECK(rc == NULL);
        CHECK(strstr(ksasl_refresher_config_builder_last_error(rb),
                     "sasl.login.refresh.window.factor") != NULL);
        ksasl_refresher_config_builder_free(rb);
        ksasl_token_authority *ta = NULL;
        CHECK_RC(ksasl_token_authority_new("", -1, -1, -1, &ta), KSASL_INVALID_CONFIG);
        CHECK(ta == NULL);
        const char *e = ksasl_last_constructor_error();
        CHECK(e != NULL && strstr(e, "delegation.token.secret.key") != NULL);
        ksasl_mechanism_registry *reg = NULL;
        CHECK_OK(ksasl_mechanism_registry_new(&reg));
        /* Out-parameters are written only on success. */
        static char sentinel;
        ksasl_client_exchange *const before = (ksasl_client_exchange *)(void *)&sentinel;
        ksasl_client_exchange *c = before;
        CHECK_RC(ksasl_client_exchange_new(reg, "NO-SUCH-MECH", &c), KSASL_UNKNOWN_MECHANISM);
        CHECK(c == before);
        e = ksasl_last_constructor_error();
        CHECK(e != NULL && strlen(e) > 0);
        ksasl_mechanism_registry_free(reg);
    }
}

/* Callbacks used only to be refused. */
static int never_credential_cb(void *userdata, const ksasl_credential_request *request,
                               ksasl_credential_answer *answer) {
    counter *c = userdata;
    c->calls++;
    (void)request;
    (void)answer;
    return 1;
}

static int never_token_cb(void *userdata, const char *token, int64_t now_ms,
                          ksasl_oauth_verdict *verdict) {
    counter *c = userdata;
    c->calls++;
    (void)token;
    (void)now_ms;
    (void)verdict;
    return 1;
}

static void never_refresh_cb(void *userdata, ksasl_refresher *refresher, int64_t now_ms) {
    counter *c = userdata;
    c->calls++;
    (void)refresher;
    (void)now_ms;
}

/* Answers inside a credential callback, checking ksasl_credential_answer_set's arguments
 * and the request accessors before answering with the password "secret". */
static int picky_credential_cb(void *userdata, const ksasl_credential_request *request,
                               ksasl_credential_answer *answer) {
    counter *c = userdata;
    c->calls++;
    CHECK_STR(ksasl_credential_request_mechanism(request), "PLAIN");
    CHECK_STR(ksasl_credential_request_username(request), "alice");
    CHECK_INT(ksasl_credential_request_token_authenticated(request), 0);
    CHECK_RC(
        ksasl_credential_answer_set(NULL, KSASL_CREDENTIAL_ANSWER_PASSWORD, "secret", -1, NULL),
        KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_PASSWORD, NULL, -1, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_SCRAM, NULL, -1, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(
        ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_PASSWORD, BAD_UTF8, -1, NULL),
        KSASL_INVALID_ARGUMENT);
    CHECK_RC(
        ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_PASSWORD, "x", -1, BAD_UTF8),
        KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_UNAVAILABLE, BAD_UTF8, -1,
                                         NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, 0, "secret", -1, NULL), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, 99, "secret", -1, NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(
        ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_SCRAM, "salt=nope", -1, NULL),
        KSASL_INVALID_CREDENTIAL_FORMAT);
    /* The last answer wins. */
    CHECK_OK(
        ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_PASSWORD, "secret", -1, NULL));
    return 0;
}

static int picky_token_cb(void *userdata, const char *token, int64_t now_ms,
                          ksasl_oauth_verdict *verdict) {
    counter *c = userdata;
    c->calls++;
    (void)now_ms;
    CHECK(token != NULL);
    CHECK_RC(ksasl_oauth_verdict_accept(NULL, "alice", 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_oauth_verdict_accept(verdict, NULL, 1), KSASL_NULL_ARGUMENT);
    /* An empty principal is taken here and rejects the token (test_oauth.c). */
    CHECK_OK(ksasl_oauth_verdict_accept(verdict, "", 1));
    CHECK_RC(ksasl_oauth_verdict_accept(verdict, BAD_UTF8, 1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_oauth_verdict_reject(NULL, "no"), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_oauth_verdict_reject(verdict, NULL));
    CHECK_OK(ksasl_oauth_verdict_reject(verdict, BAD_UTF8)); /* the reason is best effort */
    return 0;
}

static void null_store_and_registry(void) {
    counter cnt = {0, 0};
    int existed = 7;

    CHECK_RC(ksasl_credential_store_new(NULL), KSASL_NULL_ARGUMENT);
    ksasl_credential_store_free(NULL);
    CHECK_STR(ksasl_credential_store_last_error(NULL), "");
    CHECK_RC(ksasl_credential_store_add_user(NULL, "u", "p", 4096), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(NULL, "u", "SCRAM-SHA-256", "x"),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_user_expiry(NULL, "u", 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_remove_user(NULL, "u", &existed), KSASL_NULL_ARGUMENT);
    CHECK_INT(existed, 7);
    CHECK_RC(ksasl_credential_store_set_token(NULL, "t", "SCRAM-SHA-256", "x", "o", -1),
             KSASL_NULL_ARGUMENT);

    ksasl_credential_store *s = NULL;
    CHECK_OK(ksasl_credential_store_new(&s));
    CHECK(s != NULL);
    CHECK_STR(ksasl_credential_store_last_error(s), "");
    CHECK_RC(ksasl_credential_store_add_user(s, NULL, "p", 4096), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_credential_store_last_error(s), "username") != NULL);
    CHECK_RC(ksasl_credential_store_add_user(s, "u", NULL, 4096), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_add_user(s, BAD_UTF8, "p", 4096), KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_credential_store_last_error(s), "UTF-8") != NULL);
    CHECK_RC(ksasl_credential_store_add_user(s, "u", BAD_UTF8, 4096), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_add_user(s, "", "p", 4096), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_add_user(s, "u", "p", 100),
             KSASL_CREDENTIAL_ITERATIONS_TOO_LOW);
    CHECK(strstr(ksasl_credential_store_last_error(s), "iterations") != NULL);

    CHECK_RC(ksasl_credential_store_set_scram(s, NULL, "SCRAM-SHA-256", RFC7677_KAFKA_CREDENTIAL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", NULL, RFC7677_KAFKA_CREDENTIAL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", "SCRAM-SHA-256", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(
        ksasl_credential_store_set_scram(s, BAD_UTF8, "SCRAM-SHA-256", RFC7677_KAFKA_CREDENTIAL),
        KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "", "SCRAM-SHA-256", RFC7677_KAFKA_CREDENTIAL),
             KSASL_INVALID_ARGUMENT);
    /* A SHA-256 credential (32-byte keys) is not a SHA-512 one. */
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", "SCRAM-SHA-512", RFC7677_KAFKA_CREDENTIAL),
             KSASL_INVALID_CREDENTIAL_FORMAT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", BAD_UTF8, "x"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", "SCRAM-SHA-256", BAD_UTF8),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", "PLAIN", "x"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_scram(s, "u", "SCRAM-SHA-256", "salt=AAAA"),
             KSASL_INVALID_CREDENTIAL_FORMAT);
    CHECK_RC(
        ksasl_credential_store_set_scram(
            s, "u", "SCRAM-SHA-256", "salt=!!!,stored_key=AAAA,server_key=AAAA,iterations=4096"),
        KSASL_INVALID_CREDENTIAL_FORMAT);

    CHECK_RC(ksasl_credential_store_set_user_expiry(s, NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_user_expiry(s, BAD_UTF8, 1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_store_set_user_expiry(s, "nobody", 1), KSASL_INVALID_ARGUMENT);

    CHECK_RC(ksasl_credential_store_remove_user(s, NULL, &existed), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_remove_user(s, BAD_UTF8, &existed), KSASL_INVALID_ARGUMENT);
    CHECK_INT(existed, 7);
    CHECK_OK(ksasl_credential_store_remove_user(s, "nobody", NULL));
    CHECK_OK(ksasl_credential_store_remove_user(s, "nobody", &existed));
    CHECK_INT(existed, 0);

    {
        static const char cred[] =
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,"
            "server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096";
        CHECK_RC(ksasl_credential_store_set_token(s, NULL, "SCRAM-SHA-256", cred, "o", -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", NULL, cred, "o", -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", "SCRAM-SHA-256", NULL, "o", -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", "SCRAM-SHA-256", cred, NULL, -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, BAD_UTF8, "SCRAM-SHA-256", cred, "o", -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", BAD_UTF8, cred, "o", -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", "SCRAM-SHA-256", BAD_UTF8, "o", -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", "SCRAM-SHA-256", cred, BAD_UTF8, -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_credential_store_set_token(s, "t", "PLAIN", cred, "o", -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_OK(ksasl_credential_store_set_token(s, "t", "SCRAM-SHA-256", cred, "o", -1));
    }

    /* Credential request accessors (outside a callback they only see NULL). */
    CHECK(ksasl_credential_request_mechanism(NULL) == NULL);
    CHECK(ksasl_credential_request_username(NULL) == NULL);
    CHECK_INT(ksasl_credential_request_token_authenticated(NULL), 0);
    CHECK_RC(ksasl_credential_answer_set(NULL, KSASL_CREDENTIAL_ANSWER_UNKNOWN, NULL, -1, NULL),
             KSASL_NULL_ARGUMENT);

    /* Registry. */
    CHECK_RC(ksasl_mechanism_registry_new(NULL), KSASL_NULL_ARGUMENT);
    ksasl_mechanism_registry_free(NULL);
    CHECK_STR(ksasl_mechanism_registry_last_error(NULL), "");
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(NULL, 0), 0);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(NULL, 1), 0);
    CHECK_RC(ksasl_mechanism_registry_add_password_servers(NULL, s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_password_servers(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_password_clients(NULL, "u", "p"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_token_clients(NULL, "t", "h"), KSASL_NULL_ARGUMENT);
    /* A refused callback's userdata is freed at once (exactly once), and never called. */
    CHECK_RC(ksasl_mechanism_registry_set_credential_callback(NULL, never_credential_cb, &cnt,
                                                              counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_RC(
        ksasl_mechanism_registry_set_credential_callback(NULL, never_credential_cb, NULL, NULL),
        KSASL_NULL_ARGUMENT);

    ksasl_mechanism_registry *r = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_STR(ksasl_mechanism_registry_last_error(r), "");
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 0);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 1), 0);
    cnt.frees = 0;
    CHECK_RC(ksasl_mechanism_registry_set_credential_callback(r, NULL, &cnt, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK(strstr(ksasl_mechanism_registry_last_error(r), "cb") != NULL);
    CHECK_RC(ksasl_mechanism_registry_add_password_clients(r, NULL, "p"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_password_clients(r, "u", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_password_clients(r, BAD_UTF8, "p"),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_password_clients(r, "u", BAD_UTF8),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_token_clients(r, NULL, "h"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_token_clients(r, "t", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_token_clients(r, BAD_UTF8, "h"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_token_clients(r, "t", BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 0);
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "alice", "secret"));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 3);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 1), 0);
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, NULL));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 1), 3);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 7), 3); /* any non-zero means servers */
    CHECK_INT(cnt.calls, 0);

    /* Inside a credential callback: ksasl_credential_answer_set's argument checks. */
    {
        counter picky = {0, 0};
        ksasl_server_exchange *srv = NULL;
        ksasl_server_step_kind st = 0;
        const uint8_t *out = NULL;
        size_t out_len = 0;
        static const uint8_t plain[] = "\0alice\0secret";
        CHECK_OK(ksasl_mechanism_registry_set_credential_callback(r, picky_credential_cb, &picky,
                                                                  counter_free));
        CHECK_OK(ksasl_server_exchange_new(r, "PLAIN", &srv));
        CHECK_OK(ksasl_server_exchange_step(srv, plain, sizeof plain - 1, 0, &st, &out, &out_len));
        CHECK_INT(st, KSASL_SERVER_STEP_DONE);
        CHECK_INT(picky.calls, 1);
        ksasl_server_exchange_free(srv);
        ksasl_mechanism_registry_free(r);
        CHECK_INT(picky.frees, 1);
    }
    ksasl_credential_store_free(s);
}

static void null_exchanges(void) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_client_exchange *c = NULL;
    ksasl_server_exchange *s = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    int done = 0;
    ksasl_server_step_kind st = 0;
    const char *m = NULL, *u = NULL;
    int ta = 0;

    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "alice", "secret"));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, NULL));

    /* Client exchange. */
    CHECK_RC(ksasl_client_exchange_new(NULL, "PLAIN", &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_new(r, NULL, &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_new(r, "PLAIN", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_new(r, BAD_UTF8, &c), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_new(r, "GSSAPI", &c), KSASL_UNKNOWN_MECHANISM);
    CHECK(c == NULL);
    ksasl_client_exchange_free(NULL);
    CHECK_STR(ksasl_client_exchange_last_error(NULL), "");
    CHECK_RC(ksasl_client_exchange_start(NULL, 0, &out, &len, &done), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_step(NULL, (const uint8_t *)"x", 1, 0, &out, &len, &done),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_server_failed(NULL, "no"), KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_client_exchange_new(r, "SCRAM-SHA-256", &c));
    CHECK_STR(ksasl_client_exchange_last_error(c), "");
    /* NULL out-parameters are refused before any work: the client can still start. */
    CHECK_RC(ksasl_client_exchange_start(c, 0, NULL, &len, &done), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_start(c, 0, &out, NULL, &done), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_start(c, 0, &out, &len, NULL), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_client_exchange_last_error(c), "done") != NULL);
    CHECK_OK(ksasl_client_exchange_start(c, 0, &out, &len, &done));
    CHECK(out != NULL && len > 0 && done == 0);
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"x", 1, 0, NULL, &len, &done),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"x", 1, 0, &out, NULL, &done),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"x", 1, 0, &out, &len, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_step(c, NULL, 5, 0, &out, &len, &done), KSASL_NULL_ARGUMENT);
    /* NULL with length 0 is an empty challenge: SCRAM refuses it as malformed. */
    CHECK(ksasl_client_exchange_step(c, NULL, 0, 0, &out, &len, &done) != KSASL_OK);
    ksasl_client_exchange_free(c);
    c = NULL;

    CHECK_OK(ksasl_client_exchange_new(r, "PLAIN", &c));
    CHECK_RC(ksasl_client_exchange_server_failed(c, BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK(ksasl_client_exchange_server_failed(c, NULL) != KSASL_OK);
    CHECK(strlen(ksasl_client_exchange_last_error(c)) > 0);
    ksasl_client_exchange_free(c);

    /* Server exchange. */
    CHECK_RC(ksasl_server_exchange_new(NULL, "PLAIN", &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_new(r, NULL, &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_new(r, "PLAIN", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_new(r, BAD_UTF8, &s), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_new(r, "OAUTHBEARER", &s), KSASL_UNKNOWN_MECHANISM);
    CHECK(s == NULL);
    ksasl_server_exchange_free(NULL);
    CHECK_STR(ksasl_server_exchange_last_error(NULL), "");
    CHECK_STR(ksasl_server_exchange_client_message(NULL), "");
    CHECK_RC(ksasl_server_exchange_step(NULL, (const uint8_t *)"x", 1, 0, &st, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_credential_request(NULL, &m, &u, &ta), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_provide_credential(NULL, KSASL_CREDENTIAL_ANSWER_PASSWORD, "p",
                                                      -1, NULL, 0, &st, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_outcome(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_server_exchange_new(r, "PLAIN", &s));
    CHECK_STR(ksasl_server_exchange_last_error(s), "");
    CHECK_STR(ksasl_server_exchange_client_message(s), "");
    {
        static const uint8_t plain[] = "\0alice\0secret";
        CHECK_RC(ksasl_server_exchange_step(s, plain, sizeof plain - 1, 0, NULL, &out, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_step(s, plain, sizeof plain - 1, 0, &st, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_step(s, plain, sizeof plain - 1, 0, &st, &out, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_step(s, NULL, 3, 0, &st, &out, &len), KSASL_NULL_ARGUMENT);
        /* None of the refused calls consumed the exchange. */
        CHECK_OK(ksasl_server_exchange_step(s, plain, sizeof plain - 1, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_NEED_CREDENTIAL);
        CHECK_RC(ksasl_server_exchange_credential_request(s, NULL, &u, &ta), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_credential_request(s, &m, NULL, &ta), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_credential_request(s, &m, &u, NULL), KSASL_NULL_ARGUMENT);
        CHECK_OK(ksasl_server_exchange_credential_request(s, &m, &u, &ta));
        CHECK_STR(m, "PLAIN");
        CHECK_STR(u, "alice");
        CHECK_INT(ta, 0);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          "secret", -1, NULL, 0, NULL, &out, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          "secret", -1, NULL, 0, &st, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          "secret", -1, NULL, 0, &st, &out, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD, NULL,
                                                          -1, NULL, 0, &st, &out, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          BAD_UTF8, -1, NULL, 0, &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          "secret", -1, BAD_UTF8, 0, &st, &out,
                                                          &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_LATER, NULL,
                                                          -1, NULL, 0, &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(
            ksasl_server_exchange_provide_credential(s, 42, "secret", -1, NULL, 0, &st, &out, &len),
            KSASL_INVALID_ARGUMENT);
        /* The request is still pending after refused answers. */
        CHECK_OK(ksasl_server_exchange_credential_request(s, &m, &u, &ta));
        CHECK_OK(ksasl_server_exchange_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD,
                                                          "secret", -1, NULL, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_DONE);
        /* All of the outcome's out-parameters are optional. */
        CHECK_OK(ksasl_server_exchange_outcome(s, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    }
    ksasl_server_exchange_free(s);
    ksasl_mechanism_registry_free(r);
}

static void null_conns(void) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_client_config_builder *cb = NULL;
    ksasl_server_config_builder *sb = NULL;
    ksasl_client_config *cc = NULL;
    ksasl_server_config *sc = NULL;
    ksasl_client_connection *c = NULL;
    ksasl_server_connection *s = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    ksasl_client_event ev = 0;
    ksasl_server_action act = 0;
    int64_t dl = 0, a = 0, b = 0, d = 0;
    int flag = 0;
    double v = 0;
    const char *m = NULL, *u = NULL;

    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "alice", "secret"));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, NULL));

    /* Client configuration builder. */
    CHECK_RC(ksasl_client_config_builder_new(NULL, "PLAIN", &cb), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_new(r, NULL, &cb), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_new(r, "PLAIN", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_new(r, BAD_UTF8, &cb), KSASL_INVALID_ARGUMENT);
    CHECK(cb == NULL);
    ksasl_client_config_builder_free(NULL);
    ksasl_client_config_free(NULL);
    CHECK_STR(ksasl_client_config_builder_last_error(NULL), "");
    CHECK_RC(ksasl_client_config_builder_set_client_id(NULL, "id"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_reauth_timing(NULL, KSASL_REAUTH_KAFKA),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_api_versions_version(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_known_versions(NULL, 1, 2), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_software(NULL, "a", "1"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_reauth_min_delay_ms(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_reauth_retry_ms(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_max_receive_size(NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_build(NULL, &cc), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(NULL, "successful-authentication-total", 0, &v),
             KSASL_NULL_ARGUMENT);
    /* The mechanism is checked when the configuration is built. */
    CHECK_OK(ksasl_client_config_builder_new(r, "OAUTHBEARER", &cb));
    CHECK_RC(ksasl_client_config_builder_build(cb, &cc), KSASL_UNKNOWN_MECHANISM);
    CHECK(cc == NULL);
    CHECK(strstr(ksasl_client_config_builder_last_error(cb), "OAUTHBEARER") != NULL);
    ksasl_client_config_builder_free(cb);
    CHECK_OK(ksasl_client_config_builder_new(r, "PLAIN", &cb));
    CHECK_STR(ksasl_client_config_builder_last_error(cb), "");
    CHECK_RC(ksasl_client_config_builder_build(cb, NULL), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_client_config_builder_set_client_id(cb, NULL));
    CHECK_OK(ksasl_client_config_builder_set_client_id(cb, "c-test"));
    CHECK_RC(ksasl_client_config_builder_set_client_id(cb, BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK(strlen(ksasl_client_config_builder_last_error(cb)) > 0);
    CHECK_RC(ksasl_client_config_builder_set_software(cb, NULL, "1"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_software(cb, "a", BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_client_config_builder_set_reauth_timing(cb, 4), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_client_config_builder_set_reauth_timing(cb, KSASL_REAUTH_FRANZ_GO));
    CHECK_OK(ksasl_client_config_builder_set_reauth_timing(cb, KSASL_REAUTH_DISABLED));
    CHECK_OK(ksasl_client_config_builder_set_reauth_timing(cb, KSASL_REAUTH_LIBRDKAFKA));
    CHECK_OK(ksasl_client_config_builder_set_reauth_timing(cb, KSASL_REAUTH_KAFKA));
    /* Values are checked when the configuration is built; a failed build changes nothing
     * and the builder stays usable (tests/c/test_config.c has every invalid value). */
    CHECK_OK(ksasl_client_config_builder_set_api_versions_version(cb, -1));
    CHECK_RC(ksasl_client_config_builder_build(cb, &cc), KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_client_config_builder_set_api_versions_version(cb, 6));
    CHECK_RC(ksasl_client_config_builder_build(cb, &cc), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_client_config_builder_last_error(cb), "ApiVersions") != NULL);
    CHECK_OK(ksasl_client_config_builder_set_api_versions_version(cb, 3));
    CHECK_OK(ksasl_client_config_builder_set_reauth_retry_ms(cb, -1));
    CHECK_RC(ksasl_client_config_builder_build(cb, &cc), KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_client_config_builder_set_reauth_retry_ms(cb, 0));
    CHECK(cc == NULL);
    CHECK_OK(ksasl_client_config_builder_build(cb, &cc));
    CHECK(cc != NULL);
    CHECK_RC(ksasl_client_config_metric(cc, NULL, 0, &v), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(cc, "successful-authentication-total", 0, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(cc, BAD_UTF8, 0, &v), KSASL_INVALID_ARGUMENT);
    v = 42;
    CHECK_RC(ksasl_client_config_metric(cc, "no-such-metric", 0, &v), KSASL_INVALID_ARGUMENT);
    CHECK(v == 42);
    CHECK(strstr(ksasl_last_constructor_error(), "no-such-metric") != NULL);
    CHECK_OK(ksasl_client_config_metric(cc, "successful-authentication-total", 0, &v));
    CHECK(v == 0);

    /* Client connection. */
    CHECK_RC(ksasl_client_connection_new(NULL, &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_new(cc, NULL), KSASL_NULL_ARGUMENT);
    CHECK(c == NULL);
    ksasl_client_connection_free(NULL);
    CHECK_STR(ksasl_client_connection_last_error(NULL), "");
    CHECK_RC(ksasl_client_connection_start(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_transmit(NULL, &out, &len), KSASL_NULL_ARGUMENT);
    CHECK_RC(
        ksasl_client_connection_handle_frame(NULL, (const uint8_t *)"x", 1, 0, &ev, &out, &len),
        KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_closed(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_client_connection_next_deadline(NULL), -1);
    CHECK_RC(ksasl_client_connection_handle_timeout(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_start_reauthentication(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_client_connection_reauth_pending(NULL, 0), 0);
    CHECK_RC(ksasl_client_connection_before_request(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_session(NULL, &a, &b, &d), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_client_connection_is_reauthenticating(NULL), 0);

    CHECK_OK(ksasl_client_connection_new(cc, &c));
    CHECK_STR(ksasl_client_connection_last_error(c), "");
    /* The built configuration is immutable: the builder changes and builds another. */
    CHECK_OK(ksasl_client_config_builder_set_client_id(cb, "late"));
    {
        ksasl_client_config *cc2 = NULL;
        CHECK_OK(ksasl_client_config_builder_build(cb, &cc2));
        CHECK(cc2 != NULL && cc2 != cc);
        ksasl_client_config_free(cc2);
    }
    /* Wrong state before start. */
    CHECK_RC(ksasl_client_connection_session(c, &a, &b, &d), KSASL_WRONG_STATE);
    CHECK_INT(ksasl_client_connection_next_deadline(c), -1);
    CHECK_INT(ksasl_client_connection_reauth_pending(c, 0), 0);
    CHECK_OK(ksasl_client_connection_handle_timeout(c, 0, NULL));
    flag = 7;
    CHECK_OK(ksasl_client_connection_handle_timeout(c, 0, &flag));
    CHECK_INT(flag, 0);
    flag = 7;
    CHECK_RC(ksasl_client_connection_start_reauthentication(c, 0, &flag), KSASL_WRONG_STATE);
    CHECK_INT(flag, 7);
    CHECK_RC(ksasl_client_connection_start_reauthentication(c, 0, NULL), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_connection_before_request(c, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_client_connection_before_request(c, 0, &flag));
    CHECK_INT(flag, 0);
    CHECK_RC(ksasl_client_connection_handle_frame(c, (const uint8_t *)"abcdefgh", 8, 0, &ev, &out,
                                                  &len),
             KSASL_WRONG_STATE);
    CHECK_OK(ksasl_client_connection_transmit(c, &out, &len));
    CHECK_INT(len, 0);
    CHECK_OK(ksasl_client_connection_start(c, 0));
    CHECK_RC(ksasl_client_connection_start(c, 0), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_connection_transmit(c, NULL, &len), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_transmit(c, &out, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_handle_frame(c, (const uint8_t *)"x", 1, 0, NULL, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_connection_handle_frame(c, NULL, 4, 0, &ev, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_client_connection_transmit(c, &out, &len));
    CHECK(len > 4);
    CHECK_INT(ksasl_client_connection_is_reauthenticating(c), 0);
    /* The broker hangs up during the exchange: the connection fails. */
    CHECK_RC(ksasl_client_connection_closed(c, 1), KSASL_CONNECTION_CLOSED);
    CHECK(strlen(ksasl_client_connection_last_error(c)) > 0);
    CHECK_RC(ksasl_client_connection_before_request(c, 2, &flag), KSASL_STEP_AFTER_FAILURE);
    CHECK_RC(ksasl_client_connection_handle_frame(c, (const uint8_t *)"abcdefgh", 8, 2, &ev, &out,
                                                  &len),
             KSASL_STEP_AFTER_FAILURE);
    ksasl_client_connection_free(c);
    c = NULL;

    /* Server configuration builder. */
    CHECK_RC(ksasl_server_config_builder_new(NULL, &sb), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_new(r, NULL), KSASL_NULL_ARGUMENT);
    ksasl_server_config_builder_free(NULL);
    ksasl_server_config_free(NULL);
    CHECK_STR(ksasl_server_config_builder_last_error(NULL), "");
    CHECK_RC(ksasl_server_config_builder_set_max_reauth_ms(NULL, NULL, 1000), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_set_failed_authentication_delay_ms(NULL, 0),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_set_reauth_retry_ms(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_set_api_version(NULL, 3, 0, 12), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_set_max_receive_size(NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_set_enabled_mechanisms(NULL, NULL, 0),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_add_token_api_versions(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_builder_build(NULL, &sc), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_metric(NULL, "successful-authentication-total", 0, &v),
             KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_server_config_builder_new(r, &sb));
    CHECK_STR(ksasl_server_config_builder_last_error(sb), "");
    CHECK_RC(ksasl_server_config_builder_build(sb, NULL), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(sb, NULL, 60000));
    CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(sb, "PLAIN", 30000));
    CHECK_RC(ksasl_server_config_builder_set_max_reauth_ms(sb, BAD_UTF8, 1),
             KSASL_INVALID_ARGUMENT);
    CHECK(strlen(ksasl_server_config_builder_last_error(sb)) > 0);
    {
        static const char *const bad[] = {"PLAIN", NULL};
        CHECK_RC(ksasl_server_config_builder_set_enabled_mechanisms(sb, NULL, 1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_config_builder_set_enabled_mechanisms(sb, bad, 2),
                 KSASL_NULL_ARGUMENT);
    }
    /* Values are checked when the configuration is built; a later value replaces a refused
     * one. */
    CHECK_OK(ksasl_server_config_builder_set_failed_authentication_delay_ms(sb, -1));
    CHECK_RC(ksasl_server_config_builder_build(sb, &sc), KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_server_config_builder_set_failed_authentication_delay_ms(sb, 0));
    CHECK_OK(ksasl_server_config_builder_set_reauth_retry_ms(sb, -5));
    CHECK_RC(ksasl_server_config_builder_build(sb, &sc), KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_server_config_builder_set_reauth_retry_ms(sb, 0));
    CHECK_OK(ksasl_server_config_builder_set_api_version(sb, 3, 5, 1));
    CHECK_RC(ksasl_server_config_builder_build(sb, &sc), KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_server_config_builder_set_api_version(sb, 3, -1, 2));
    CHECK_RC(ksasl_server_config_builder_build(sb, &sc), KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_server_config_builder_set_api_version(sb, 3, 0, 12));
    CHECK(sc == NULL);
    CHECK_OK(ksasl_server_config_builder_build(sb, &sc));
    CHECK_RC(ksasl_server_config_metric(sc, NULL, 0, &v), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_metric(sc, "successful-authentication-total", 0, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_metric(sc, BAD_UTF8, 0, &v), KSASL_INVALID_ARGUMENT);
    v = 42;
    CHECK_RC(ksasl_server_config_metric(sc, "no-such-metric", 0, &v), KSASL_INVALID_ARGUMENT);
    CHECK(v == 42);
    CHECK_OK(ksasl_server_config_metric(sc, "successful-authentication-total", 0, &v));
    CHECK(v == 0);

    /* Server connection. */
    CHECK_RC(ksasl_server_connection_new(NULL, &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_new(sc, NULL), KSASL_NULL_ARGUMENT);
    ksasl_server_connection_free(NULL);
    CHECK_STR(ksasl_server_connection_last_error(NULL), "");
    CHECK_RC(ksasl_server_connection_handle_frame(NULL, (const uint8_t *)"x", 1, 0, &act, &out,
                                                  &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_credential_request(NULL, &m, &u, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_provide_credential(NULL, KSASL_CREDENTIAL_ANSWER_PASSWORD, "p",
                                                        -1, NULL, 0, &act, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_server_connection_gate(NULL, 3, 0), KSASL_GATE_CLOSE);
    CHECK_INT(ksasl_server_connection_is_ready(NULL), 0);
    CHECK_RC(ksasl_server_connection_session(NULL, &m, NULL, NULL, &a, &d), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_error(NULL, &m, &u), KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_server_connection_new(sc, &s));
    CHECK_STR(ksasl_server_connection_last_error(s), "");
    CHECK_INT(ksasl_server_connection_is_ready(s), 0);
    CHECK_RC(ksasl_server_connection_session(s, &m, NULL, NULL, &a, &d), KSASL_WRONG_STATE);
    CHECK_OK(ksasl_server_connection_error(s, NULL, NULL));
    CHECK_RC(ksasl_server_connection_credential_request(s, &m, &u, &flag), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_connection_credential_request(s, NULL, &u, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_credential_request(s, &m, NULL, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_credential_request(s, &m, &u, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD, "p",
                                                        -1, NULL, 0, &act, &out, &len, &dl),
             KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_connection_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD, "p",
                                                        -1, NULL, 0, NULL, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD, "p",
                                                        -1, NULL, 0, &act, NULL, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_provide_credential(s, KSASL_CREDENTIAL_ANSWER_PASSWORD, "p",
                                                        -1, NULL, 0, &act, &out, NULL, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_handle_frame(s, (const uint8_t *)"x", 1, 0, NULL, &out, &len,
                                                  &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_handle_frame(s, (const uint8_t *)"x", 1, 0, &act, NULL, &len,
                                                  &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_handle_frame(s, (const uint8_t *)"x", 1, 0, &act, &out, NULL,
                                                  &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_handle_frame(s, NULL, 9, 0, &act, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    /* Garbage (with deadline_ms NULL, which is allowed) is not a Kafka request: the
     * connection fails, with a reason. */
    CHECK_OK(ksasl_server_connection_handle_frame(s, (const uint8_t *)"x", 1, 0, &act, &out, &len,
                                                  NULL));
    CHECK_INT(act, KSASL_SERVER_ACTION_FAIL_AT);
    CHECK(strlen(ksasl_server_connection_last_error(s)) > 0);
    {
        const char *why = NULL, *told = NULL;
        CHECK(ksasl_server_connection_error(s, &why, &told) != KSASL_OK);
        CHECK(why != NULL && strlen(why) > 0 && told != NULL);
    }
    ksasl_server_connection_free(s);

    ksasl_server_config_free(sc);
    ksasl_server_config_builder_free(sb);
    ksasl_client_config_free(cc);
    ksasl_client_config_builder_free(cb);
    ksasl_mechanism_registry_free(r);
}

static void null_oauth_and_refresh(void) {
    counter cnt = {0, 0};
    ksasl_oauth_token *t = NULL;
    ksasl_jwks_validator *v = NULL;
    ksasl_refresher *rf = NULL;
    ksasl_tracker *tr = NULL;
    ksasl_mechanism_registry *r = NULL;
    int flag = 0;
    const uint64_t *ids = NULL;
    size_t n = 0;

    /* Tokens. */
    CHECK_RC(ksasl_oauth_token_new_unsecured(NULL, 3600, NULL, 0, &t), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_oauth_token_new_unsecured(BAD_UTF8, 3600, NULL, 0, &t), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_oauth_token_new_unsecured("alice", 3600, BAD_UTF8, 0, &t),
             KSASL_INVALID_ARGUMENT);
    CHECK(t == NULL);
    ksasl_oauth_token_free(NULL);
    CHECK(ksasl_oauth_token_value(NULL) == NULL);
    CHECK_INT(ksasl_oauth_token_expiry_ms(NULL), -1);

    /* Registries and OAUTHBEARER servers/clients. */
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(NULL, NULL, 0),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_jwks_server(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_client(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_callback_server(NULL, never_token_cb, &cnt,
                                                                      counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(r, BAD_UTF8, 0),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(r, NULL, -1),
             KSASL_INVALID_CONFIG);
    CHECK(strlen(ksasl_mechanism_registry_last_error(r)) > 0);
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_jwks_server(r, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_client(r, NULL), KSASL_NULL_ARGUMENT);
    cnt.frees = 0;
    CHECK_RC(ksasl_mechanism_registry_add_oauthbearer_callback_server(r, NULL, &cnt, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 1), 0);
    CHECK_INT(cnt.calls, 0);

    /* Verdicts: argument checks inside a validator callback. */
    {
        counter picky = {0, 0};
        ksasl_oauth_token *tok = NULL;
        ksasl_server_exchange *srv = NULL;
        ksasl_server_step_kind st = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        buf first = {0};
        CHECK_RC(ksasl_oauth_verdict_accept(NULL, "alice", 1), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_oauth_verdict_reject(NULL, NULL), KSASL_NULL_ARGUMENT);
        CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_callback_server(r, picky_token_cb, &picky,
                                                                          counter_free));
        CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, 0, &tok));
        buf_append(&first, (const uint8_t *)"n,,\x01" "auth=Bearer ", 16);
        buf_append(&first, (const uint8_t *)ksasl_oauth_token_value(tok),
                   strlen(ksasl_oauth_token_value(tok)));
        buf_append(&first, (const uint8_t *)"\x01\x01", 2);
        CHECK_OK(ksasl_server_exchange_new(r, "OAUTHBEARER", &srv));
        CHECK_OK(ksasl_server_exchange_step(srv, first.data, first.len, 1000, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_CHALLENGE); /* rejected: the JSON error challenge */
        CHECK_INT(picky.calls, 1);
        ksasl_server_exchange_free(srv);
        ksasl_oauth_token_free(tok);
        buf_free(&first);
        ksasl_mechanism_registry_free(r);
        r = NULL;
        CHECK_INT(picky.frees, 1);
    }

    /* JWKS validators. */
    CHECK_RC(ksasl_jwks_validator_new(NULL, NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_jwks_validator_new(BAD_UTF8, NULL, &v), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_jwks_validator_new(NULL, BAD_UTF8, &v), KSASL_INVALID_ARGUMENT);
    CHECK(v == NULL);
    ksasl_jwks_validator_free(NULL);
    CHECK_STR(ksasl_jwks_validator_last_error(NULL), "");
    CHECK_RC(ksasl_jwks_validator_set_jwks(NULL, "{\"keys\":[]}", 0), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_jwks_validator_next_refresh_ms(NULL), -1);
    CHECK_OK(ksasl_jwks_validator_new(NULL, NULL, &v));
    CHECK_RC(ksasl_jwks_validator_set_jwks(v, NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_jwks_validator_set_jwks(v, BAD_UTF8, 0), KSASL_INVALID_ARGUMENT);
    ksasl_jwks_validator_free(v);

    /* Refresher. */
    CHECK_RC(ksasl_refresher_new(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_config_builder_new(NULL), KSASL_NULL_ARGUMENT);
    ksasl_refresher_config_builder_free(NULL);
    ksasl_refresher_config_free(NULL);
    CHECK_STR(ksasl_refresher_config_builder_last_error(NULL), "");
    CHECK_RC(ksasl_refresher_config_builder_set_window_factor(NULL, 0.8), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_config_builder_set_window_jitter(NULL, 0.05), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_config_builder_set_min_period_seconds(NULL, 60), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_config_builder_set_buffer_seconds(NULL, 300), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_config_builder_set_retry_backoff_ms(NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_config_builder_set_retry_backoff_max_ms(NULL, 1), KSASL_NULL_ARGUMENT);
    {
        ksasl_refresher_config_builder *rb = NULL;
        ksasl_refresher_config *rc = NULL;
        CHECK_OK(ksasl_refresher_config_builder_new(&rb));
        CHECK_RC(ksasl_refresher_config_builder_build(NULL, &rc), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_refresher_config_builder_build(rb, NULL), KSASL_NULL_ARGUMENT);
        CHECK_OK(ksasl_refresher_config_builder_build(rb, &rc));
        CHECK_RC(ksasl_refresher_new(rc, NULL), KSASL_NULL_ARGUMENT);
        ksasl_refresher_config_free(rc);
        ksasl_refresher_config_builder_free(rb);
    }
    ksasl_refresher_free(NULL);
    CHECK_STR(ksasl_refresher_last_error(NULL), "");
    cnt.frees = 0;
    CHECK_RC(ksasl_refresher_set_refresh_callback(NULL, never_refresh_cb, &cnt, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_RC(ksasl_refresher_run_due(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_invoke_callback(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_refresher_poll(NULL, 0), 0);
    CHECK_RC(ksasl_refresher_set_token(NULL, "tok", 1000, "alice", NULL, NULL, 0, 0),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_set_token_failure(NULL, "no", 0), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_refresher_next_deadline(NULL), -1);
    CHECK_INT(ksasl_refresher_generation(NULL), 0);

    CHECK_OK(ksasl_refresher_new(NULL, &rf));
    CHECK_STR(ksasl_refresher_last_error(rf), "");
    cnt.frees = 0;
    CHECK_RC(ksasl_refresher_set_refresh_callback(rf, NULL, &cnt, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_OK(ksasl_refresher_run_due(rf, 0, NULL));
    {
        static const char *const names[] = {"k1", NULL};
        static const char *const values[] = {"v1", "v2"};
        static const char *const bad_names[] = {"\xff\xfe"};
        CHECK_RC(ksasl_refresher_set_token(rf, NULL, 1000000, "alice", NULL, NULL, 0, 0),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, NULL, NULL, NULL, 0, 0),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, BAD_UTF8, 1000000, "alice", NULL, NULL, 0, 0),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, BAD_UTF8, NULL, NULL, 0, 0),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, "alice", NULL, values, 1, 0),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, "alice", names, NULL, 1, 0),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, "alice", names, values, 2, 0),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, "alice", bad_names, values, 1, 0),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_refresher_set_token(rf, "tok", 1000000, "alice", values, bad_names, 1, 0),
                 KSASL_INVALID_ARGUMENT);
        CHECK(strlen(ksasl_refresher_last_error(rf)) > 0);
    }
    CHECK_RC(ksasl_refresher_set_token_failure(rf, BAD_UTF8, 0), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_refresher_set_token_failure(rf, NULL, 0));
    CHECK_INT(ksasl_refresher_generation(rf), 0);

    /* Tracker. */
    CHECK_RC(ksasl_tracker_new(NULL, 0, &tr), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_tracker_new(rf, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_tracker_new(rf, -1, &tr), KSASL_INVALID_CONFIG);
    CHECK(tr == NULL);
    ksasl_tracker_free(NULL);
    CHECK_STR(ksasl_tracker_last_error(NULL), "");
    CHECK_RC(ksasl_tracker_authenticated(NULL, 1, 1, 1000, -1, -1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_tracker_forget(NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_tracker_next_deadline(NULL), -1);
    CHECK_RC(ksasl_tracker_poll(NULL, 0, &flag, &ids, &n), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_tracker_new(rf, 0, &tr));
    CHECK_STR(ksasl_tracker_last_error(tr), "");
    CHECK_RC(ksasl_tracker_poll(tr, 0, NULL, &ids, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_tracker_poll(tr, 0, &flag, NULL, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_tracker_poll(tr, 0, &flag, &ids, NULL), KSASL_NULL_ARGUMENT);
    CHECK(strlen(ksasl_tracker_last_error(tr)) > 0);
    ksasl_tracker_free(tr);
    ksasl_refresher_free(rf);
}

/* Every read-only function takes a const handle: this function compiles (-Werror) only if so.
 * Called with NULL handles, each gives its documented default. */
static void const_getters(const ksasl_credential_request *req, const ksasl_mechanism_registry *r,
                          const ksasl_client_exchange *ce, const ksasl_server_exchange *se,
                          const ksasl_client_config *cc, const ksasl_server_config *sc,
                          const ksasl_client_connection *c, const ksasl_server_connection *s,
                          const ksasl_oauth_token *t, const ksasl_jwks_validator *v,
                          const ksasl_refresher *rf, const ksasl_tracker *tr,
                          const ksasl_delegation_token *dt, const ksasl_delegation_token_list *dl,
                          const ksasl_token_authority *a, const ksasl_delegation_token_codec *k) {
    const char *str = NULL;
    int flag = 0;
    int64_t n = 0;
    double d = 0;
    const uint8_t *bytes = NULL;
    size_t len = 0;
    CHECK(ksasl_credential_request_mechanism(req) == NULL);
    CHECK(ksasl_credential_request_username(req) == NULL);
    CHECK_INT(ksasl_credential_request_token_authenticated(req), 0);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 0);
    CHECK(ksasl_client_exchange_pending_work(ce) == NULL);
    CHECK(ksasl_server_exchange_pending_work(se) == NULL);
    CHECK_STR(ksasl_server_exchange_client_message(se), "");
    CHECK_RC(ksasl_server_exchange_credential_request(se, &str, &str, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_outcome(se, &str, &str, &str, &n, &flag, &n, &n),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(cc, "x", 0, &d), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_metric(sc, "x", 0, &d), KSASL_NULL_ARGUMENT);
    CHECK(ksasl_client_connection_pending_work(c) == NULL);
    CHECK_INT(ksasl_client_connection_next_deadline(c), -1);
    CHECK_INT(ksasl_client_connection_reauth_pending(c, 0), 0);
    CHECK_INT(ksasl_client_connection_is_reauthenticating(c), 0);
    CHECK_RC(ksasl_client_connection_session(c, &n, &n, &n), KSASL_NULL_ARGUMENT);
    CHECK(ksasl_server_connection_pending_work(s) == NULL);
    CHECK_INT(ksasl_server_connection_gate(s, 3, 0), KSASL_GATE_CLOSE);
    CHECK_INT(ksasl_server_connection_is_ready(s), 0);
    CHECK_RC(ksasl_server_connection_credential_request(s, &str, &str, &flag),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_session(s, &str, &str, &flag, &n, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_error(s, &str, &str), KSASL_NULL_ARGUMENT);
    CHECK(ksasl_oauth_token_value(t) == NULL);
    CHECK_INT(ksasl_oauth_token_expiry_ms(t), -1);
    CHECK_INT(ksasl_jwks_validator_next_refresh_ms(v), -1);
    CHECK_INT(ksasl_refresher_poll(rf, 0), 0);
    CHECK_INT(ksasl_refresher_next_deadline(rf), -1);
    CHECK_INT(ksasl_refresher_generation(rf), 0);
    CHECK_INT(ksasl_tracker_next_deadline(tr), -1);
    CHECK(ksasl_delegation_token_id(dt) == NULL && ksasl_delegation_token_owner(dt) == NULL);
    CHECK(ksasl_delegation_token_requester(dt) == NULL);
    CHECK(ksasl_delegation_token_hmac_base64(dt) == NULL);
    CHECK_RC(ksasl_delegation_token_hmac(dt, &bytes, &len), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_delegation_token_renewer_count(dt), 0);
    CHECK(ksasl_delegation_token_renewer(dt, 0) == NULL);
    CHECK_INT(ksasl_delegation_token_issue_ms(dt) + ksasl_delegation_token_expiry_ms(dt) +
                  ksasl_delegation_token_max_ms(dt),
              -3);
    CHECK_INT(ksasl_delegation_token_list_count(dl), 0);
    CHECK(ksasl_delegation_token_list_get(dl, 0) == NULL);
    CHECK_INT(ksasl_token_authority_next_sweep_ms(a), -1);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(k), 0);
    /* Last errors read const handles too. */
    CHECK_STR(ksasl_client_exchange_last_error(ce), "");
    CHECK_STR(ksasl_server_connection_last_error(s), "");
}

void test_null_arguments(void) {
    const_getters(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                  NULL, NULL, NULL);
    null_store_and_registry();
    null_exchanges();
    null_conns();
    null_oauth_and_refresh();
}
