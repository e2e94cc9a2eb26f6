/*
 * Configuration builders against tests/vectors/config_invalid.json, the table every binding
 * reads: each invalid value is given to the builder's setter of the same name and the build
 * must fail with the table's code, by name (ksasl_result_name). The table is turned into
 * config_cases.h at build time (mk/ctest.mk, tests/c/config_cases.py), never copied by hand.
 *
 * Setters take the raw value; every check is the core's, at build time. A failed build
 * leaves the builder usable: after each case the same builder, given back a valid value,
 * builds.
 */
#include <stdlib.h>

#include "check.h"

typedef struct {
    char kind; /* 'i' integer, 'd' double, 's' string, 'n' null */
    int64_t i;
    double d;
    const char *s;
} config_value;

typedef struct {
    const char *config, *set, *code;
    int is_list;
    size_t n;
    config_value v[3];
} config_case;

#include "config_cases.h"

static int64_t num(const config_value *v) {
    CHECK(v->kind == 'i');
    return v->i;
}

static double dbl(const config_value *v) {
    CHECK(v->kind == 'd' || v->kind == 'i');
    return v->kind == 'd' ? v->d : (double)v->i;
}

static const char *str(const config_value *v) {
    CHECK(v->kind == 's');
    return v->s;
}

/* Applies a client case; 0 for a setter name this test does not know (a test failure). */
static int client_case(const config_case *c, const ksasl_mechanism_registry *r,
                       ksasl_result *rc) {
    const config_value *v = c->v;
    ksasl_client_config_builder *b = NULL;
    ksasl_client_config *cfg = NULL;
    int known = 1;
    CHECK_OK(ksasl_client_config_builder_new(r, strcmp(c->set, "mechanism") == 0 ? str(v) : "PLAIN",
                                             &b));
    if (strcmp(c->set, "mechanism") == 0) {
        /* checked at build time */
    } else if (strcmp(c->set, "api_versions_version") == 0) {
        CHECK_OK(ksasl_client_config_builder_set_api_versions_version(b, num(v)));
    } else if (strcmp(c->set, "reauth_retry_ms") == 0) {
        CHECK_OK(ksasl_client_config_builder_set_reauth_retry_ms(b, num(v)));
    } else if (strcmp(c->set, "reauth_min_delay_ms") == 0) {
        CHECK_OK(ksasl_client_config_builder_set_reauth_min_delay_ms(b, num(v)));
    } else if (strcmp(c->set, "max_receive_size") == 0) {
        CHECK_OK(ksasl_client_config_builder_set_max_receive_size(b, num(v)));
    } else if (strcmp(c->set, "known_versions") == 0) {
        CHECK_INT(c->n, 2);
        CHECK_OK(ksasl_client_config_builder_set_known_versions(
            b, num(&v[0]), v[1].kind == 'n' ? -1 : num(&v[1])));
    } else if (strcmp(c->set, "software") == 0) {
        CHECK_INT(c->n, 2);
        CHECK_OK(ksasl_client_config_builder_set_software(b, str(&v[0]), str(&v[1])));
    } else {
        known = 0;
    }
    *rc = ksasl_client_config_builder_build(b, &cfg);
    CHECK(cfg == NULL);
    CHECK(strlen(ksasl_client_config_builder_last_error(b)) > 0);
    ksasl_client_config_builder_free(b);
    return known;
}

static int server_case(const config_case *c, const ksasl_mechanism_registry *r,
                       ksasl_result *rc) {
    const config_value *v = c->v;
    ksasl_server_config_builder *b = NULL;
    ksasl_server_config *cfg = NULL;
    int known = 1;
    CHECK_OK(ksasl_server_config_builder_new(r, &b));
    if (strcmp(c->set, "max_reauth_ms") == 0) {
        CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(b, NULL, num(v)));
    } else if (strcmp(c->set, "max_reauth_ms_for") == 0) {
        CHECK_INT(c->n, 2);
        CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(b, str(&v[0]), num(&v[1])));
    } else if (strcmp(c->set, "failed_authentication_delay_ms") == 0) {
        CHECK_OK(ksasl_server_config_builder_set_failed_authentication_delay_ms(b, num(v)));
    } else if (strcmp(c->set, "reauth_retry_ms") == 0) {
        CHECK_OK(ksasl_server_config_builder_set_reauth_retry_ms(b, num(v)));
    } else if (strcmp(c->set, "max_receive_size") == 0) {
        CHECK_OK(ksasl_server_config_builder_set_max_receive_size(b, num(v)));
    } else if (strcmp(c->set, "max_request_size") == 0) {
        CHECK_OK(ksasl_server_config_builder_set_max_request_size(b, num(v)));
    } else if (strcmp(c->set, "unknown_user_mask") == 0) {
        CHECK_INT(c->n, 2);
        CHECK_OK(ksasl_server_config_builder_set_unknown_user_mask(
            b, (const uint8_t *)str(&v[0]), strlen(str(&v[0])), num(&v[1])));
    } else if (strcmp(c->set, "api_version") == 0) {
        CHECK_INT(c->n, 3);
        CHECK_OK(ksasl_server_config_builder_set_api_version(b, num(&v[0]), num(&v[1]),
                                                             num(&v[2])));
    } else if (strcmp(c->set, "enabled_mechanisms") == 0) {
        const char *names[3] = {NULL, NULL, NULL};
        for (size_t i = 0; i < c->n; i++) {
            names[i] = str(&v[i]);
        }
        CHECK_OK(ksasl_server_config_builder_set_enabled_mechanisms(b, names, c->n));
    } else {
        known = 0;
    }
    *rc = ksasl_server_config_builder_build(b, &cfg);
    CHECK(cfg == NULL);
    ksasl_server_config_builder_free(b);
    return known;
}

