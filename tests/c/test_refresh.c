/*
 * The refresher (pull form and callback form, with the userdata freed exactly once) and the
 * tracker.
 */
#include <stdlib.h>

#include "check.h"

#define NOW ((int64_t)1700000000000)
#define HOUR ((int64_t)3600000)

static ksasl_result install_token(ksasl_refresher *r, const char *principal, int64_t lifetime_s,
                                  int64_t now) {
    ksasl_oauth_token *t = NULL;
    ksasl_result rc;
    CHECK_OK(ksasl_oauth_token_new_unsecured(principal, lifetime_s, NULL, now, &t));
    rc = ksasl_refresher_set_token(r, ksasl_oauth_token_value(t), ksasl_oauth_token_expiry_ms(t),
                                   principal, NULL, NULL, 0, now);
    ksasl_oauth_token_free(t);
    return rc;
}

static void pull_form(void) {
    ksasl_refresher *r = NULL;
    int64_t d;

    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_INT(ksasl_refresher_generation(r), 0);
    CHECK_INT(ksasl_refresher_next_deadline(r), 0); /* due at once */
    CHECK_INT(ksasl_refresher_poll(r, NOW), 1);
    CHECK_INT(ksasl_refresher_next_deadline(r), -1); /* outstanding */
    CHECK_INT(ksasl_refresher_poll(r, NOW), 0);

    /* A failure: retried after 10 s. */
    CHECK_OK(ksasl_refresher_set_token_failure(r, "identity provider down", NOW));
    CHECK_INT(ksasl_refresher_generation(r), 0);
    CHECK_INT(ksasl_refresher_next_deadline(r), NOW + 10000);
    CHECK_INT(ksasl_refresher_poll(r, NOW + 9999), 0);
    CHECK_INT(ksasl_refresher_poll(r, NOW + 10000), 1);

    /* Refused tokens. */
    CHECK(ksasl_refresher_set_token(r, "tok", NOW - 1, "alice", NULL, NULL, 0, NOW + 10000) !=
          KSASL_OK);
    CHECK(strlen(ksasl_refresher_last_error(r)) > 0);
    CHECK_RC(ksasl_refresher_set_token(r, "tok", NOW + HOUR, "", NULL, NULL, 0, NOW + 10000),
             KSASL_INVALID_ARGUMENT);
    {
        static const char *const dup_names[] = {"traceId", "traceId"};
        static const char *const vals[] = {"a", "b"};
        CHECK_RC(ksasl_refresher_set_token(r, "tok", NOW + HOUR, "alice", dup_names, vals, 2,
                                           NOW + 10000),
                 KSASL_INVALID_EXTENSION);
        static const char *const reserved[] = {"auth"};
        CHECK(ksasl_refresher_set_token(r, "tok", NOW + HOUR, "alice", reserved, vals, 1,
                                        NOW + 10000) != KSASL_OK);
    }
    CHECK_INT(ksasl_refresher_generation(r), 0);

    /* A one-hour token: refreshed at 80-85 % of its life (Kafka's window and jitter). */
    {
        static const char *const names[] = {"traceId", "logicalCluster"};
        static const char *const vals[] = {"abc", "lkc-1"};
        ksasl_oauth_token *t = NULL;
        CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW + 10000, &t));
        CHECK_OK(ksasl_refresher_set_token(r, ksasl_oauth_token_value(t),
                                           ksasl_oauth_token_expiry_ms(t), "alice", names, vals, 2,
                                           NOW + 10000));
        ksasl_oauth_token_free(t);
    }
    CHECK_INT(ksasl_refresher_generation(r), 1);
    d = ksasl_refresher_next_deadline(r);
    CHECK(d >= NOW + 10000 + HOUR * 80 / 100 && d <= NOW + 10000 + HOUR * 85 / 100);
    CHECK_INT(ksasl_refresher_poll(r, d - 1), 0);
    CHECK_INT(ksasl_refresher_poll(r, d), 1);
    CHECK_OK(install_token(r, "alice", 3600, d));
    CHECK_INT(ksasl_refresher_generation(r), 2);
    ksasl_refresher_free(r);

    /* Out-of-range configurations, with Kafka's messages; a failed build leaves the builder
     * usable, and its configuration makes a refresher. */
    {
        ksasl_refresher_config_builder *b = NULL;
        ksasl_refresher_config *c = NULL;
        CHECK_OK(ksasl_refresher_config_builder_new(&b));
        CHECK_OK(ksasl_refresher_config_builder_set_window_jitter(b, 0.5));
        CHECK_RC(ksasl_refresher_config_builder_build(b, &c), KSASL_INVALID_CONFIG);
        CHECK(strstr(ksasl_refresher_config_builder_last_error(b),
                     "sasl.login.refresh.window.jitter") != NULL);
        CHECK_OK(ksasl_refresher_config_builder_set_window_jitter(b, 0.05));
        CHECK_OK(ksasl_refresher_config_builder_set_min_period_seconds(b, 1000));
        CHECK_RC(ksasl_refresher_config_builder_build(b, &c), KSASL_INVALID_CONFIG);
        CHECK_OK(ksasl_refresher_config_builder_set_min_period_seconds(b, 60));
        CHECK_OK(ksasl_refresher_config_builder_set_buffer_seconds(b, -1));
        CHECK_RC(ksasl_refresher_config_builder_build(b, &c), KSASL_INVALID_CONFIG);
        CHECK(c == NULL);
        CHECK_OK(ksasl_refresher_config_builder_set_buffer_seconds(b, 300));
        CHECK_OK(ksasl_refresher_config_builder_set_window_factor(b, 0.5));
        CHECK_OK(ksasl_refresher_config_builder_build(b, &c));
        r = NULL;
        CHECK_OK(ksasl_refresher_new(c, &r));
        CHECK_INT(ksasl_refresher_next_deadline(r), 0);
        ksasl_refresher_free(r);
        ksasl_refresher_config_free(c);
        ksasl_refresher_config_builder_free(b);
    }
}

