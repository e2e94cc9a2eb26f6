/*
 * C test suite for the ksasl C ABI (include/ksasl.h).
 *
 * Built and run by mk/ctest.mk (`make c-test`, `c-test-valgrind`, `c-test-asan`). Prints
 * exactly one summary line, "N passed, M failed", and exits non-zero if M > 0; each failed
 * check is reported on stderr as file:line and the failing expression.
 *
 * Test files:
 *   test_basics.c    version, result names/kinds, panic boundary, NULL/invalid arguments
 *                    for every function
 *   test_exchange.c  stores, registries, single exchanges
 * (ksasl_client_exchange/ksasl_server_exchange), credential callbacks and the pull form,
 * wrong-state calls test_vectors.c   tests/vectors/scram.json replayed on the server side, end to
 * end test_kafka.c     Kafka drivers (ksasl_client_connection_* with ksasl_server_connection_*)
 * wired in memory: PLAIN, SCRAM-SHA-256/512, OAUTHBEARER, KIP-368 re-authentication, the gate,
 * metrics, the pull form, failures test_oauth.c     tokens, the callback validator, JWKS validators
 *   test_refresh.c   the refresher (pull and callback forms) and the tracker
 *   test_threads.c   stores, registries, configurations and refreshers shared by threads
 *   test_fuzz.c      random and mutated messages, frames and JWKS documents
 *   test_tokens.c    delegation tokens: the authority's rules, records, tokenauth logins,
 *                    the token API codec through the authority and over connections,
 *                    ApiVersions, shared authorities
 *   test_config.c    the configuration builders against tests/vectors/config_invalid.json
 *                    (every invalid value, every binding's table), checked by code name
 *   test_config_table.c  ksasl_config_check against tests/vectors/config_table.json (real-world
 *                    client and broker configurations, every binding's table)
 *   test_hostmech.c  host-defined mechanisms (an HMAC challenge-response written in C)
 *                    through the drivers and single exchanges: negotiation next to the
 *                    built-ins, re-authentication, principal change, every misbehaviour,
 *                    NULL arguments, userdata and exchange ownership
 *   test_client_setup.c  ksasl_client_setup: clients from Kafka's and librdkafka's properties
 *                    authenticating in memory (PLAIN, SCRAM, unsecured OAUTHBEARER with its
 *                    refresher), GSSAPI left to the host, invalid values, no secret in output
 *   test_server_setup.c  ksasl_server_setup: broker listeners from server.properties
 *                    authenticating in memory (PLAIN from JAAS, SCRAM from a store, unsecured
 *                    OAUTHBEARER) with the file's session lifetimes, delegation tokens and the
 *                    token APIs, the host's APIs in ApiVersions, JWKS endpoints, choosing the
 *                    listener and its address, invalid values, GSSAPI keytabs, NULL arguments
 *
 *   test_scram_admin.c  KIP-554: DescribeUserScramCredentials and AlterUserScramCredentials
 *                    served by a credential store, byte for byte, and their ApiVersions
 *
 * Coverage: `coverage` below lists every function declared in include/ksasl.h (it also
 * makes the link fail if one is missing from the library). mk/ctest.mk checks that every
 * function of the header is in this table and is called from one of the test_*.c files.
 */
#include <stdlib.h>

#include "check.h"

_Atomic unsigned long check_passed = 0;
_Atomic unsigned long check_failed = 0;

void check_fail(const char *file, int line, const char *what) {
    check_failed++;
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
}

void check_fail_rc(const char *file, int line, const char *call, ksasl_result got,
                   ksasl_result want) {
    check_failed++;
    fprintf(stderr, "%s:%d: CHECK failed: %s returned %u (%s), expected %u (%s)\n", file, line,
            call, (unsigned)got, ksasl_result_name(got), (unsigned)want,
            ksasl_result_name(want));
}