static int refresher_case(const config_case *c, ksasl_result *rc) {
    const config_value *v = c->v;
    ksasl_refresher_config_builder *b = NULL;
    ksasl_refresher_config *cfg = NULL;
    int known = 1;
    CHECK_OK(ksasl_refresher_config_builder_new(&b));
    if (strcmp(c->set, "window_factor") == 0) {
        CHECK_OK(ksasl_refresher_config_builder_set_window_factor(b, dbl(v)));
    } else if (strcmp(c->set, "window_jitter") == 0) {
        CHECK_OK(ksasl_refresher_config_builder_set_window_jitter(b, dbl(v)));
    } else if (strcmp(c->set, "min_period_seconds") == 0) {
        CHECK_OK(ksasl_refresher_config_builder_set_min_period_seconds(b, num(v)));
    } else if (strcmp(c->set, "buffer_seconds") == 0) {
        CHECK_OK(ksasl_refresher_config_builder_set_buffer_seconds(b, num(v)));
    } else if (strcmp(c->set, "retry_backoff_ms") == 0) {
        CHECK_OK(ksasl_refresher_config_builder_set_retry_backoff_ms(b, num(v)));
    } else if (strcmp(c->set, "retry_backoff_max_ms") == 0) {
        CHECK_OK(ksasl_refresher_config_builder_set_retry_backoff_max_ms(b, num(v)));
    } else {
        known = 0;
    }
    *rc = ksasl_refresher_config_builder_build(b, &cfg);
    CHECK(cfg == NULL);
    ksasl_refresher_config_builder_free(b);
    return known;
}

void test_config(void) {
    ksasl_mechanism_registry *r = NULL;
    size_t n = sizeof CONFIG_CASES / sizeof CONFIG_CASES[0];
    CHECK(n >= 30);
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "alice", "alice-secret"));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, NULL));
    for (size_t i = 0; i < n; i++) {
        const config_case *c = &CONFIG_CASES[i];
        ksasl_result rc = KSASL_OK;
        int known = 0;
        if (strcmp(c->config, "client") == 0) {
            known = client_case(c, r, &rc);
        } else if (strcmp(c->config, "server") == 0) {
            known = server_case(c, r, &rc);
        } else if (strcmp(c->config, "refresher") == 0) {
            known = refresher_case(c, &rc);
        }
        if (!known || strcmp(ksasl_result_name(rc), c->code) != 0) {
            fprintf(stderr, "test_config: case %zu (%s %s): %s, expected %s%s\n", i, c->config,
                    c->set, ksasl_result_name(rc), c->code, known ? "" : " (unknown setter)");
        }
        CHECK(known);
        CHECK_STR(ksasl_result_name(rc), c->code);
    }

    /* A failed build leaves the builder usable: given valid values again, it builds. */
    {
        ksasl_client_config_builder *b = NULL;
        ksasl_client_config *cfg = NULL;
        CHECK_OK(ksasl_client_config_builder_new(r, "SCRAM-SHA-256", &b));
        CHECK_OK(ksasl_client_config_builder_set_known_versions(b, 1, 3));
        CHECK_RC(ksasl_client_config_builder_build(b, &cfg), KSASL_INVALID_CONFIG);
        CHECK(strstr(ksasl_client_config_builder_last_error(b), "known versions") != NULL);
        CHECK_OK(ksasl_client_config_builder_set_known_versions(b, 1, 2));
        CHECK_OK(ksasl_client_config_builder_build(b, &cfg));
        ksasl_client_config_free(cfg);
        ksasl_client_config_builder_free(b);
    }
    ksasl_mechanism_registry_free(r);
}