/* The callback form. */
typedef struct {
    counter count;
    int fail;     /* answer with a failure */
    int no_reply; /* answer later (not at all here) */
    int64_t last_now;
} refresh_state;

static void refresh_cb(void *userdata, ksasl_refresher *refresher, int64_t now_ms) {
    refresh_state *s = userdata;
    s->count.calls++;
    s->last_now = now_ms;
    if (s->no_reply) {
        return;
    }
    if (s->fail) {
        CHECK_OK(ksasl_refresher_set_token_failure(refresher, "no token today", now_ms));
    } else {
        CHECK_OK(install_token(refresher, "alice", 3600, now_ms));
    }
}

static void refresh_state_free(void *userdata) {
    refresh_state *s = userdata;
    s->count.frees++;
}

static void callback_form(void) {
    ksasl_refresher *r = NULL;
    refresh_state s, old;
    int ran = -1;
    int64_t d;

    memset(&s, 0, sizeof s);
    memset(&old, 0, sizeof old);
    CHECK_OK(ksasl_refresher_new(NULL, &r));
    /* Replacing a callback frees the old userdata. */
    CHECK_OK(ksasl_refresher_set_refresh_callback(r, refresh_cb, &old, refresh_state_free));
    CHECK_OK(ksasl_refresher_set_refresh_callback(r, refresh_cb, &s, refresh_state_free));
    CHECK_INT(old.count.frees, 1);
    CHECK_INT(old.count.calls, 0);

    CHECK_OK(ksasl_refresher_run_due(r, NOW, &ran));
    CHECK_INT(ran, 1);
    CHECK_INT(s.count.calls, 1);
    CHECK_INT(s.last_now, NOW);
    CHECK_INT(ksasl_refresher_generation(r), 1);
    CHECK_OK(ksasl_refresher_run_due(r, NOW + 1, &ran));
    CHECK_INT(ran, 0);
    CHECK_INT(s.count.calls, 1);
    d = ksasl_refresher_next_deadline(r);
    CHECK(d > NOW);
    CHECK_OK(ksasl_refresher_run_due(r, d, NULL));
    CHECK_INT(s.count.calls, 2);
    CHECK_INT(ksasl_refresher_generation(r), 2);

    /* A failing refresh keeps the token and retries after 10 s. */
    s.fail = 1;
    d = ksasl_refresher_next_deadline(r);
    CHECK_OK(ksasl_refresher_run_due(r, d, &ran));
    CHECK_INT(ran, 1);
    CHECK_INT(ksasl_refresher_generation(r), 2);
    CHECK_INT(ksasl_refresher_next_deadline(r), d + 10000);

    /* A callback that answers later leaves the request outstanding. */
    s.no_reply = 1;
    CHECK_OK(ksasl_refresher_run_due(r, d + 10000, &ran));
    CHECK_INT(ran, 1);
    CHECK_INT(ksasl_refresher_next_deadline(r), -1);
    CHECK_OK(ksasl_refresher_run_due(r, d + 20000, &ran));
    CHECK_INT(ran, 0);
    CHECK_OK(install_token(r, "alice", 3600, d + 20000)); /* the late answer */
    CHECK_INT(ksasl_refresher_generation(r), 3);
    CHECK(ksasl_refresher_next_deadline(r) > d + 20000);

    CHECK_INT(s.count.frees, 0);
    ksasl_refresher_free(r);
    CHECK_INT(s.count.frees, 1);
    CHECK_INT(old.count.frees, 1);

    /* A refresher shared with a registry: freeing the handle drops the callback (and its
     * userdata) at once, while the registry keeps presenting the current token. */
    {
        refresh_state s2;
        ksasl_mechanism_registry *creg = NULL, *sreg = NULL;
        exchange x;
        memset(&s2, 0, sizeof s2);
        CHECK_OK(ksasl_refresher_new(NULL, &r));
        CHECK_OK(ksasl_refresher_set_refresh_callback(r, refresh_cb, &s2, refresh_state_free));
        CHECK_OK(ksasl_refresher_run_due(r, NOW, &ran));
        CHECK_INT(ran, 1);
        CHECK_OK(ksasl_mechanism_registry_new(&creg));
        CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_client(creg, r));
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(sreg, NULL, 0));
        ksasl_refresher_free(r);
        CHECK_INT(s2.count.frees, 1);
        exchange_run(&x, creg, sreg, "OAUTHBEARER", NULL, NOW + 1000);
        CHECK(exchange_ok(&x));
        exchange_free(&x);
        ksasl_mechanism_registry_free(creg);
        ksasl_mechanism_registry_free(sreg);
        CHECK_INT(s2.count.frees, 1);
        CHECK_INT(s2.count.calls, 1);
    }

    /* Without a callback, run_due and invoke_callback answer a due refresh as a failure. */
    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_OK(ksasl_refresher_run_due(r, NOW, &ran));
    CHECK_INT(ran, 0);
    CHECK_INT(ksasl_refresher_next_deadline(r), NOW + 10000);
    CHECK_INT(ksasl_refresher_poll(r, NOW + 10000), 1);
    CHECK_OK(ksasl_refresher_invoke_callback(r, NOW + 10000));
    CHECK_INT(ksasl_refresher_generation(r), 0);
    CHECK(ksasl_refresher_next_deadline(r) > NOW + 10000);
    /* A callback without a free function. */
    CHECK_OK(ksasl_refresher_set_refresh_callback(r, refresh_cb, &s, NULL));
    ksasl_refresher_free(r);
    CHECK_INT(s.count.frees, 1);
}

