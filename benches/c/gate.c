/* The cost of crossing the C ABI for a cheap call: ksasl_server_connection_gate on an authenticated
 * connection, timed over many calls (the Rust figure for the same gate is in BENCHMARKS.md,
 * from benches/kafka.rs), plus a whole SCRAM-SHA-256 exchange driven from C. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "ksasl.h"
#include "frames.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pump(ksasl_client_connection *c, ksasl_server_connection *s, int64_t now) {
    buf_t to_server = {0}, to_client = {0};
    for (int round = 0; round < 16; round++) {
        const uint8_t *out, *body, *app;
        size_t len, blen, alen;
        ksasl_client_connection_transmit(c, &out, &len);
        buf_push(&to_server, out, len);
        long used;
        while ((used = frame_next(&to_server, &body, &blen, 1 << 20)) > 0) {
            ksasl_server_action a;
            int64_t d;
            ksasl_server_connection_handle_frame(s, body, blen, now, &a, &out, &len, &d);
            buf_push(&to_client, out, len);
            buf_consume(&to_server, (size_t)used);
        }
        while ((used = frame_next(&to_client, &body, &blen, 1 << 20)) > 0) {
            ksasl_client_event ev;
            ksasl_client_connection_handle_frame(c, body, blen, now, &ev, &app, &alen);
            buf_consume(&to_client, (size_t)used);
        }
    }
    buf_free(&to_server);
    buf_free(&to_client);
}

int main(void) {
    ksasl_credential_store *store;
    ksasl_mechanism_registry *sreg, *creg, *scram;
    ksasl_server_config *scfg;
    ksasl_client_config *ccfg;
    ksasl_server_connection *s;
    ksasl_client_connection *c;
    ksasl_credential_store_new(&store);
    ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096);
    ksasl_mechanism_registry_new(&sreg);
    ksasl_mechanism_registry_add_password_servers(sreg, store);
    ksasl_server_config_builder *sb;
    ksasl_server_config_builder_new(sreg, &sb);
    ksasl_server_config_builder_set_max_reauth_ms(sb, NULL, 600000);
    ksasl_server_config_builder_build(sb, &scfg);
    ksasl_server_config_builder_free(sb);
    ksasl_mechanism_registry_new(&creg);
    ksasl_mechanism_registry_add_password_clients(creg, "alice", "alice-secret");
    ksasl_client_config_builder *cb;
    ksasl_client_config_builder_new(creg, "PLAIN", &cb);
    ksasl_client_config_builder_build(cb, &ccfg);
    ksasl_client_config_builder_free(cb);
    ksasl_server_connection_new(scfg, &s);
    ksasl_client_connection_new(ccfg, &c);
    int64_t t = 1800000000000;
    ksasl_client_connection_start(c, t);
    pump(c, s, t);
    if (!ksasl_server_connection_is_ready(s)) {
        fprintf(stderr, "not authenticated\n");
        return 1;
    }

    const long n = 200000000;
    volatile unsigned sink = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) sink += ksasl_server_connection_gate(s, 3, t + (i & 1023));
    double per = (now_ns() - t0) / (double)n;
    printf("c/gate: %.2f ns per ksasl_server_connection_gate call (%ld calls, sink %u)\n", per, n, sink);

    /* A whole SCRAM-SHA-256 exchange (PBKDF2 on the client, fresh credential each time). */
    ksasl_mechanism_registry_new(&scram);
    const int logins = 200;
    double t1 = now_ns();
    for (int i = 0; i < logins; i++) {
        ksasl_mechanism_registry *r;
        ksasl_client_exchange *cl;
        ksasl_server_exchange *sv;
        const uint8_t *m, *rep;
        size_t ml, rl;
        int done;
        ksasl_server_step_kind st;
        ksasl_mechanism_registry_new(&r);
        ksasl_mechanism_registry_add_password_clients(r, "alice", "alice-secret");
        ksasl_client_exchange_new(r, "SCRAM-SHA-256", &cl);
        ksasl_server_exchange_new(sreg, "SCRAM-SHA-256", &sv);
        ksasl_client_exchange_start(cl, t, &m, &ml, &done);
        ksasl_server_exchange_step(sv, m, ml, t, &st, &rep, &rl);
        ksasl_client_exchange_step(cl, rep, rl, t, &m, &ml, &done);
        ksasl_server_exchange_step(sv, m, ml, t, &st, &rep, &rl);
        ksasl_client_exchange_step(cl, rep, rl, t, &m, &ml, &done);
        if (st != KSASL_SERVER_STEP_DONE || !done) {
            fprintf(stderr, "SCRAM exchange failed\n");
            return 1;
        }
        ksasl_client_exchange_free(cl);
        ksasl_server_exchange_free(sv);
        ksasl_mechanism_registry_free(r);
    }
    printf("c/scram_sha256_exchange: %.1f us per full exchange from C (client PBKDF2 included)\n", (now_ns() - t1) / 1000.0 / logins);
    ksasl_mechanism_registry_free(scram);
    ksasl_client_connection_free(c);
    ksasl_server_connection_free(s);
    ksasl_client_config_free(ccfg);
    ksasl_server_config_free(scfg);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(sreg);
    ksasl_credential_store_free(store);
    return 0;
}
