/*
 * A program built against an installed ksasl (make install-check): prints the library version
 * and runs a PLAIN authentication between a ksasl_client_exchange and a ksasl_server_exchange in one process.
 * Exits 0 on success.
 */

#include <stdio.h>
#include <string.h>

#include <ksasl.h>

#define NOW_MS 1795000000000LL

static int fail(const char *what, ksasl_result rc, const char *detail) {
    fprintf(stderr, "consumer: %s failed: %s (%u): %s\n", what, ksasl_result_name(rc), (unsigned)rc,
            detail ? detail : "");
    return 1;
}

int main(void) {
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *reg = NULL;
    ksasl_client_exchange *client = NULL;
    ksasl_server_exchange *server = NULL;
    const uint8_t *msg = NULL, *reply = NULL;
    size_t msg_len = 0, reply_len = 0;
    int done = 0;
    ksasl_server_step_kind status = 0;
    const char *principal = NULL, *mechanism = NULL;
    ksasl_result rc;
    int result = 1;

    printf("ksasl %s (header %s)\n", ksasl_version(), KSASL_VERSION_STRING);
    if (strcmp(ksasl_version(), KSASL_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: the library and the header disagree on the version\n");
        return 1;
    }

    if ((rc = ksasl_credential_store_new(&store)) != KSASL_OK) {
        return fail("ksasl_credential_store_new", rc, ksasl_last_constructor_error());
    }
    if ((rc = ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096)) != KSASL_OK) {
        fail("ksasl_credential_store_add_user", rc, ksasl_credential_store_last_error(store));
        goto out;
    }
    if ((rc = ksasl_mechanism_registry_new(&reg)) != KSASL_OK) {
        fail("ksasl_mechanism_registry_new", rc, ksasl_last_constructor_error());
        goto out;
    }
    if ((rc = ksasl_mechanism_registry_add_password_servers(reg, store)) != KSASL_OK ||
        (rc = ksasl_mechanism_registry_add_password_clients(reg, "alice", "alice-secret")) != KSASL_OK) {
        fail("ksasl_mechanism_registry_add_password_*", rc, ksasl_mechanism_registry_last_error(reg));
        goto out;
    }
    if ((rc = ksasl_client_exchange_new(reg, "PLAIN", &client)) != KSASL_OK ||
        (rc = ksasl_server_exchange_new(reg, "PLAIN", &server)) != KSASL_OK) {
        fail("ksasl_client_exchange_new/ksasl_server_exchange_new", rc, ksasl_last_constructor_error());
        goto out;
    }

    if ((rc = ksasl_client_exchange_start(client, NOW_MS, &msg, &msg_len, &done)) != KSASL_OK) {
        fail("ksasl_client_exchange_start", rc, ksasl_client_exchange_last_error(client));
        goto out;
    }
    printf("client -> server: %zu bytes (PLAIN, password not shown), client done: %d\n", msg_len, done);
    if ((rc = ksasl_server_exchange_step(server, msg, msg_len, NOW_MS, &status, &reply, &reply_len)) != KSASL_OK) {
        fail("ksasl_server_exchange_step", rc, ksasl_server_exchange_last_error(server));
        goto out;
    }
    if (status != KSASL_SERVER_STEP_DONE) {
        fprintf(stderr, "consumer: expected KSASL_SERVER_STEP_DONE, got %u\n", (unsigned)status);
        goto out;
    }
    if ((rc = ksasl_server_exchange_outcome(server, &principal, NULL, &mechanism, NULL, NULL, NULL, NULL)) != KSASL_OK) {
        fail("ksasl_server_exchange_outcome", rc, ksasl_server_exchange_last_error(server));
        goto out;
    }
    printf("server: authenticated %s with %s\n", principal, mechanism);
    if (strcmp(principal, "User:alice") != 0 || strcmp(mechanism, "PLAIN") != 0) {
        fprintf(stderr, "consumer: unexpected outcome\n");
        goto out;
    }
    result = 0;

out:
    ksasl_server_exchange_free(server);
    ksasl_client_exchange_free(client);
    ksasl_mechanism_registry_free(reg);
    ksasl_credential_store_free(store);
    if (result == 0) {
        printf("ok\n");
    }
    return result;
}
