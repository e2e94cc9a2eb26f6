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

    /* ksasl_last_constructor_error: set by a failed constructor on this thread. */
    {
        ksasl_refresher *r = NULL;
        CHECK_RC(ksasl_refresher_new(2.0, 0.05, 60, 300, &r), KSASL_INVALID_CONFIG);
        CHECK(r == NULL);
        const char *e = ksasl_last_constructor_error();
        CHECK(e != NULL && strstr(e, "sasl.login.refresh.window.factor") != NULL);
        ksasl_registry *reg = NULL;
        CHECK_OK(ksasl_registry_new(&reg));
        /* Out-parameters are written only on success. */
        static char sentinel;
        ksasl_client *const before = (ksasl_client *)(void *)&sentinel;
        ksasl_client *c = before;
        CHECK_RC(ksasl_client_new(reg, "NO-SUCH-MECH", &c), KSASL_UNKNOWN_MECHANISM);
        CHECK(c == before);
        e = ksasl_last_constructor_error();
        CHECK(e != NULL && strlen(e) > 0);
        ksasl_registry_free(reg);
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
                          ksasl_token_verdict *verdict) {
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
    CHECK_INT(ksasl_credential_request_token_auth(request), 0);
    CHECK_RC(ksasl_credential_answer_set(NULL, KSASL_CREDENTIAL_PASSWORD, "secret", -1, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_PASSWORD, NULL, -1, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_SCRAM, NULL, -1, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_PASSWORD, BAD_UTF8, -1, NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_PASSWORD, "x", -1, BAD_UTF8),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_UNAVAILABLE, BAD_UTF8, -1,
                                         NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, 0, "secret", -1, NULL), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, 99, "secret", -1, NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_SCRAM, "salt=nope", -1, NULL),
             KSASL_INVALID_CREDENTIAL_FORMAT);
    /* The last answer wins. */
    CHECK_OK(ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_PASSWORD, "secret", -1, NULL));
    return 0;
}

