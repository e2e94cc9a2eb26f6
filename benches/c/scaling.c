/* Scaling across cores from C: logins per second with 1 and with 2 threads sharing one
 * mechanism registry (and so one credential store, or one JWKS validator with its verdict
 * cache), as a broker's network threads would. The same workloads as benches/scaling.rs:
 *
 *   scram-sha-256/server_login   a SCRAM-SHA-256 login: a server exchange from the shared
 *                                registry, both steps and the outcome; each thread's own
 *                                client (its keys cached) answers.
 *   oauthbearer/cached_validate  an OAUTHBEARER exchange from the shared registry (JWKS
 *                                validator, verdicts cached), each thread presenting its own
 *                                RS256 token, always found in the cache.
 *
 * Each also runs as its `_unshared` control, every thread with a registry (and store, or
 * validator and cache) of its own: what the same work scales to when nothing is shared.
 *
 * Usage: scaling_bench tests/vectors/jwt.json. As in benches/scaling.rs, each workload runs 41
 * pairs of short runs (one thread, two threads, the order swapped every other pair); the
 * figure is the best two-thread rate over the best one-thread rate (this VM's host slows runs
 * down at random, never speeds them up), with the median of the pairs' ratios beside it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ksasl.h"

#define PAIRS 41

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(ksasl_result rc, const char *what) {
    if (rc != KSASL_OK) {
        fprintf(stderr, "%s failed: %s\n", what, ksasl_result_name(rc));
        exit(1);
    }
}

/* --- the workloads ------------------------------------------------------------------------ */

typedef struct {
    const ksasl_mechanism_registry *server; /* shared */
    ksasl_mechanism_registry *client;       /* this thread's (SCRAM) */
    const char *first;                      /* this thread's client-first (OAUTHBEARER) */
    size_t first_len;
    int64_t now;
} work_t;

static void scram_login(work_t *w) {
    ksasl_client_exchange *c;
    ksasl_server_exchange *s;
    const uint8_t *out, *reply;
    size_t out_len, reply_len;
    int done;
    ksasl_server_step_kind kind;
    check(ksasl_client_exchange_new(w->client, "SCRAM-SHA-256", &c), "client");
    check(ksasl_client_exchange_start(c, 0, &out, &out_len, &done), "client start");
    check(ksasl_server_exchange_new(w->server, "SCRAM-SHA-256", &s), "server");
    check(ksasl_server_exchange_step(s, out, out_len, 0, &kind, &reply, &reply_len), "server first");
    check(ksasl_client_exchange_step(c, reply, reply_len, 0, &out, &out_len, &done), "client final");
    check(ksasl_server_exchange_step(s, out, out_len, 0, &kind, &reply, &reply_len), "server final");
    const char *principal;
    check(ksasl_server_exchange_outcome(s, &principal, NULL, NULL, NULL, NULL, NULL, NULL), "outcome");
    if (kind != KSASL_SERVER_STEP_DONE || strcmp(principal, "User:alice") != 0) {
        fprintf(stderr, "login did not complete\n");
        exit(1);
    }
    ksasl_server_exchange_free(s);
    ksasl_client_exchange_free(c);
}

static void oauth_validate(work_t *w) {
    ksasl_server_exchange *s;
    const uint8_t *reply;
    size_t reply_len;
    ksasl_server_step_kind kind;
    check(ksasl_server_exchange_new(w->server, "OAUTHBEARER", &s), "server");
    check(ksasl_server_exchange_step(s, (const uint8_t *)w->first, w->first_len, w->now, &kind, &reply,
                                     &reply_len),
          "server step");
    if (kind != KSASL_SERVER_STEP_DONE) {
        fprintf(stderr, "token refused: %s\n", ksasl_server_exchange_last_error(s));
        exit(1);
    }
    ksasl_server_exchange_free(s);
}

/* --- threads -------------------------------------------------------------------------------- */

typedef struct {
    work_t work;
    void (*op)(work_t *);
    long ops;
    pthread_barrier_t *start;
} thread_t;

static void *run_thread(void *arg) {
    thread_t *t = arg;
    t->op(&t->work); /* warm */
    pthread_barrier_wait(t->start);
    for (long i = 0; i < t->ops; i++) {
        t->op(&t->work);
    }
    return NULL;
}

/* Operations per second of one run of `ops` per thread on `n` threads. */
static double run_once(thread_t *threads, int n, long ops) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n + 1);
    pthread_t ids[2];
    for (int i = 0; i < n; i++) {
        threads[i].ops = ops;
        threads[i].start = &start;
        pthread_create(&ids[i], NULL, run_thread, &threads[i]);
    }
    pthread_barrier_wait(&start);
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        pthread_join(ids[i], NULL);
    }
    double rate = (double)n * (double)ops / (now_s() - t0);
    pthread_barrier_destroy(&start);
    return rate;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, thread_t *threads, long ops) {
    double best_one = 0, best_two = 0, ratios[PAIRS];
    for (int pair = 0; pair < PAIRS; pair++) {
        double one, two;
        if (pair % 2 == 0) {
            one = run_once(threads, 1, ops);
            two = run_once(threads, 2, ops);
        } else {
            two = run_once(threads, 2, ops);
            one = run_once(threads, 1, ops);
        }
        ratios[pair] = two / one;
        best_one = one > best_one ? one : best_one;
        best_two = two > best_two ? two : best_two;
    }
    qsort(ratios, PAIRS, sizeof ratios[0], by_value);
    printf("c/%s: 1 thread %.0f/s, 2 threads %.0f/s, %.2fx (best runs of %d; median of the pairs %.2fx)\n", name,
           best_one, best_two, best_two / best_one, PAIRS, ratios[PAIRS / 2]);
}