static void tracker(void) {
    ksasl_refresher *r = NULL;
    ksasl_tracker *t = NULL, *spread = NULL;
    int refresh = -1;
    const uint64_t *ids = NULL;
    size_t n = 99;

    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_INT(ksasl_refresher_poll(r, NOW), 1);
    CHECK_OK(install_token(r, "alice", 3600, NOW));
    CHECK_INT(ksasl_refresher_generation(r), 1);
    CHECK_OK(ksasl_tracker_new(r, 0, &t));
    CHECK_OK(ksasl_tracker_new(r, 10000, &spread));
    ksasl_refresher_free(r); /* the trackers keep it alive ... */
    r = NULL;

    /* Two connections on generation 1, sessions of one hour re-authenticating at 90 %. */
    for (uint64_t id = 1; id <= 2; id++) {
        CHECK_OK(ksasl_tracker_authenticated(t, id, 1, HOUR, NOW + HOUR * 9 / 10, NOW + HOUR));
        CHECK_OK(ksasl_tracker_authenticated(spread, id, 1, HOUR, NOW + HOUR * 9 / 10,
                                             NOW + HOUR));
    }
    CHECK(ksasl_tracker_next_deadline(t) > NOW);
    CHECK_OK(ksasl_tracker_poll(t, NOW, &refresh, &ids, &n));
    CHECK_INT(refresh, 0);
    CHECK_INT(n, 0);

    /* The refresh is due: the tracker says so (and claims the request). */
    {
        int64_t due = ksasl_tracker_next_deadline(t);
        CHECK(due > NOW && due <= NOW + HOUR * 85 / 100);
        CHECK_OK(ksasl_tracker_poll(t, due, &refresh, &ids, &n));
        CHECK_INT(refresh, 1);
        CHECK_INT(n, 0);
        /* ... the other tracker of the same refresher sees it outstanding. */
        CHECK_OK(ksasl_tracker_poll(spread, due, &refresh, &ids, &n));
        CHECK_INT(refresh, 0);
        CHECK_INT(n, 0);
    }
    CHECK_STR(ksasl_tracker_last_error(t), "");
    ksasl_tracker_free(t);
    ksasl_tracker_free(spread);

    /* The tracker's refresh request answered through the refresher's callback. */
    {
        refresh_state s;
        memset(&s, 0, sizeof s);
        CHECK_OK(ksasl_refresher_new(NULL, &r));
        CHECK_OK(ksasl_refresher_set_refresh_callback(r, refresh_cb, &s, refresh_state_free));
        CHECK_OK(ksasl_tracker_new(r, 0, &t));
        CHECK_INT(ksasl_tracker_next_deadline(t), 0);
        CHECK_OK(ksasl_tracker_poll(t, NOW, &refresh, &ids, &n));
        CHECK_INT(refresh, 1);
        CHECK_INT(s.count.calls, 0);
        CHECK_OK(ksasl_refresher_invoke_callback(r, NOW));
        CHECK_INT(s.count.calls, 1);
        CHECK_INT(s.last_now, NOW);
        CHECK_INT(ksasl_refresher_generation(r), 1);
        ksasl_tracker_free(t);
        ksasl_refresher_free(r);
        CHECK_INT(s.count.frees, 1);
        r = NULL;
    }

    /* A fan-out after a refresh: connections on the old generation re-authenticate. */
    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_INT(ksasl_refresher_poll(r, NOW), 1);
    CHECK_OK(install_token(r, "alice", 3600, NOW));
    CHECK_OK(ksasl_tracker_new(r, 0, &t));
    CHECK_OK(ksasl_tracker_new(r, 10000, &spread));
    for (uint64_t id = 1; id <= 3; id++) {
        CHECK_OK(ksasl_tracker_authenticated(t, id, 1, HOUR, NOW + HOUR * 9 / 10, NOW + HOUR));
        CHECK_OK(ksasl_tracker_authenticated(spread, id, 1, HOUR, NOW + HOUR * 9 / 10,
                                             NOW + HOUR));
    }
    CHECK_OK(ksasl_tracker_forget(t, 3));
    CHECK_OK(ksasl_tracker_forget(t, 3)); /* forgetting twice is fine */
    CHECK_OK(ksasl_tracker_forget(spread, 3));
    CHECK_INT(ksasl_refresher_poll(r, NOW + 1000), 0);
    CHECK_OK(install_token(r, "alice", 3600, NOW + 1000)); /* an early refresh: generation 2 */
    CHECK_INT(ksasl_refresher_generation(r), 2);
    CHECK_INT(ksasl_tracker_next_deadline(t), 0); /* now */
    CHECK_OK(ksasl_tracker_poll(t, NOW + 1000, &refresh, &ids, &n));
    CHECK_INT(refresh, 0);
    CHECK_INT(n, 2);
    if (n == 2 && ids != NULL) {
        CHECK_INT(ids[0], 1);
        CHECK_INT(ids[1], 2);
    }
    CHECK_OK(ksasl_tracker_poll(t, NOW + 1000, &refresh, &ids, &n));
    CHECK_INT(n, 0);
    /* Spread over 10 s: one now, one 5 s later. */
    CHECK_OK(ksasl_tracker_poll(spread, NOW + 1000, &refresh, &ids, &n));
    CHECK_INT(n, 1);
    if (n == 1 && ids != NULL) {
        CHECK_INT(ids[0], 1);
    }
    CHECK_INT(ksasl_tracker_next_deadline(spread), NOW + 6000);
    CHECK_OK(ksasl_tracker_poll(spread, NOW + 5999, &refresh, &ids, &n));
    CHECK_INT(n, 0);
    CHECK_OK(ksasl_tracker_poll(spread, NOW + 6000, &refresh, &ids, &n));
    CHECK_INT(n, 1);
    if (n == 1 && ids != NULL) {
        CHECK_INT(ids[0], 2);
    }
    /* Connection 1 re-authenticated on generation 2; connection 2 closed. The next refresh
     * only involves connection 1. */
    CHECK_OK(ksasl_tracker_authenticated(t, 1, 2, HOUR, NOW + 1000 + HOUR * 9 / 10,
                                         NOW + 1000 + HOUR));
    CHECK_OK(ksasl_tracker_forget(t, 2));
    CHECK_INT(ksasl_refresher_poll(r, NOW + 2000), 0);
    CHECK_OK(install_token(r, "alice", 3600, NOW + 2000));
    CHECK_OK(ksasl_tracker_poll(t, NOW + 2000, &refresh, &ids, &n));
    CHECK_INT(n, 1);
    if (n == 1 && ids != NULL) {
        CHECK_INT(ids[0], 1);
    }
    ksasl_tracker_free(t);
    ksasl_tracker_free(spread);
    ksasl_refresher_free(r);
}