static int picky_token_cb(void *userdata, const char *token, int64_t now_ms,
                          ksasl_token_verdict *verdict) {
    counter *c = userdata;
    c->calls++;
    (void)now_ms;
    CHECK(token != NULL);
    CHECK_RC(ksasl_token_verdict_accept(NULL, "alice", 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_verdict_accept(verdict, NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_verdict_accept(verdict, "", 1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_verdict_accept(verdict, BAD_UTF8, 1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_verdict_reject(NULL, "no"), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_token_verdict_reject(verdict, NULL));
    CHECK_OK(ksasl_token_verdict_reject(verdict, BAD_UTF8)); /* the reason is best effort */
    return 0;
}

static void null_store_and_registry(void) {
    counter cnt = {0, 0};
    int existed = 7;

    CHECK_RC(ksasl_store_new(NULL), KSASL_NULL_ARGUMENT);
    ksasl_store_free(NULL);
    CHECK_STR(ksasl_store_last_error(NULL), "");
    CHECK_RC(ksasl_store_add_user(NULL, "u", "p", 4096), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(NULL, "u", "SCRAM-SHA-256", "x"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_set_user_expiry(NULL, "u", 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_remove_user(NULL, "u", &existed), KSASL_NULL_ARGUMENT);
    CHECK_INT(existed, 7);
    CHECK_RC(ksasl_store_set_token(NULL, "t", "SCRAM-SHA-256", "x", "o", -1),
             KSASL_NULL_ARGUMENT);

    ksasl_store *s = NULL;
    CHECK_OK(ksasl_store_new(&s));
    CHECK(s != NULL);
    CHECK_STR(ksasl_store_last_error(s), "");
    CHECK_RC(ksasl_store_add_user(s, NULL, "p", 4096), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_store_last_error(s), "username") != NULL);
    CHECK_RC(ksasl_store_add_user(s, "u", NULL, 4096), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_add_user(s, BAD_UTF8, "p", 4096), KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_store_last_error(s), "UTF-8") != NULL);
    CHECK_RC(ksasl_store_add_user(s, "u", BAD_UTF8, 4096), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_add_user(s, "", "p", 4096), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_add_user(s, "u", "p", 100), KSASL_CREDENTIAL_ITERATIONS_TOO_LOW);
    CHECK(strstr(ksasl_store_last_error(s), "iterations") != NULL);

    CHECK_RC(ksasl_store_set_scram(s, NULL, "SCRAM-SHA-256", RFC7677_KAFKA_CREDENTIAL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, "u", NULL, RFC7677_KAFKA_CREDENTIAL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, "u", "SCRAM-SHA-256", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, BAD_UTF8, "SCRAM-SHA-256", RFC7677_KAFKA_CREDENTIAL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, "", "SCRAM-SHA-256", RFC7677_KAFKA_CREDENTIAL),
             KSASL_INVALID_ARGUMENT);
    /* A SHA-256 credential (32-byte keys) is not a SHA-512 one. */
    CHECK_RC(ksasl_store_set_scram(s, "u", "SCRAM-SHA-512", RFC7677_KAFKA_CREDENTIAL),
             KSASL_INVALID_CREDENTIAL_FORMAT);
    CHECK_RC(ksasl_store_set_scram(s, "u", BAD_UTF8, "x"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, "u", "SCRAM-SHA-256", BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, "u", "PLAIN", "x"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_set_scram(s, "u", "SCRAM-SHA-256", "salt=AAAA"),
             KSASL_INVALID_CREDENTIAL_FORMAT);
    CHECK_RC(ksasl_store_set_scram(s, "u", "SCRAM-SHA-256",
                                   "salt=!!!,stored_key=AAAA,server_key=AAAA,iterations=4096"),
             KSASL_INVALID_CREDENTIAL_FORMAT);

    CHECK_RC(ksasl_store_set_user_expiry(s, NULL, 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_set_user_expiry(s, BAD_UTF8, 1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_store_set_user_expiry(s, "nobody", 1), KSASL_INVALID_ARGUMENT);

    CHECK_RC(ksasl_store_remove_user(s, NULL, &existed), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_store_remove_user(s, BAD_UTF8, &existed), KSASL_INVALID_ARGUMENT);
    CHECK_INT(existed, 7);
    CHECK_OK(ksasl_store_remove_user(s, "nobody", NULL));
    CHECK_OK(ksasl_store_remove_user(s, "nobody", &existed));
    CHECK_INT(existed, 0);

    {
        static const char cred[] =
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,"
            "server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096";
        CHECK_RC(ksasl_store_set_token(s, NULL, "SCRAM-SHA-256", cred, "o", -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", NULL, cred, "o", -1), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", "SCRAM-SHA-256", NULL, "o", -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", "SCRAM-SHA-256", cred, NULL, -1),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, BAD_UTF8, "SCRAM-SHA-256", cred, "o", -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", BAD_UTF8, cred, "o", -1), KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", "SCRAM-SHA-256", BAD_UTF8, "o", -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", "SCRAM-SHA-256", cred, BAD_UTF8, -1),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_store_set_token(s, "t", "PLAIN", cred, "o", -1), KSASL_INVALID_ARGUMENT);
        CHECK_OK(ksasl_store_set_token(s, "t", "SCRAM-SHA-256", cred, "o", -1));
    }

    /* Credential request accessors (outside a callback they only see NULL). */
    CHECK(ksasl_credential_request_mechanism(NULL) == NULL);
    CHECK(ksasl_credential_request_username(NULL) == NULL);
    CHECK_INT(ksasl_credential_request_token_auth(NULL), 0);
    CHECK_RC(ksasl_credential_answer_set(NULL, KSASL_CREDENTIAL_UNKNOWN, NULL, -1, NULL),
             KSASL_NULL_ARGUMENT);

    /* Registry. */
    CHECK_RC(ksasl_registry_new(NULL), KSASL_NULL_ARGUMENT);
    ksasl_registry_free(NULL);
    CHECK_STR(ksasl_registry_last_error(NULL), "");
    CHECK_INT(ksasl_registry_mechanism_count(NULL, 0), 0);
    CHECK_INT(ksasl_registry_mechanism_count(NULL, 1), 0);
    CHECK_RC(ksasl_registry_add_password_servers(NULL, s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_password_servers(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_password_clients(NULL, "u", "p"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_token_clients(NULL, "t", "h"), KSASL_NULL_ARGUMENT);
    /* A refused callback's userdata is freed at once (exactly once), and never called. */
    CHECK_RC(ksasl_registry_set_credential_callback(NULL, never_credential_cb, &cnt,
                                                    counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_RC(ksasl_registry_set_credential_callback(NULL, never_credential_cb, NULL, NULL),
             KSASL_NULL_ARGUMENT);

    ksasl_registry *r = NULL;
    CHECK_OK(ksasl_registry_new(&r));
    CHECK_STR(ksasl_registry_last_error(r), "");
    CHECK_INT(ksasl_registry_mechanism_count(r, 0), 0);
    CHECK_INT(ksasl_registry_mechanism_count(r, 1), 0);
    cnt.frees = 0;
    CHECK_RC(ksasl_registry_set_credential_callback(r, NULL, &cnt, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK(strstr(ksasl_registry_last_error(r), "cb") != NULL);
    CHECK_RC(ksasl_registry_add_password_clients(r, NULL, "p"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_password_clients(r, "u", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_password_clients(r, BAD_UTF8, "p"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_registry_add_password_clients(r, "u", BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_registry_add_token_clients(r, NULL, "h"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_token_clients(r, "t", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_token_clients(r, BAD_UTF8, "h"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_registry_add_token_clients(r, "t", BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK_INT(ksasl_registry_mechanism_count(r, 0), 0);
    CHECK_OK(ksasl_registry_add_password_clients(r, "alice", "secret"));
    CHECK_INT(ksasl_registry_mechanism_count(r, 0), 3);
    CHECK_INT(ksasl_registry_mechanism_count(r, 1), 0);
    CHECK_OK(ksasl_registry_add_password_servers(r, NULL));
    CHECK_INT(ksasl_registry_mechanism_count(r, 1), 3);
    CHECK_INT(ksasl_registry_mechanism_count(r, 7), 3); /* any non-zero means servers */
    CHECK_INT(cnt.calls, 0);

    /* Inside a credential callback: ksasl_credential_answer_set's argument checks. */
    {
        counter picky = {0, 0};
        ksasl_server *srv = NULL;
        ksasl_server_status st = 0;
        const uint8_t *out = NULL;
        size_t out_len = 0;
        static const uint8_t plain[] = "\0alice\0secret";
        CHECK_OK(ksasl_registry_set_credential_callback(r, picky_credential_cb, &picky,
                                                        counter_free));
        CHECK_OK(ksasl_server_new(r, "PLAIN", &srv));
        CHECK_OK(ksasl_server_step(srv, plain, sizeof plain - 1, 0, &st, &out, &out_len));
        CHECK_INT(st, KSASL_SERVER_DONE);
        CHECK_INT(picky.calls, 1);
        ksasl_server_free(srv);
        ksasl_registry_free(r);
        CHECK_INT(picky.frees, 1);
    }
    ksasl_store_free(s);
}

static void null_exchanges(void) {
    ksasl_registry *r = NULL;
    ksasl_client *c = NULL;
    ksasl_server *s = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    int done = 0;
    ksasl_server_status st = 0;
    const char *m = NULL, *u = NULL;
    int ta = 0;

    CHECK_OK(ksasl_registry_new(&r));
    CHECK_OK(ksasl_registry_add_password_clients(r, "alice", "secret"));
    CHECK_OK(ksasl_registry_add_password_servers(r, NULL));

    /* Client exchange. */
    CHECK_RC(ksasl_client_new(NULL, "PLAIN", &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_new(r, NULL, &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_new(r, "PLAIN", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_new(r, BAD_UTF8, &c), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_client_new(r, "GSSAPI", &c), KSASL_UNKNOWN_MECHANISM);
    CHECK(c == NULL);
    ksasl_client_free(NULL);
    CHECK_STR(ksasl_client_last_error(NULL), "");
    CHECK_RC(ksasl_client_start(NULL, 0, &out, &len, &done), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_step(NULL, (const uint8_t *)"x", 1, 0, &out, &len, &done),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_server_failed(NULL, "no"), KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_client_new(r, "SCRAM-SHA-256", &c));
    CHECK_STR(ksasl_client_last_error(c), "");
    /* NULL out-parameters are refused before any work: the client can still start. */
    CHECK_RC(ksasl_client_start(c, 0, NULL, &len, &done), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_start(c, 0, &out, NULL, &done), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_start(c, 0, &out, &len, NULL), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_client_last_error(c), "done") != NULL);
    CHECK_OK(ksasl_client_start(c, 0, &out, &len, &done));
    CHECK(out != NULL && len > 0 && done == 0);
    CHECK_RC(ksasl_client_step(c, (const uint8_t *)"x", 1, 0, NULL, &len, &done),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_step(c, (const uint8_t *)"x", 1, 0, &out, NULL, &done),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_step(c, (const uint8_t *)"x", 1, 0, &out, &len, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_step(c, NULL, 5, 0, &out, &len, &done), KSASL_NULL_ARGUMENT);
    /* NULL with length 0 is an empty challenge: SCRAM refuses it as malformed. */
    CHECK(ksasl_client_step(c, NULL, 0, 0, &out, &len, &done) != KSASL_OK);
    ksasl_client_free(c);
    c = NULL;

    CHECK_OK(ksasl_client_new(r, "PLAIN", &c));
    CHECK_RC(ksasl_client_server_failed(c, BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK(ksasl_client_server_failed(c, NULL) != KSASL_OK);
    CHECK(strlen(ksasl_client_last_error(c)) > 0);
    ksasl_client_free(c);

    /* Server exchange. */
    CHECK_RC(ksasl_server_new(NULL, "PLAIN", &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_new(r, NULL, &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_new(r, "PLAIN", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_new(r, BAD_UTF8, &s), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_server_new(r, "OAUTHBEARER", &s), KSASL_UNKNOWN_MECHANISM);
    CHECK(s == NULL);
    ksasl_server_free(NULL);
    CHECK_STR(ksasl_server_last_error(NULL), "");
    CHECK_STR(ksasl_server_client_message(NULL), "");
    CHECK_RC(ksasl_server_step(NULL, (const uint8_t *)"x", 1, 0, &st, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_credential_request(NULL, &m, &u, &ta), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_provide_credential(NULL, KSASL_CREDENTIAL_PASSWORD, "p", -1, NULL, 0,
                                             &st, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_outcome(NULL, NULL, NULL, NULL, NULL, NULL), KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_server_new(r, "PLAIN", &s));
    CHECK_STR(ksasl_server_last_error(s), "");
    CHECK_STR(ksasl_server_client_message(s), "");
    {
        static const uint8_t plain[] = "\0alice\0secret";
        CHECK_RC(ksasl_server_step(s, plain, sizeof plain - 1, 0, NULL, &out, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_step(s, plain, sizeof plain - 1, 0, &st, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_step(s, plain, sizeof plain - 1, 0, &st, &out, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_step(s, NULL, 3, 0, &st, &out, &len), KSASL_NULL_ARGUMENT);
        /* None of the refused calls consumed the exchange. */
        CHECK_OK(ksasl_server_step(s, plain, sizeof plain - 1, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_NEED_CREDENTIAL);
        CHECK_RC(ksasl_server_credential_request(s, NULL, &u, &ta), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_credential_request(s, &m, NULL, &ta), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_credential_request(s, &m, &u, NULL), KSASL_NULL_ARGUMENT);
        CHECK_OK(ksasl_server_credential_request(s, &m, &u, &ta));
        CHECK_STR(m, "PLAIN");
        CHECK_STR(u, "alice");
        CHECK_INT(ta, 0);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "secret", -1,
                                                 NULL, 0, NULL, &out, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "secret", -1,
                                                 NULL, 0, &st, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "secret", -1,
                                                 NULL, 0, &st, &out, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, NULL, -1, NULL, 0,
                                                 &st, &out, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, BAD_UTF8, -1,
                                                 NULL, 0, &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "secret", -1,
                                                 BAD_UTF8, 0, &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_LATER, NULL, -1, NULL, 0,
                                                 &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_server_provide_credential(s, 42, "secret", -1, NULL, 0, &st, &out, &len),
                 KSASL_INVALID_ARGUMENT);
        /* The request is still pending after refused answers. */
        CHECK_OK(ksasl_server_credential_request(s, &m, &u, &ta));
        CHECK_OK(ksasl_server_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "secret", -1,
                                                 NULL, 0, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_DONE);
        /* All of the outcome's out-parameters are optional. */
        CHECK_OK(ksasl_server_outcome(s, NULL, NULL, NULL, NULL, NULL));
    }
    ksasl_server_free(s);
    ksasl_registry_free(r);
}

static void null_conns(void) {
    ksasl_registry *r = NULL;
    ksasl_client_config *cc = NULL;
    ksasl_server_config *sc = NULL;
    ksasl_client_conn *c = NULL;
    ksasl_server_conn *s = NULL;
    const uint8_t *out = NULL;
    size_t len = 0;
    ksasl_client_event ev = 0;
    ksasl_server_action act = 0;
    int64_t dl = 0, a = 0, b = 0, d = 0;
    int flag = 0;
    double v = 0;
    const char *m = NULL, *u = NULL;

    CHECK_OK(ksasl_registry_new(&r));
    CHECK_OK(ksasl_registry_add_password_clients(r, "alice", "secret"));
    CHECK_OK(ksasl_registry_add_password_servers(r, NULL));

    /* Client configuration. */
    CHECK_RC(ksasl_client_config_new(NULL, "PLAIN", &cc), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_new(r, NULL, &cc), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_new(r, "PLAIN", NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_new(r, BAD_UTF8, &cc), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_client_config_new(r, "OAUTHBEARER", &cc), KSASL_UNKNOWN_MECHANISM);
    CHECK(cc == NULL);
    ksasl_client_config_free(NULL);
    CHECK_STR(ksasl_client_config_last_error(NULL), "");
    CHECK_RC(ksasl_client_config_set_client_id(NULL, "id"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_set_reauth_timing(NULL, KSASL_REAUTH_KAFKA),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_set_api_versions_version(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_set_reauth_retry(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(NULL, "successful-authentication-total", 0, &v),
             KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_client_config_new(r, "PLAIN", &cc));
    CHECK_STR(ksasl_client_config_last_error(cc), "");
    CHECK_RC(ksasl_client_config_metric(cc, NULL, 0, &v), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(cc, "successful-authentication-total", 0, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_config_metric(cc, BAD_UTF8, 0, &v), KSASL_INVALID_ARGUMENT);
    v = 42;
    CHECK_RC(ksasl_client_config_metric(cc, "no-such-metric", 0, &v), KSASL_INVALID_ARGUMENT);
    CHECK(v == 42);
    CHECK_OK(ksasl_client_config_metric(cc, "successful-authentication-total", 0, &v));
    CHECK(v == 0);
    CHECK_OK(ksasl_client_config_set_client_id(cc, NULL));
    CHECK_OK(ksasl_client_config_set_client_id(cc, "c-test"));
    CHECK_RC(ksasl_client_config_set_client_id(cc, BAD_UTF8), KSASL_INVALID_ARGUMENT);
    CHECK(strlen(ksasl_client_config_last_error(cc)) > 0);
    CHECK_RC(ksasl_client_config_set_reauth_timing(cc, 4), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_client_config_set_reauth_timing(cc, KSASL_REAUTH_FRANZ_GO));
    CHECK_OK(ksasl_client_config_set_reauth_timing(cc, KSASL_REAUTH_DISABLED));
    CHECK_OK(ksasl_client_config_set_reauth_timing(cc, KSASL_REAUTH_LIBRDKAFKA));
    CHECK_OK(ksasl_client_config_set_reauth_timing(cc, KSASL_REAUTH_KAFKA));
    CHECK_RC(ksasl_client_config_set_api_versions_version(cc, -1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_client_config_set_api_versions_version(cc, 6), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_client_config_set_api_versions_version(cc, 3));
    CHECK_RC(ksasl_client_config_set_reauth_retry(cc, -1), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_client_config_set_reauth_retry(cc, 0));

    /* Client connection. */
    CHECK_RC(ksasl_client_conn_new(NULL, &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_new(cc, NULL), KSASL_NULL_ARGUMENT);
    CHECK(c == NULL);
    ksasl_client_conn_free(NULL);
    CHECK_STR(ksasl_client_conn_last_error(NULL), "");
    CHECK_RC(ksasl_client_conn_start(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_transmit(NULL, &out, &len), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_handle_frame(NULL, (const uint8_t *)"x", 1, 0, &ev, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_closed(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_client_conn_next_deadline(NULL), -1);
    CHECK_RC(ksasl_client_conn_handle_timeout(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_start_reauthentication(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_client_conn_reauth_pending(NULL, 0), 0);
    CHECK_RC(ksasl_client_conn_before_request(NULL, 0, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_session(NULL, &a, &b, &d), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_client_conn_is_reauthenticating(NULL), 0);

    CHECK_OK(ksasl_client_conn_new(cc, &c));
    CHECK_STR(ksasl_client_conn_last_error(c), "");
    /* The configuration is shared by a live connection now: it can no longer change. */
    CHECK_RC(ksasl_client_config_set_client_id(cc, "late"), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_config_set_reauth_timing(cc, KSASL_REAUTH_KAFKA), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_config_set_api_versions_version(cc, 0), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_config_set_reauth_retry(cc, 0), KSASL_WRONG_STATE);
    /* Wrong state before start. */
    CHECK_RC(ksasl_client_conn_session(c, &a, &b, &d), KSASL_WRONG_STATE);
    CHECK_INT(ksasl_client_conn_next_deadline(c), -1);
    CHECK_INT(ksasl_client_conn_reauth_pending(c, 0), 0);
    CHECK_OK(ksasl_client_conn_handle_timeout(c, 0, NULL));
    flag = 7;
    CHECK_OK(ksasl_client_conn_handle_timeout(c, 0, &flag));
    CHECK_INT(flag, 0);
    flag = 7;
    CHECK_RC(ksasl_client_conn_start_reauthentication(c, 0, &flag), KSASL_WRONG_STATE);
    CHECK_INT(flag, 7);
    CHECK_RC(ksasl_client_conn_start_reauthentication(c, 0, NULL), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_conn_before_request(c, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_client_conn_before_request(c, 0, &flag));
    CHECK_INT(flag, 0);
    CHECK_RC(ksasl_client_conn_handle_frame(c, (const uint8_t *)"abcdefgh", 8, 0, &ev, &out,
                                            &len),
             KSASL_WRONG_STATE);
    CHECK_OK(ksasl_client_conn_transmit(c, &out, &len));
    CHECK_INT(len, 0);
    CHECK_OK(ksasl_client_conn_start(c, 0));
    CHECK_RC(ksasl_client_conn_start(c, 0), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_conn_transmit(c, NULL, &len), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_transmit(c, &out, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_handle_frame(c, (const uint8_t *)"x", 1, 0, NULL, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_client_conn_handle_frame(c, NULL, 4, 0, &ev, &out, &len),
             KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_client_conn_transmit(c, &out, &len));
    CHECK(len > 4);
    CHECK_INT(ksasl_client_conn_is_reauthenticating(c), 0);
    /* The broker hangs up during the exchange: the connection fails. */
    CHECK_RC(ksasl_client_conn_closed(c, 1), KSASL_CONNECTION_CLOSED);
    CHECK(strlen(ksasl_client_conn_last_error(c)) > 0);
    CHECK_RC(ksasl_client_conn_before_request(c, 2, &flag), KSASL_STEP_AFTER_FAILURE);
    CHECK_RC(ksasl_client_conn_handle_frame(c, (const uint8_t *)"abcdefgh", 8, 2, &ev, &out,
                                            &len),
             KSASL_STEP_AFTER_FAILURE);
    ksasl_client_conn_free(c);
    c = NULL;
    /* With its connection gone the configuration can change again. */
    CHECK_OK(ksasl_client_config_set_client_id(cc, "again"));

    /* Server configuration. */
    CHECK_RC(ksasl_server_config_new(NULL, &sc), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_new(r, NULL), KSASL_NULL_ARGUMENT);
    ksasl_server_config_free(NULL);
    CHECK_STR(ksasl_server_config_last_error(NULL), "");
    CHECK_RC(ksasl_server_config_set_max_reauth_ms(NULL, NULL, 1000), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_set_failed_auth_delay_ms(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_set_reauth_retry(NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_add_api_version(NULL, 3, 0, 12), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_config_metric(NULL, "successful-authentication-total", 0, &v),
             KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_server_config_new(r, &sc));
    CHECK_STR(ksasl_server_config_last_error(sc), "");
    CHECK_OK(ksasl_server_config_set_max_reauth_ms(sc, NULL, 60000));
    CHECK_OK(ksasl_server_config_set_max_reauth_ms(sc, "PLAIN", 30000));
    CHECK_RC(ksasl_server_config_set_max_reauth_ms(sc, BAD_UTF8, 1), KSASL_INVALID_ARGUMENT);
    CHECK(strlen(ksasl_server_config_last_error(sc)) > 0);
    CHECK_RC(ksasl_server_config_set_failed_auth_delay_ms(sc, -1), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_server_config_set_failed_auth_delay_ms(sc, 0));
    CHECK_RC(ksasl_server_config_set_reauth_retry(sc, -5), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_server_config_set_reauth_retry(sc, 0));
    CHECK_RC(ksasl_server_config_add_api_version(sc, 3, 5, 1), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_server_config_add_api_version(sc, 3, -1, 2), KSASL_INVALID_ARGUMENT);
    CHECK_OK(ksasl_server_config_add_api_version(sc, 3, 0, 12));
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
    CHECK_RC(ksasl_server_conn_new(NULL, &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_new(sc, NULL), KSASL_NULL_ARGUMENT);
    ksasl_server_conn_free(NULL);
    CHECK_STR(ksasl_server_conn_last_error(NULL), "");
    CHECK_RC(ksasl_server_conn_handle_frame(NULL, (const uint8_t *)"x", 1, 0, &act, &out, &len,
                                            &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_credential_request(NULL, &m, &u, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_provide_credential(NULL, KSASL_CREDENTIAL_PASSWORD, "p", -1, NULL,
                                                  0, &act, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_server_conn_gate(NULL, 3, 0), KSASL_GATE_CLOSE_EXPIRED);
    CHECK_INT(ksasl_server_conn_is_ready(NULL), 0);
    CHECK_RC(ksasl_server_conn_session(NULL, &m, &a, &d), KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_server_conn_new(sc, &s));
    CHECK_STR(ksasl_server_conn_last_error(s), "");
    CHECK_RC(ksasl_server_config_set_max_reauth_ms(sc, NULL, 1), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_config_set_failed_auth_delay_ms(sc, 1), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_config_set_reauth_retry(sc, 1), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_config_add_api_version(sc, 0, 0, 9), KSASL_WRONG_STATE);
    CHECK_INT(ksasl_server_conn_is_ready(s), 0);
    CHECK_RC(ksasl_server_conn_session(s, &m, &a, &d), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_conn_credential_request(s, &m, &u, &flag), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_conn_credential_request(s, NULL, &u, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_credential_request(s, &m, NULL, &flag), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_credential_request(s, &m, &u, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "p", -1, NULL, 0,
                                                  &act, &out, &len, &dl),
             KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_conn_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "p", -1, NULL, 0,
                                                  NULL, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "p", -1, NULL, 0,
                                                  &act, NULL, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_provide_credential(s, KSASL_CREDENTIAL_PASSWORD, "p", -1, NULL, 0,
                                                  &act, &out, NULL, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_handle_frame(s, (const uint8_t *)"x", 1, 0, NULL, &out, &len,
                                            &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_handle_frame(s, (const uint8_t *)"x", 1, 0, &act, NULL, &len,
                                            &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_handle_frame(s, (const uint8_t *)"x", 1, 0, &act, &out, NULL,
                                            &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_conn_handle_frame(s, NULL, 9, 0, &act, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    /* Garbage (with deadline_ms NULL, which is allowed) is not a Kafka request: the
     * connection fails, with a reason. */
    CHECK_OK(ksasl_server_conn_handle_frame(s, (const uint8_t *)"x", 1, 0, &act, &out, &len,
                                            NULL));
    CHECK(act == KSASL_SERVER_ACTION_FAIL_AT || act == KSASL_SERVER_ACTION_CLOSE_NOW);
    CHECK(strlen(ksasl_server_conn_last_error(s)) > 0);
    ksasl_server_conn_free(s);
    CHECK_OK(ksasl_server_config_set_failed_auth_delay_ms(sc, 1));

    ksasl_server_config_free(sc);
    ksasl_client_config_free(cc);
    ksasl_registry_free(r);
}

static void null_oauth_and_refresh(void) {
    counter cnt = {0, 0};
    ksasl_token *t = NULL;
    ksasl_jwks_validator *v = NULL;
    ksasl_refresher *rf = NULL;
    ksasl_tracker *tr = NULL;
    ksasl_registry *r = NULL;
    int flag = 0;
    const uint64_t *ids = NULL;
    size_t n = 0;

    /* Tokens. */
    CHECK_RC(ksasl_token_new_unsecured(NULL, 3600, NULL, 0, &t), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_new_unsecured("alice", 3600, NULL, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_new_unsecured(BAD_UTF8, 3600, NULL, 0, &t), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_new_unsecured("alice", 3600, BAD_UTF8, 0, &t), KSASL_INVALID_ARGUMENT);
    CHECK(t == NULL);
    ksasl_token_free(NULL);
    CHECK(ksasl_token_value(NULL) == NULL);
    CHECK_INT(ksasl_token_expiry_ms(NULL), -1);

    /* Registries and OAUTHBEARER servers/clients. */
    CHECK_RC(ksasl_registry_add_oauthbearer_unsecured_server(NULL, NULL, 0),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_oauthbearer_jwks_server(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_oauthbearer_client(NULL, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_oauthbearer_callback_server(NULL, never_token_cb, &cnt,
                                                            counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_OK(ksasl_registry_new(&r));
    CHECK_RC(ksasl_registry_add_oauthbearer_unsecured_server(r, BAD_UTF8, 0),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_registry_add_oauthbearer_unsecured_server(r, NULL, -1), KSASL_INVALID_CONFIG);
    CHECK(strlen(ksasl_registry_last_error(r)) > 0);
    CHECK_RC(ksasl_registry_add_oauthbearer_jwks_server(r, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_registry_add_oauthbearer_client(r, NULL), KSASL_NULL_ARGUMENT);
    cnt.frees = 0;
    CHECK_RC(ksasl_registry_add_oauthbearer_callback_server(r, NULL, &cnt, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(cnt.frees, 1);
    CHECK_INT(ksasl_registry_mechanism_count(r, 1), 0);
    CHECK_INT(cnt.calls, 0);

    /* Verdicts: argument checks inside a validator callback. */
    {
        counter picky = {0, 0};
        ksasl_token *tok = NULL;
        ksasl_server *srv = NULL;
        ksasl_server_status st = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        buf first = {0};
        CHECK_RC(ksasl_token_verdict_accept(NULL, "alice", 1), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_verdict_reject(NULL, NULL), KSASL_NULL_ARGUMENT);
        CHECK_OK(ksasl_registry_add_oauthbearer_callback_server(r, picky_token_cb, &picky,
                                                                counter_free));
        CHECK_OK(ksasl_token_new_unsecured("alice", 3600, NULL, 0, &tok));
        buf_append(&first, (const uint8_t *)"n,,\x01" "auth=Bearer ", 16);
        buf_append(&first, (const uint8_t *)ksasl_token_value(tok),
                   strlen(ksasl_token_value(tok)));
        buf_append(&first, (const uint8_t *)"\x01\x01", 2);
        CHECK_OK(ksasl_server_new(r, "OAUTHBEARER", &srv));
        CHECK_OK(ksasl_server_step(srv, first.data, first.len, 1000, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_CHALLENGE); /* rejected: the JSON error challenge */
        CHECK_INT(picky.calls, 1);
        ksasl_server_free(srv);
        ksasl_token_free(tok);
        buf_free(&first);
        ksasl_registry_free(r);
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
    CHECK_RC(ksasl_refresher_new(0.8, 0.05, 60, 300, NULL), KSASL_NULL_ARGUMENT);
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

    CHECK_OK(ksasl_refresher_new(0.8, 0.05, 60, 300, &rf));
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

void test_null_arguments(void) {
    null_store_and_registry();
    null_exchanges();
    null_conns();
    null_oauth_and_refresh();
}