void check_fail_str(const char *file, int line, const char *expr, const char *got,
                    const char *want) {
    check_failed++;
    fprintf(stderr, "%s:%d: CHECK failed: %s is \"%s\", expected \"%s\"\n", file, line, expr,
            got ? got : "(NULL)", want ? want : "(NULL)");
}

void check_fail_int(const char *file, int line, const char *expr, long long got,
                    long long want) {
    check_failed++;
    fprintf(stderr, "%s:%d: CHECK failed: %s is %lld, expected %lld\n", file, line, expr, got,
            want);
}

/* ---- helpers ---- */

void buf_append(buf *b, const uint8_t *p, size_t n) {
    if (n == 0) {
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) {
            cap *= 2;
        }
        uint8_t *d = realloc(b->data, cap);
        if (d == NULL) {
            fprintf(stderr, "out of memory\n");
            abort();
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void buf_clear(buf *b) { b->len = 0; }

void buf_free(buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int buf_take_frame(buf *b, buf *frame) {
    if (b->len < 4) {
        return 0;
    }
    size_t n = ((size_t)b->data[0] << 24) | ((size_t)b->data[1] << 16) |
               ((size_t)b->data[2] << 8) | (size_t)b->data[3];
    if (b->len < 4 + n) {
        return 0;
    }
    buf_clear(frame);
    buf_append(frame, b->data + 4, n);
    memmove(b->data, b->data + 4 + n, b->len - 4 - n);
    b->len -= 4 + n;
    return 1;
}

char *dup_bytes(const uint8_t *p, size_t n) {
    char *s = malloc(n + 1);
    if (s == NULL) {
        abort();
    }
    if (n > 0) {
        memcpy(s, p, n);
    }
    s[n] = '\0';
    return s;
}

int bytes_contain(const uint8_t *hay, size_t len, const char *needle) {
    size_t m = strlen(needle);
    if (m == 0) {
        return 1;
    }
    if (hay == NULL) {
        return 0;
    }
    for (size_t i = 0; i + m <= len; i++) {
        if (memcmp(hay + i, needle, m) == 0) {
            return 1;
        }
    }
    return 0;
}

ksasl_client_config_builder *client_builder(const ksasl_mechanism_registry *r, const char *mech) {
    ksasl_client_config_builder *b = NULL;
    CHECK_OK(ksasl_client_config_builder_new(r, mech, &b));
    return b;
}

ksasl_server_config_builder *server_builder(const ksasl_mechanism_registry *r) {
    ksasl_server_config_builder *b = NULL;
    CHECK_OK(ksasl_server_config_builder_new(r, &b));
    return b;
}

ksasl_client_config *client_config_done(ksasl_client_config_builder *b) {
    ksasl_client_config *c = NULL;
    CHECK_OK(ksasl_client_config_builder_build(b, &c));
    ksasl_client_config_builder_free(b);
    return c;
}

ksasl_server_config *server_config_done(ksasl_server_config_builder *b) {
    ksasl_server_config *c = NULL;
    CHECK_OK(ksasl_server_config_builder_build(b, &c));
    ksasl_server_config_builder_free(b);
    return c;
}

int conn_token_authenticated(const ksasl_server_connection *c) {
    int t = -1;
    return ksasl_server_connection_session(c, NULL, NULL, &t, NULL, NULL) == KSASL_OK ? t : 0;
}

int occurrences(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p != NULL && (p = strstr(p, needle)) != NULL; p += strlen(needle)) {
        n++;
    }
    return n;
}

void counter_free(void *userdata) {
    counter *c = userdata;
    c->frees++;
}

/* ---- an in-memory login and a listener's ApiVersions, for the test files ---- */

typedef struct {
    ksasl_client_connection *client;
    ksasl_server_connection *server;
    buf to_server, to_client, frame;
    int authenticated, server_authenticated, closed;
    ksasl_result client_rc;
    const char *secret;
} link_pair;

/* The client reads every frame the server wrote. */
static void link_client_read(link_pair *p, int64_t now) {
    while (!p->closed && buf_take_frame(&p->to_client, &p->frame)) {
        ksasl_client_event ev = 0;
        const uint8_t *app = NULL;
        size_t app_len = 0;
        ksasl_result rc = ksasl_client_connection_handle_frame(p->client, p->frame.data,
                                                               p->frame.len, now, &ev, &app,
                                                               &app_len);
        if (rc != KSASL_OK) {
            p->client_rc = rc;
            p->closed = 1;
            return;
        }
        CHECK(ev == KSASL_CLIENT_EVENT_CONTINUE || ev == KSASL_CLIENT_EVENT_AUTHENTICATED);
        p->authenticated += ev == KSASL_CLIENT_EVENT_AUTHENTICATED;
    }
}

/* The server handles one frame the client wrote. */
static void link_server_frame(link_pair *p, int64_t now) {
    ksasl_server_action act = 0;
    const uint8_t *out = NULL;
    size_t len = 0;
    int64_t dl = 0;
    CHECK_OK(ksasl_server_connection_handle_frame(p->server, p->frame.data, p->frame.len, now,
                                                  &act, &out, &len, &dl));
    buf_append(&p->to_client, out, len);
    if (act == KSASL_SERVER_ACTION_AUTHENTICATED) {
        p->server_authenticated++;
    } else if (act != KSASL_SERVER_ACTION_CONTINUE) {
        /* FAIL_AT or CLOSE_NOW: the client reads the answer, then the connection closes. */
        CHECK(strlen(ksasl_server_connection_last_error(p->server)) > 0);
        CHECK(p->secret == NULL ||
              strstr(ksasl_server_connection_last_error(p->server), p->secret) == NULL);
        link_client_read(p, now);
        p->closed = 1;
    }
}

/* One initial authentication in memory (check.h). */
link_outcome link_authenticate(const ksasl_client_config *cc, const ksasl_server_config *sc,
                               int64_t now, const char *secret) {
    link_outcome o;
    link_pair p;
    memset(&o, 0, sizeof o);
    memset(&p, 0, sizeof p);
    p.secret = secret;
    o.lifetime_ms = o.client_lifetime_ms = -1;
    CHECK_OK(ksasl_client_connection_new(cc, &p.client));
    CHECK_OK(ksasl_server_connection_new(sc, &p.server));
    CHECK_OK(ksasl_client_connection_start(p.client, now));
    for (int round = 0; round < 64 && !p.closed; round++) {
        const uint8_t *out = NULL;
        size_t len = 0;
        int moved = 0;
        CHECK_OK(ksasl_client_connection_transmit(p.client, &out, &len));
        if (len > 0) {
            buf_append(&p.to_server, out, len);
        }
        while (!p.closed && buf_take_frame(&p.to_server, &p.frame)) {
            moved = 1;
            link_server_frame(&p, now);
        }
        moved |= p.to_client.len > 0;
        link_client_read(&p, now);
        if (!moved) {
            break;
        }
    }
    const char *who = NULL;
    int64_t lifetime = -1;
    if (ksasl_server_connection_session(p.server, &who, NULL, &o.token, &lifetime, NULL) ==
        KSASL_OK) {
        snprintf(o.principal, sizeof o.principal, "%s", who);
        o.lifetime_ms = lifetime;
    }
    if (p.authenticated == 1) {
        CHECK_OK(ksasl_client_connection_session(p.client, &o.client_lifetime_ms, NULL, NULL));
    }
    o.ok = p.authenticated == 1 && p.server_authenticated == 1 && p.client_rc == KSASL_OK;
    ksasl_client_connection_free(p.client);
    ksasl_server_connection_free(p.server);
    buf_free(&p.to_server);
    buf_free(&p.to_client);
    buf_free(&p.frame);
    return o;
}

static int32_t be32(const uint8_t *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                     (uint32_t)p[3]);
}


int api_advertised(const ksasl_server_config *sc, int16_t key, int *min, int *max) {
    static const uint8_t api_versions_v0[] = {0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff};
    ksasl_server_connection *conn = NULL;
    ksasl_server_action act = 99;
    const uint8_t *out = NULL;
    size_t len = 0;
    int found = 0;
    CHECK_OK(ksasl_server_connection_new(sc, &conn));
    CHECK_OK(ksasl_server_connection_handle_frame(conn, api_versions_v0, sizeof api_versions_v0, 0,
                                                  &act, &out, &len, NULL));
    CHECK_INT(act, KSASL_SERVER_ACTION_CONTINUE);
    CHECK(len >= 14 && (size_t)be32(out) == len - 4 && be32(out + 4) == 1);
    if (len >= 14) {
        int32_t n = be32(out + 10);
        CHECK(n > 0 && (size_t)n * 6 + 14 == len);
        for (int32_t i = 0; n > 0 && (size_t)n * 6 + 14 == len && i < n; i++) {
            const uint8_t *e = out + 14 + 6 * i;
            if ((int16_t)((e[0] << 8) | e[1]) == key) {
                found = 1;
                *min = (e[2] << 8) | e[3];
                *max = (e[4] << 8) | e[5];
            }
        }
    }
    ksasl_server_connection_free(conn);
    return found;
}

/* ---- coverage: every function of include/ksasl.h ---- */

typedef void (*any_fn)(void);
#define FN(f) {#f, (any_fn)f}

static const struct {
    const char *name;
    any_fn fn;
} coverage[] = {
    /* the library */
    FN(ksasl_version),
    FN(ksasl_result_name),
    FN(ksasl_result_kind),
    FN(ksasl_last_constructor_error),
    FN(ksasl_check_panic_boundary),
    /* ksasl_credential_store */
    FN(ksasl_credential_store_add_user),
    FN(ksasl_credential_store_free),
    FN(ksasl_credential_store_last_error),
    FN(ksasl_credential_store_new),
    FN(ksasl_credential_store_remove_user),
    FN(ksasl_credential_store_set_scram),
    FN(ksasl_credential_store_set_token),
    FN(ksasl_credential_store_set_user_expiry),
    /* ksasl_credential_request */
    FN(ksasl_credential_request_mechanism),
    FN(ksasl_credential_request_token_authenticated),
    FN(ksasl_credential_request_username),
    /* ksasl_credential_answer */
    FN(ksasl_credential_answer_set),
    /* ksasl_mechanism_registry */
    FN(ksasl_mechanism_registry_add_client_mechanism),
    FN(ksasl_mechanism_registry_add_oauthbearer_callback_server),
    FN(ksasl_mechanism_registry_add_oauthbearer_client),
    FN(ksasl_mechanism_registry_add_oauthbearer_jwks_server),
    FN(ksasl_mechanism_registry_add_oauthbearer_unsecured_server),
    FN(ksasl_mechanism_registry_add_password_clients),
    FN(ksasl_mechanism_registry_add_password_servers),
    FN(ksasl_mechanism_registry_add_refreshing_password_clients),
    FN(ksasl_mechanism_registry_add_server_mechanism),
    FN(ksasl_mechanism_registry_add_token_clients),
    FN(ksasl_mechanism_registry_free),
    FN(ksasl_mechanism_registry_last_error),
    FN(ksasl_mechanism_registry_mechanism_count),
    FN(ksasl_mechanism_registry_new),
    FN(ksasl_mechanism_registry_set_credential_callback),
    FN(ksasl_mechanism_registry_set_token_authority),
    /* ksasl_host_output */
    FN(ksasl_host_output_free),
    FN(ksasl_host_output_new),
    FN(ksasl_host_output_set_authenticated),
    FN(ksasl_host_output_set_done),
    FN(ksasl_host_output_set_error),
    FN(ksasl_host_output_set_message),
    FN(ksasl_host_output_set_pending),
    /* ksasl_client_exchange */
    FN(ksasl_client_exchange_free),
    FN(ksasl_client_exchange_last_error),
    FN(ksasl_client_exchange_new),
    FN(ksasl_client_exchange_pending_work),
    FN(ksasl_client_exchange_resume),
    FN(ksasl_client_exchange_server_failed),
    FN(ksasl_client_exchange_start),
    FN(ksasl_client_exchange_step),
    /* ksasl_server_exchange */
    FN(ksasl_server_exchange_client_message),
    FN(ksasl_server_exchange_credential_request),
    FN(ksasl_server_exchange_free),
    FN(ksasl_server_exchange_last_error),
    FN(ksasl_server_exchange_new),
    FN(ksasl_server_exchange_outcome),
    FN(ksasl_server_exchange_pending_work),
    FN(ksasl_server_exchange_provide_credential),
    FN(ksasl_server_exchange_resume),
    FN(ksasl_server_exchange_set_max_reauth_ms),
    FN(ksasl_server_exchange_step),
    /* ksasl_client_config */
    FN(ksasl_client_config_builder_build),
    FN(ksasl_client_config_builder_free),
    FN(ksasl_client_config_builder_last_error),
    FN(ksasl_client_config_builder_new),
    FN(ksasl_client_config_builder_set_api_versions_version),
    FN(ksasl_client_config_builder_set_client_id),
    FN(ksasl_client_config_builder_set_known_versions),
    FN(ksasl_client_config_builder_set_max_receive_size),
    FN(ksasl_client_config_builder_set_reauth_min_delay_ms),
    FN(ksasl_client_config_builder_set_reauth_retry_ms),
    FN(ksasl_client_config_builder_set_reauth_timing),
    FN(ksasl_client_config_builder_set_software),
    FN(ksasl_client_config_free),
    FN(ksasl_client_config_metric),
    /* ksasl_server_config */
    FN(ksasl_server_config_builder_add_token_api_versions),
    FN(ksasl_server_config_builder_build),
    FN(ksasl_server_config_builder_free),
    FN(ksasl_server_config_builder_last_error),
    FN(ksasl_server_config_builder_new),
    FN(ksasl_server_config_builder_set_api_version),
    FN(ksasl_server_config_builder_set_enabled_mechanisms),
    FN(ksasl_server_config_builder_set_failed_authentication_delay_ms),
    FN(ksasl_server_config_builder_set_max_reauth_ms),
    FN(ksasl_server_config_builder_set_max_receive_size),
    FN(ksasl_server_config_builder_set_max_request_size),
    FN(ksasl_server_config_builder_set_reauth_retry_ms),
    FN(ksasl_server_config_free),
    FN(ksasl_server_config_metric),
    /* ksasl_client_connection */
    FN(ksasl_client_connection_before_request),
    FN(ksasl_client_connection_closed),
    FN(ksasl_client_connection_free),
    FN(ksasl_client_connection_handle_frame),
    FN(ksasl_client_connection_handle_timeout),
    FN(ksasl_client_connection_is_reauthenticating),
    FN(ksasl_client_connection_last_error),
    FN(ksasl_client_connection_new),
    FN(ksasl_client_connection_next_deadline),
    FN(ksasl_client_connection_pending_work),
    FN(ksasl_client_connection_reauth_pending),
    FN(ksasl_client_connection_resume),
    FN(ksasl_client_connection_session),
    FN(ksasl_client_connection_start),
    FN(ksasl_client_connection_start_reauthentication),
    FN(ksasl_client_connection_transmit),
    /* ksasl_server_connection */
    FN(ksasl_server_connection_credential_request),
    FN(ksasl_server_connection_error),
    FN(ksasl_server_connection_free),
    FN(ksasl_server_connection_gate),
    FN(ksasl_server_connection_check_frame_size),
    FN(ksasl_server_connection_handle_frame),
    FN(ksasl_server_connection_is_ready),
    FN(ksasl_server_connection_refused_request),
    FN(ksasl_server_connection_error_detail),
    FN(ksasl_server_config_builder_set_unknown_user_mask),
    FN(ksasl_server_connection_last_error),
    FN(ksasl_server_connection_new),
    FN(ksasl_server_connection_pending_work),
    FN(ksasl_server_connection_provide_credential),
    FN(ksasl_server_connection_resume),
    FN(ksasl_server_connection_session),
    /* ksasl_oauth_token */
    FN(ksasl_oauth_token_expiry_ms),
    FN(ksasl_oauth_token_free),
    FN(ksasl_oauth_token_new_unsecured),
    FN(ksasl_oauth_token_value),
    /* ksasl_oauth_verdict */
    FN(ksasl_oauth_verdict_accept),
    FN(ksasl_oauth_verdict_reject),
    /* ksasl_jwks_validator */
    FN(ksasl_jwks_validator_free),
    FN(ksasl_jwks_validator_last_error),
    FN(ksasl_jwks_validator_new),
    FN(ksasl_jwks_validator_next_refresh_ms),
    FN(ksasl_jwks_validator_set_jwks),
    /* ksasl_kerberos_login, GSSAPI */
    FN(ksasl_gssapi_available),
    FN(ksasl_kerberos_login_count),
    FN(ksasl_kerberos_login_free),
    FN(ksasl_kerberos_login_last_error),
    FN(ksasl_kerberos_login_login),
    FN(ksasl_kerberos_login_new),
    FN(ksasl_kerberos_login_next_login_ms),
    FN(ksasl_kerberos_login_poll),
    FN(ksasl_kerberos_login_ticket_end_ms),
    FN(ksasl_mechanism_registry_add_gssapi_client),
    FN(ksasl_mechanism_registry_add_gssapi_server),
    FN(ksasl_server_config_builder_set_legacy_gssapi),
    /* ksasl_refresher */
    FN(ksasl_refresher_config_builder_build),
    FN(ksasl_refresher_config_builder_free),
    FN(ksasl_refresher_config_builder_last_error),
    FN(ksasl_refresher_config_builder_new),
    FN(ksasl_refresher_config_builder_set_buffer_seconds),
    FN(ksasl_refresher_config_builder_set_min_period_seconds),
    FN(ksasl_refresher_config_builder_set_retry_backoff_max_ms),
    FN(ksasl_refresher_config_builder_set_retry_backoff_ms),
    FN(ksasl_refresher_config_builder_set_window_factor),
    FN(ksasl_refresher_config_builder_set_window_jitter),
    FN(ksasl_refresher_config_free),
    FN(ksasl_refresher_free),
    FN(ksasl_refresher_generation),
    FN(ksasl_refresher_invoke_callback),
    FN(ksasl_refresher_last_error),
    FN(ksasl_refresher_new),
    FN(ksasl_refresher_next_deadline),
    FN(ksasl_refresher_poll),
    FN(ksasl_refresher_run_due),
    FN(ksasl_refresher_set_delegation_token),
    FN(ksasl_refresher_set_refresh_callback),
    FN(ksasl_refresher_set_token),
    FN(ksasl_refresher_set_token_failure),
    /* ksasl_tracker */
    FN(ksasl_tracker_authenticated),
    FN(ksasl_tracker_forget),
    FN(ksasl_tracker_free),
    FN(ksasl_tracker_last_error),
    FN(ksasl_tracker_new),
    FN(ksasl_tracker_next_deadline),
    FN(ksasl_tracker_poll),
    /* ksasl_delegation_token_codec */
    FN(ksasl_delegation_token_codec_create_request),
    FN(ksasl_delegation_token_codec_describe_request),
    FN(ksasl_delegation_token_codec_expire_request),
    FN(ksasl_delegation_token_codec_free),
    FN(ksasl_delegation_token_codec_kafka_error),
    FN(ksasl_delegation_token_codec_last_error),
    FN(ksasl_delegation_token_codec_new),
    FN(ksasl_delegation_token_codec_parse_create_response),
    FN(ksasl_delegation_token_codec_parse_describe_response),
    FN(ksasl_delegation_token_codec_parse_expiry_response),
    FN(ksasl_delegation_token_codec_renew_request),
    /* ksasl_delegation_token */
    FN(ksasl_delegation_token_expiry_ms),
    FN(ksasl_delegation_token_free),
    FN(ksasl_delegation_token_hmac),
    FN(ksasl_delegation_token_hmac_base64),
    FN(ksasl_delegation_token_id),
    FN(ksasl_delegation_token_issue_ms),
    FN(ksasl_delegation_token_list_count),
    FN(ksasl_delegation_token_list_free),
    FN(ksasl_delegation_token_list_get),
    FN(ksasl_delegation_token_max_ms),
    FN(ksasl_delegation_token_new),
    FN(ksasl_delegation_token_owner),
    FN(ksasl_delegation_token_renewed),
    FN(ksasl_delegation_token_renewer),
    FN(ksasl_delegation_token_renewer_count),
    FN(ksasl_delegation_token_requester),
    /* ksasl_token_authority */
    FN(ksasl_token_authority_create),
    FN(ksasl_token_authority_describe),
    FN(ksasl_token_authority_expire),
    FN(ksasl_token_authority_export_records),
    FN(ksasl_token_authority_free),
    FN(ksasl_token_authority_handle_request),
    /* KIP-554 */
    FN(ksasl_credential_store_handle_scram_request),
    FN(ksasl_server_config_builder_add_scram_credential_api_versions),
    FN(ksasl_token_authority_hmac),
    FN(ksasl_token_authority_import_records),
    FN(ksasl_token_authority_last_error),
    FN(ksasl_token_authority_new),
    FN(ksasl_token_authority_next_sweep_ms),
    FN(ksasl_token_authority_renew),
    FN(ksasl_token_authority_share),
    FN(ksasl_token_authority_sweep),
    /* ksasl_oidc_settings, ksasl_oidc_login, ksasl_jwks_endpoint */
    FN(ksasl_oidc_settings_new),
    FN(ksasl_oidc_settings_set),
    FN(ksasl_oidc_settings_free),
    FN(ksasl_oidc_settings_last_error),
    FN(ksasl_oidc_login_new),
    FN(ksasl_oidc_login_fetch),
    FN(ksasl_oidc_login_refresh),
    FN(ksasl_oidc_login_free),
    FN(ksasl_oidc_login_last_error),
    FN(ksasl_jwks_endpoint_new),
    FN(ksasl_jwks_endpoint_fetch),
    FN(ksasl_jwks_endpoint_poll),
    FN(ksasl_jwks_endpoint_free),
    FN(ksasl_jwks_endpoint_last_error),
    FN(ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server),
    /* ksasl_config_report */
    FN(ksasl_config_check),
    FN(ksasl_config_report_text),
    FN(ksasl_config_report_free),
    /* ksasl_client_setup */
    FN(ksasl_client_setup_new),
    FN(ksasl_client_setup_new_from_pairs),
    FN(ksasl_client_setup_config),
    FN(ksasl_client_setup_refresher),
    FN(ksasl_client_setup_login),
    FN(ksasl_client_setup_mechanism),
    FN(ksasl_client_setup_security_protocol),
    FN(ksasl_client_setup_kerberos_service_name),
    FN(ksasl_client_setup_kerberos_principal),
    FN(ksasl_client_setup_kerberos_keytab),
    FN(ksasl_client_setup_unknown_count),
    FN(ksasl_client_setup_unknown),
    FN(ksasl_client_setup_warning_count),
    FN(ksasl_client_setup_warning),
    FN(ksasl_client_setup_with_registry),
    FN(ksasl_client_setup_free),
    FN(ksasl_client_setup_last_error),
    /* ksasl_server_setup */
    FN(ksasl_server_setup_new),
    FN(ksasl_server_setup_config),
    FN(ksasl_server_setup_jwks_count),
    FN(ksasl_server_setup_jwks_url),
    FN(ksasl_server_setup_jwks_endpoint),
    FN(ksasl_server_setup_tokens),
    FN(ksasl_server_setup_listener),
    FN(ksasl_server_setup_host),
    FN(ksasl_server_setup_port),
    FN(ksasl_server_setup_free),
    FN(ksasl_server_setup_last_error),
    /* AWS_MSK_IAM */
    FN(ksasl_aws_credentials_new),
    FN(ksasl_aws_credentials_free),
    FN(ksasl_aws_key_store_new),
    FN(ksasl_aws_key_store_add),
    FN(ksasl_aws_key_store_remove),
    FN(ksasl_aws_key_store_free),
    FN(ksasl_aws_key_store_last_error),
    FN(ksasl_mechanism_registry_add_aws_msk_iam_client),
    FN(ksasl_mechanism_registry_add_aws_msk_iam_server),
    FN(ksasl_mechanism_registry_add_msk_oauthbearer_client),
    FN(ksasl_mechanism_registry_add_msk_oauthbearer_server),
    FN(ksasl_refresher_set_aws_credentials),
    FN(ksasl_msk_token_new),
};

static const struct {
    const char *name;
    void (*run)(void);
} groups[] = {
    {"basics", test_basics},   {"null_arguments", test_null_arguments},
    {"exchanges", test_exchanges}, {"vectors", test_vectors},
    {"kafka", test_kafka},     {"oauth", test_oauth},
    {"refresh", test_refresh}, {"threads", test_threads},
    {"fuzz", test_fuzz},       {"tokens", test_tokens},
    {"hostmech", test_hostmech}, {"config", test_config},
    {"gssapi", test_gssapi},   {"oidc", test_oidc},
    {"config_table", test_config_table}, {"client_setup", test_client_setup},
    {"server_setup", test_server_setup}, {"scram_admin", test_scram_admin},
    {"aws", test_aws},
};

/* `test_ffi` runs every group; `test_ffi GROUP...` only those named; `test_ffi --not GROUP...`
 * all but those (so that `make` can run the suite under valgrind as several processes at once,
 * and a new group is never left out). An unknown name is a usage error. */
int main(int argc, char **argv) {
    for (size_t i = 0; i < sizeof coverage / sizeof coverage[0]; i++) {
        CHECK(coverage[i].fn != NULL && coverage[i].name[0] != '\0');
    }
    size_t n = sizeof groups / sizeof groups[0];
    int first = 1, invert = argc > 1 && strcmp(argv[1], "--not") == 0;
    if (invert) {
        first = 2;
    }
    for (int a = first; a < argc; a++) {
        size_t g = 0;
        while (g < n && strcmp(groups[g].name, argv[a]) != 0) {
            g++;
        }
        if (g == n) {
            fprintf(stderr, "test_ffi: no test group \"%s\"; the groups:", argv[a]);
            for (g = 0; g < n; g++) {
                fprintf(stderr, " %s", groups[g].name);
            }
            fprintf(stderr, "\n");
            return 2;
        }
    }
    for (size_t g = 0; g < n; g++) {
        int named = 0;
        for (int a = first; a < argc && !named; a++) {
            named = strcmp(groups[g].name, argv[a]) == 0;
        }
        if (argc == 1 || named != invert) {
            groups[g].run();
        }
    }

    unsigned long passed = check_passed, failed = check_failed;
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed > 0 ? 1 : 0;
}