/* Extreme but representable times and windows must not panic (a panic inside the refresher
 * or the tracker would poison its lock and break it for good): the schedule and the tracker's
 * fan-out saturate. */
static void extremes(void) {
    ksasl_refresher *r = NULL;
    ksasl_tracker *t = NULL;
    int refresh = 0;
    const uint64_t *ids = NULL;
    size_t n = 0;

    /* A token installed just before the end of time, expiring at it. */
    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_OK(ksasl_refresher_set_token(r, "tok", INT64_MAX, "alice", NULL, NULL, 0,
                                       INT64_MAX - 1));
    CHECK_INT(ksasl_refresher_generation(r), 1);
    CHECK_OK(install_token(r, "alice", 3600, NOW));
    CHECK_OK(ksasl_refresher_set_token_failure(r, NULL, NOW));
    /* A failure at the end of time, run_due at both ends. */
    CHECK_OK(ksasl_refresher_set_token_failure(r, NULL, INT64_MAX));
    CHECK_OK(ksasl_refresher_run_due(r, INT64_MIN, NULL));
    ksasl_refresher_free(r);
    r = NULL;

    /* A tracker with a huge spread window (INT64_MAX / 2) fanning out to 4 connections after
     * a refresh: the first is due at once, the others spread up to the window's end. */
    CHECK_OK(ksasl_refresher_new(NULL, &r));
    CHECK_OK(install_token(r, "alice", 3600, NOW));
    CHECK_OK(ksasl_tracker_new(r, INT64_MAX / 2, &t));
    for (uint64_t id = 1; id <= 4; id++) {
        CHECK_OK(ksasl_tracker_authenticated(t, id, 1, HOUR, NOW + HOUR * 9 / 10, NOW + HOUR));
    }
    CHECK_OK(install_token(r, "alice", 3600, NOW + 1000));
    CHECK_OK(ksasl_tracker_poll(t, NOW + 1000, &refresh, &ids, &n));
    CHECK_INT(n, 1);
    CHECK_OK(ksasl_tracker_poll(t, INT64_MAX, &refresh, &ids, &n));
    CHECK_INT(n, 3);
    ksasl_tracker_free(t);
    ksasl_refresher_free(r);
}

void test_refresh(void) {
    extremes();
    pull_form();
    callback_form();
    tracker();
}
