/* An in-process SCRAM-SHA-256 client and server through the C ABI: the client's messages go
 * straight to the server and back. Prints each step (without secrets) and checks that a
 * wrong password is refused. */
#include <stdio.h>
#include <string.h>

#include "ksasl.h"

static int fail(const char *what, ksasl_result r, const char *detail) {
    fprintf(stderr, "%s: %s (%u): %s\n", what, ksasl_result_name(r), r, detail);
    return 1;
}

/* Runs one exchange; returns the server's result code (KSASL_OK when authenticated). */
static ksasl_result run(ksasl_mechanism_registry *clients, ksasl_mechanism_registry *servers, const char *mech, int verbose) {
    ksasl_client_exchange *c = NULL;
    ksasl_server_exchange *s = NULL;
    ksasl_result r = ksasl_client_exchange_new(clients, mech, &c);
    if (r == KSASL_OK) r = ksasl_server_exchange_new(servers, mech, &s);
    const uint8_t *msg = NULL, *reply = NULL;
    size_t msg_len = 0, reply_len = 0;
    int done = 0;
    ksasl_server_step_kind status = 0;
    if (r == KSASL_OK) r = ksasl_client_exchange_start(c, 0, &msg, &msg_len, &done);
    while (r == KSASL_OK) {
        if (verbose) printf("  client -> server  %zu bytes\n", msg_len);
        r = ksasl_server_exchange_step(s, msg, msg_len, 0, &status, &reply, &reply_len);
        if (r != KSASL_OK) {
            if (verbose) printf("  server refuses: %s; the client is told \"%s\"\n", ksasl_result_name(r), ksasl_server_exchange_client_message(s));
            break;
        }
        if (verbose) printf("  server -> client  %zu bytes%s\n", reply_len, status == KSASL_SERVER_STEP_DONE ? " (final)" : "");
        r = ksasl_client_exchange_step(c, reply, reply_len, 0, &msg, &msg_len, &done);
        if (r != KSASL_OK || status == KSASL_SERVER_STEP_DONE) break;
    }
    if (r == KSASL_OK && status == KSASL_SERVER_STEP_DONE && verbose) {
        const char *principal;
        ksasl_server_exchange_outcome(s, &principal, NULL, NULL, NULL, NULL, NULL, NULL);
        printf("  authenticated %s; the client verified the server's signature\n", principal);
    }
    ksasl_client_exchange_free(c);
    ksasl_server_exchange_free(s);
    return r;
}

int main(void) {
    ksasl_credential_store *store;
    ksasl_mechanism_registry *servers, *good, *bad;
    ksasl_result r;
    if ((r = ksasl_credential_store_new(&store))) return fail("store", r, ksasl_last_constructor_error());
    if ((r = ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096))) return fail("add_user", r, ksasl_credential_store_last_error(store));
    if ((r = ksasl_mechanism_registry_new(&servers)) || (r = ksasl_mechanism_registry_new(&good)) || (r = ksasl_mechanism_registry_new(&bad)))
        return fail("registry", r, ksasl_last_constructor_error());
    if ((r = ksasl_mechanism_registry_add_password_servers(servers, store))) return fail("servers", r, ksasl_mechanism_registry_last_error(servers));
    if ((r = ksasl_mechanism_registry_add_password_clients(good, "alice", "alice-secret"))) return fail("clients", r, ksasl_mechanism_registry_last_error(good));
    if ((r = ksasl_mechanism_registry_add_password_clients(bad, "alice", "guess"))) return fail("clients", r, ksasl_mechanism_registry_last_error(bad));

    printf("SCRAM-SHA-256, right password:\n");
    ksasl_result ok = run(good, servers, "SCRAM-SHA-256", 1);
    printf("SCRAM-SHA-256, wrong password:\n");
    ksasl_result refused = run(bad, servers, "SCRAM-SHA-256", 1);

    ksasl_mechanism_registry_free(bad);
    ksasl_mechanism_registry_free(good);
    ksasl_mechanism_registry_free(servers);
    ksasl_credential_store_free(store);
    if (ok != KSASL_OK || refused != KSASL_INVALID_CREDENTIALS) {
        fprintf(stderr, "unexpected: %s / %s\n", ksasl_result_name(ok), ksasl_result_name(refused));
        return 1;
    }
    return 0;
}
