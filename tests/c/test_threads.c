/*
 * Shared objects used from several threads (C11 <threads.h>): a store being updated, a
 * registry with a credential store and an OAUTHBEARER client whose refresher gets new
 * tokens, and one server configuration whose metrics all connections update. Each thread
 * uses its own exchanges and connections, as the header requires.
 */
#include <stdlib.h>
#include <threads.h>

#include "check.h"

#define THREADS 4
#define ROUNDS 4
#define NOW ((int64_t)1700000000000)

typedef struct {
    ksasl_credential_store *store;
    ksasl_mechanism_registry *sreg;
    ksasl_mechanism_registry *creg;
    ksasl_refresher *refresher;
    int index;
    int ok;
} shared;

static int worker(void *arg) {
    shared *s = arg;
    static const char *const mechs[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                        "OAUTHBEARER"};
    char user[32];
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t m = 0; m < sizeof mechs / sizeof mechs[0]; m++) {
            exchange x;
            /* One clock for all threads: tokens issued at NOW, checked at NOW + 1 s. */
            exchange_run(&x, s->creg, s->sreg, mechs[m], NULL, NOW + 1000);
            if (exchange_ok(&x)) {
                s->ok++;
            } else {
                fprintf(stderr, "%s:%d: thread %d: %s failed: client %s, server %s (%s)\n",
                        __FILE__, __LINE__, s->index, mechs[m],
                        ksasl_result_name(x.client_rc), ksasl_result_name(x.server_rc),
                        x.server ? ksasl_server_exchange_last_error(x.server) : "");
            }
            exchange_free(&x);
        }
        /* Writers and readers of the store at the same time. */
        snprintf(user, sizeof user, "user-%d-%d", s->index, round);
        CHECK_OK(ksasl_credential_store_add_user(s->store, user, "pw", 4096));
        CHECK_OK(ksasl_credential_store_remove_user(s->store, user, NULL));
        /* New tokens while other threads present the current one. */
        {
            ksasl_oauth_token *t = NULL;
            CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW, &t));
            CHECK_OK(ksasl_refresher_set_token(s->refresher, ksasl_oauth_token_value(t),
                                               ksasl_oauth_token_expiry_ms(t), "alice", NULL, NULL,
                                               0, NOW));
            ksasl_oauth_token_free(t);
        }
    }
    return 0;
}

void test_threads(void) {
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL, *creg = NULL;
    ksasl_refresher *refresher = NULL;
    shared s[THREADS];
    thrd_t th[THREADS];

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(sreg, NULL, 0));
    CHECK_OK(ksasl_refresher_new(NULL, &refresher));
    {
        ksasl_oauth_token *t = NULL;
        CHECK_OK(ksasl_oauth_token_new_unsecured("alice", 3600, NULL, NOW, &t));
        CHECK_OK(ksasl_refresher_set_token(refresher, ksasl_oauth_token_value(t),
                                           ksasl_oauth_token_expiry_ms(t), "alice", NULL, NULL, 0,
                                           NOW));
        ksasl_oauth_token_free(t);
    }
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(creg, "alice", "alice-secret"));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_client(creg, refresher));

    for (int i = 0; i < THREADS; i++) {
        s[i].store = store;
        s[i].sreg = sreg;
        s[i].creg = creg;
        s[i].refresher = refresher;
        s[i].index = i;
        s[i].ok = 0;
        CHECK_INT(thrd_create(&th[i], worker, &s[i]), thrd_success);
    }
    for (int i = 0; i < THREADS; i++) {
        int rc = -1;
        CHECK_INT(thrd_join(th[i], &rc), thrd_success);
        CHECK_INT(rc, 0);
        CHECK_INT(s[i].ok, ROUNDS * 4);
    }
    CHECK_INT(ksasl_refresher_generation(refresher), 1 + THREADS * ROUNDS);

    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(creg);
    ksasl_refresher_free(refresher);
    ksasl_credential_store_free(store);
}