/* --- the JWT vectors (tests/vectors/jwt.json), read without a JSON library ------------------- */

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    text[n] = 0;
    fclose(f);
    return text;
}

/* The object after `"key": ` (balanced braces; the vectors hold no braces inside strings). */
static char *object_of(const char *text, const char *key) {
    const char *p = strstr(text, key);
    p = p ? strchr(p, '{') : NULL;
    if (!p) {
        fprintf(stderr, "%s not found\n", key);
        exit(1);
    }
    int depth = 0;
    const char *q = p;
    do {
        depth += (*q == '{') - (*q == '}');
        q++;
    } while (depth > 0 && *q);
    return strndup(p, (size_t)(q - p));
}

/* The string after `"key": ` (JWTs and the issuer have no escapes). */
static char *string_after(const char *from, const char *key) {
    const char *p = strstr(from, key);
    p = p ? strchr(p + strlen(key), '"') : NULL;
    const char *q = p ? strchr(p + 1, '"') : NULL;
    if (!q) {
        fprintf(stderr, "%s not found\n", key);
        exit(1);
    }
    return strndup(p + 1, (size_t)(q - p - 1));
}

/* The token of the vector named `name`: the "token" after its `"name": "<name>"`. */
static char *token_named(const char *text, const char *name) {
    char key[64];
    snprintf(key, sizeof key, "\"name\": \"%s\"", name);
    const char *p = strstr(text, key);
    if (!p) {
        fprintf(stderr, "token %s not found\n", name);
        exit(1);
    }
    return string_after(p, "\"token\":");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s tests/vectors/jwt.json\n", argv[0]);
        return 2;
    }
    thread_t threads[2];
    memset(threads, 0, sizeof threads);

    /* SCRAM: one store and one server registry for both threads (and, for the control, one
     * each); a client registry each. */
    ksasl_credential_store *stores[3];
    ksasl_mechanism_registry *scram_servers[3];
    for (int i = 0; i < 3; i++) {
        check(ksasl_credential_store_new(&stores[i]), "store");
        check(ksasl_credential_store_add_user(stores[i], "alice", "alice-secret", 4096), "add user");
        check(ksasl_mechanism_registry_new(&scram_servers[i]), "registry");
        check(ksasl_mechanism_registry_add_password_servers(scram_servers[i], stores[i]), "password servers");
    }
    for (int i = 0; i < 2; i++) {
        check(ksasl_mechanism_registry_new(&threads[i].work.client), "client registry");
        check(ksasl_mechanism_registry_add_password_clients(threads[i].work.client, "alice", "alice-secret"),
              "password clients");
        threads[i].work.server = scram_servers[0];
        threads[i].op = scram_login;
    }
    report("scram-sha-256/server_login", threads, 15000);
    for (int i = 0; i < 2; i++) {
        threads[i].work.server = scram_servers[1 + i];
    }
    report("scram-sha-256/server_login_unshared", threads, 15000);

    /* OAUTHBEARER: one validator (the vectors' JWKS) behind one registry, a token per thread. */
    char *text = read_file(argv[1]);
    char *jwks = object_of(text, "\"jwks\":");
    char *issuer = string_after(text, "\"issuer\":");
    char *audience = string_after(text, "\"audience\":");
    const char *now_at = strstr(text, "\"now_ms\":");
    int64_t now = now_at ? strtoll(now_at + strlen("\"now_ms\":"), NULL, 10) : 0;
    ksasl_jwks_validator *validators[3];
    ksasl_mechanism_registry *oauth_servers[3];
    for (int i = 0; i < 3; i++) {
        check(ksasl_jwks_validator_new(issuer, audience, &validators[i]), "validator");
        check(ksasl_jwks_validator_set_jwks(validators[i], jwks, now), "jwks");
        check(ksasl_mechanism_registry_new(&oauth_servers[i]), "registry");
        check(ksasl_mechanism_registry_add_oauthbearer_jwks_server(oauth_servers[i], validators[i]), "oauthbearer");
    }
    const char *names[2] = {"rs256", "rs256-string-scope"};
    char *firsts[2];
    for (int i = 0; i < 2; i++) {
        char *token = token_named(text, names[i]);
        size_t n = strlen(token) + 32;
        firsts[i] = malloc(n);
        threads[i].work.first_len = (size_t)snprintf(firsts[i], n, "n,,\001auth=Bearer %s\001\001", token);
        threads[i].work.first = firsts[i];
        threads[i].work.server = oauth_servers[0];
        threads[i].work.now = now;
        threads[i].op = oauth_validate;
        free(token);
    }
    report("oauthbearer/cached_validate", threads, 80000);
    for (int i = 0; i < 2; i++) {
        threads[i].work.server = oauth_servers[1 + i];
    }
    report("oauthbearer/cached_validate_unshared", threads, 80000);

    for (int i = 0; i < 2; i++) {
        ksasl_mechanism_registry_free(threads[i].work.client);
        free(firsts[i]);
    }
    for (int i = 0; i < 3; i++) {
        ksasl_mechanism_registry_free(oauth_servers[i]);
        ksasl_jwks_validator_free(validators[i]);
        ksasl_mechanism_registry_free(scram_servers[i]);
        ksasl_credential_store_free(stores[i]);
    }
    free(jwks);
    free(issuer);
    free(audience);
    free(text);
    return 0;
}
