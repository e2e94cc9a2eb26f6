/*
 * A tiny check harness for the ksasl C ABI tests.
 *
 * CHECK(expr) counts a pass or prints "file:line: CHECK failed: expr" and counts a failure;
 * the other macros are CHECK with a better message. main() (test_ffi.c) prints exactly one
 * summary line "N passed, M failed" and exits non-zero when M > 0.
 */
#ifndef KSASL_TEST_CHECK_H
#define KSASL_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ksasl.h"

/* Atomic: test_threads.c checks from several threads. */
extern _Atomic unsigned long check_passed;
extern _Atomic unsigned long check_failed;

void check_fail(const char *file, int line, const char *what);
void check_fail_rc(const char *file, int line, const char *call, ksasl_result got,
                   ksasl_result want);
void check_fail_str(const char *file, int line, const char *expr, const char *got,
                    const char *want);
void check_fail_int(const char *file, int line, const char *expr, long long got,
                    long long want);

#define CHECK(expr)                                     \
    do {                                                \
        if (expr) {                                     \
            check_passed++;                             \
        } else {                                        \
            check_fail(__FILE__, __LINE__, #expr);      \
        }                                               \
    } while (0)

/* A call returning ksasl_result must return `want`. */
#define CHECK_RC(call, want)                                             \
    do {                                                                 \
        ksasl_result check_rc_ = (call);                                 \
        ksasl_result check_want_ = (ksasl_result)(want);                 \
        if (check_rc_ == check_want_) {                                  \
            check_passed++;                                              \
        } else {                                                         \
            check_fail_rc(__FILE__, __LINE__, #call, check_rc_, check_want_); \
        }                                                                \
    } while (0)

#define CHECK_OK(call) CHECK_RC(call, KSASL_OK)

/* Two C strings are equal (NULL equals only NULL). */
#define CHECK_STR(expr, want)                                                  \
    do {                                                                       \
        const char *check_s_ = (expr);                                         \
        const char *check_w_ = (want);                                         \
        if ((check_s_ == NULL && check_w_ == NULL) ||                          \
            (check_s_ != NULL && check_w_ != NULL && strcmp(check_s_, check_w_) == 0)) { \
            check_passed++;                                                    \
        } else {                                                               \
            check_fail_str(__FILE__, __LINE__, #expr, check_s_, check_w_);     \
        }                                                                      \
    } while (0)

/* Two integers are equal. */
#define CHECK_INT(expr, want)                                                  \
    do {                                                                       \
        long long check_i_ = (long long)(expr);                                \
        long long check_j_ = (long long)(want);                                \
        if (check_i_ == check_j_) {                                            \
            check_passed++;                                                    \
        } else {                                                               \
            check_fail_int(__FILE__, __LINE__, #expr, check_i_, check_j_);     \
        }                                                                      \
    } while (0)

/* ---- helpers shared by the test files (test_ffi.c) ---- */

/* A growable byte buffer. */
typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
} buf;

void buf_append(buf *b, const uint8_t *p, size_t n);
void buf_clear(buf *b);
void buf_free(buf *b);
/* Removes the first complete length-prefixed frame (4-byte big-endian length + body) from
 * `b` into `frame` (replacing its contents); 1 if one was there. */
int buf_take_frame(buf *b, buf *frame);

/* A copy of `n` bytes as a NUL-terminated string (the caller frees it). */
char *dup_bytes(const uint8_t *p, size_t n);

/* What a server connection saw once a client authenticated in memory (link_authenticate). */
typedef struct {
    int ok;                     /* both sides authenticated, no failure */
    char principal[128];        /* "" when none */
    int token;                  /* a delegation-token login */
    int64_t lifetime_ms;        /* the broker's session lifetime (0: none; -1: not authenticated) */
    int64_t client_lifetime_ms; /* the lifetime the client was told */
} link_outcome;

/* One initial authentication of a client connection of `cc` against a server connection of
 * `sc`, wired in memory at `now`. A failure's text must not contain `secret` (may be NULL). */
link_outcome link_authenticate(const ksasl_client_config *cc, const ksasl_server_config *sc,
                               int64_t now, const char *secret);

/* Whether a listener's ApiVersions (v0) answer lists `key`, with its range in *min, *max. */
int api_advertised(const ksasl_server_config *sc, int16_t key, int *min, int *max);

/* Whether `hay` (len bytes) contains the C string `needle`. */
int bytes_contain(const uint8_t *hay, size_t len, const char *needle);

/* A configuration builder (a failed call is a failed check). */
ksasl_client_config_builder *client_builder(const ksasl_mechanism_registry *r, const char *mech);
ksasl_server_config_builder *server_builder(const ksasl_mechanism_registry *r);
/* The configuration built from `b`, which is then freed (a failed build is a failed check
 * and gives NULL). */
ksasl_client_config *client_config_done(ksasl_client_config_builder *b);
ksasl_server_config *server_config_done(ksasl_server_config_builder *b);
/* Whether a server connection's session logged in with a delegation token (0 without one). */
int conn_token_authenticated(const ksasl_server_connection *c);

/* How often `needle` occurs in `hay` (0 for NULL). */
int occurrences(const char *hay, const char *needle);

/* Counts frees of callback userdata. */
typedef struct {
    int frees;
    int calls;
} counter;
void counter_free(void *userdata);

/* One exchange between a ksasl_client_exchange and a ksasl_server_exchange (test_exchange.c). */
typedef struct {
    /* The answer given when the server asks for a credential (the pull form). */
    ksasl_credential_answer_kind kind;
    const char *value;
    int64_t expiry_ms;
    const char *token_owner;
    /* What the server asked, and how often. */
    int pulls;
    char mechanism[32];
    char username[128];
    int token_auth;
} pull_answer;

typedef struct {
    ksasl_client_exchange *client;
    ksasl_server_exchange *server;
    ksasl_result client_rc; /* the client's first failure (KSASL_OK if none) */
    ksasl_result server_rc; /* the server's first failure (KSASL_OK if none) */
    int client_done;
    int server_done;
    buf challenge; /* the last challenge the server sent */
} exchange;

/* Runs `mechanism` from `creg`'s clients against `sreg`'s servers; NEED_CREDENTIAL is
 * answered from `pull` (a NULL `pull` makes a credential request a test failure). */
void exchange_run(exchange *x, const ksasl_mechanism_registry *creg,
                  const ksasl_mechanism_registry *sreg, const char *mechanism, pull_answer *pull,
                  int64_t now_ms);
/* Whether both sides completed. */
int exchange_ok(const exchange *x);
void exchange_free(exchange *x);

/* tests/vectors/scram.json, rfc7677-sha256: the Kafka credential string of user/pencil
 * (test_vectors.c). */
extern const char RFC7677_KAFKA_CREDENTIAL[];
/* tests/vectors/scram.json, sha512: the same for SCRAM-SHA-512. */
extern const char SHA512_KAFKA_CREDENTIAL[];

/* Test groups. */
void test_basics(void);
void test_null_arguments(void);
void test_exchanges(void);
void test_vectors(void);
void test_kafka(void);
void test_oauth(void);
void test_refresh(void);
void test_threads(void);
void test_fuzz(void);
void test_tokens(void);
void test_hostmech(void);
void test_config(void);
void test_config_table(void);
void test_gssapi(void);
void test_oidc(void);
void test_client_setup(void);
void test_server_setup(void);
void test_scram_admin(void);
void test_aws(void);

#endif /* KSASL_TEST_CHECK_H */
