/* An OAUTHBEARER token refresher with librdkafka's shape (a refresh callback that answers
 * with set_token or set_token_failure), driven by a fake clock: the host sleeps (here: jumps)
 * to ksasl_refresher_next_deadline() and calls ksasl_refresher_run_due(). The token endpoint
 * fails once, and the old token stays in use while the refresher retries. */
#include <stdio.h>

#include "ksasl.h"

typedef struct {
    int64_t t0;
    int calls, fail_next;
} idp_t;

static void refresh_cb(void *userdata, ksasl_refresher *r, int64_t now) {
    idp_t *idp = userdata;
    idp->calls++;
    if (idp->fail_next) {
        idp->fail_next = 0;
        printf("  +%7.1fs  token endpoint unreachable: set_token_failure\n", (double)(now - idp->t0) / 1000.0);
        ksasl_refresher_set_token_failure(r, "token endpoint unreachable", now);
        return;
    }
    ksasl_oauth_token *t;
    if (ksasl_oauth_token_new_unsecured("alice", 3600, "kafka", now, &t) != KSASL_OK) {
        ksasl_refresher_set_token_failure(r, ksasl_last_constructor_error(), now);
        return;
    }
    /* The expiry is absolute, in milliseconds: librdkafka's md_lifetime_ms. */
    ksasl_result res = ksasl_refresher_set_token(r, ksasl_oauth_token_value(t), ksasl_oauth_token_expiry_ms(t), "alice", NULL, NULL, 0, now);
    printf("  +%7.1fs  set_token: %s, next refresh in %.1f min\n", (double)(now - idp->t0) / 1000.0, ksasl_result_name(res),
           (double)(ksasl_refresher_next_deadline(r) - now) / 60000.0);
    ksasl_oauth_token_free(t);
}

int main(void) {
    idp_t idp = {.t0 = 1795000000000, .calls = 0, .fail_next = 0};
    ksasl_refresher *r;
    if (ksasl_refresher_new(NULL, &r) != KSASL_OK) {
        fprintf(stderr, "%s\n", ksasl_last_constructor_error());
        return 1;
    }
    ksasl_refresher_set_refresh_callback(r, refresh_cb, &idp, NULL);
    /* A relative expiry is refused with a message saying so. */
    ksasl_result bad = ksasl_refresher_set_token(r, "abc.def.", 3600000, "alice", NULL, NULL, 0, idp.t0);
    printf("set_token with a relative expiry: %s: %s\n", ksasl_result_name(bad), ksasl_refresher_last_error(r));

    int64_t now = idp.t0;
    int refreshes = 0;
    for (int i = 0; i < 6; i++) {
        int ran = 0;
        ksasl_refresher_run_due(r, now, &ran);
        if (i == 2) idp.fail_next = 1;
        int64_t next = ksasl_refresher_next_deadline(r);
        if (next < 0) break;
        if (ran) refreshes++;
        now = next > now ? next : now;
    }
    uint64_t generation = ksasl_refresher_generation(r);
    printf("%d callbacks, token generation %llu after %.1f virtual hours\n", idp.calls, (unsigned long long)generation,
           (double)(now - idp.t0) / 3600000.0);
    ksasl_refresher_free(r);
    if (bad != KSASL_INVALID_CREDENTIAL_EXPIRY || idp.calls != 6 || generation != 5) {
        fprintf(stderr, "unexpected outcome\n");
        return 1;
    }
    return 0;
}
