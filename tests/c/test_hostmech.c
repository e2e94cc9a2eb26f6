/*
 * Host-defined mechanisms (KIP-43 pluggability) through the C ABI: an HMAC-SHA256
 * challenge-response mechanism ("X-HMAC-CHALLENGE") written here in C, registered with
 * ksasl_mechanism_registry_add_client_mechanism / ksasl_mechanism_registry_add_server_mechanism
 * next to the built-ins. The server driver negotiates it, it authenticates through
 * ksasl_client_connection / ksasl_server_connection, re-authenticates with its credential expiry
 * bounding the session, and is refused on a principal change with Kafka's text. Every way the host
 * can misbehave (a non-zero return with or without a message, no message where one is needed, an
 * answer after completion, an empty or non-UTF-8 authorization id, a factory returning NULL, ...)
 * fails with KSASL_HOST_MECHANISM_FAILED and a specific message, leaving the exchange or connection
 * failed. NULL arguments; userdata freed exactly once and every exchange disposed of once.
 */
#include <stdlib.h>

#include "check.h"

#define T0 ((int64_t)1800000000000)
#define NAME "X-HMAC-CHALLENGE"
#define API_METADATA 3
#define API_SASL_HANDSHAKE 17

/* ---- SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), independent of the library ---- */

typedef struct {
    uint32_t h[8];
    uint8_t block[64];
    size_t used;
    uint64_t total;
} sha256_ctx;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(sha256_ctx *c, const uint8_t *p) {
    uint32_t w[64], a, b, d, e, f, g, h, cc;
    for (int i = 0; i < 16; i++) {
        w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) |
               ((uint32_t)p[4 * i + 2] << 8) | (uint32_t)p[4 * i + 3];
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
    e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] +
                      w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
    }
    c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
    c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha256_init(sha256_ctx *c) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->used = 0;
    c->total = 0;
}

static void sha256_update(sha256_ctx *c, const uint8_t *p, size_t n) {
    c->total += n;
    while (n > 0) {
        size_t k = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->block + c->used, p, k);
        c->used += k, p += k, n -= k;
        if (c->used == 64) {
            sha256_block(c, c->block);
            c->used = 0;
        }
    }
}

static void sha256_final(sha256_ctx *c, uint8_t out[32]) {
    uint64_t bits = c->total * 8;
    uint8_t pad = 0x80, zero = 0, len[8];
    sha256_update(c, &pad, 1);
    while (c->used != 56) {
        sha256_update(c, &zero, 1);
    }
    for (int i = 0; i < 8; i++) {
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    }
    sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
}

/* HMAC-SHA256 with a key of at most 64 bytes. */
static void hmac_sha256(const char *key, const uint8_t *data, size_t n, uint8_t out[32]) {
    uint8_t k[64] = {0}, ipad[64], opad[64], inner[32];
    sha256_ctx c;
    memcpy(k, key, strlen(key));
    for (int i = 0; i < 64; i++) {
        ipad[i] = k[i] ^ 0x36;
        opad[i] = k[i] ^ 0x5c;
    }
    sha256_init(&c);
    sha256_update(&c, ipad, 64);
    sha256_update(&c, data, n);
    sha256_final(&c, inner);
    sha256_init(&c);
    sha256_update(&c, opad, 64);
    sha256_update(&c, inner, 32);
    sha256_final(&c, out);
}

static void hmac_vectors(void) {
    /* RFC 4231 test case 2. */
    static const uint8_t want[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
                                     0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                                     0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
                                     0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
    const char *data = "what do ya want for nothing?";
    uint8_t got[32];
    hmac_sha256("Jefe", (const uint8_t *)data, strlen(data), got);
    CHECK(memcmp(got, want, 32) == 0);
}

/* ---- the mechanism ---- */

/* How a side misbehaves, if at all. */
enum fault {
    F_NONE,
    F_FAIL_WITH_MESSAGE,    /* set_error and a non-zero return */
    F_FAIL_WITHOUT_MESSAGE, /* a non-zero return only */
    F_ERROR_RETURNING_0,    /* set_error but a 0 return */
    F_NO_MESSAGE,           /* client: not done and nothing to send; server: no answer */
    F_AFTER_COMPLETION,     /* a message after set_done / set_authenticated */
    F_MESSAGE_TWICE,        /* set_message twice */
    F_NULL_FACTORY,         /* new_exchange returns NULL */
    F_NULL_MESSAGE,         /* set_message(out, NULL, 3) */
    F_NULL_ERROR,           /* set_error(out, NULL) and a non-zero return */
    F_WRONG_SIDE,           /* client: set_authenticated; server: set_done */
    F_EMPTY_ID,             /* server: set_authenticated("") */
    F_BAD_UTF8_ID,          /* server: set_authenticated("\xff\xfe") */
    F_NULL_ID,              /* server: set_authenticated(NULL) */
    F_AFTER_THE_END,        /* client: still talking after the server's final message */
};

/* A call of a deferred mechanism, made later by the test's "host" (see run_job). */
typedef struct {
    int kind; /* JOB_START, JOB_CLIENT_STEP, JOB_SERVER_STEP */
    void *exchange;
    uint8_t in[64];
    size_t len;
    int64_t now;
    int again; /* late_twice: answered later once more already */
} job;

enum { JOB_START = 1, JOB_CLIENT_STEP, JOB_SERVER_STEP };

/* The userdata of one registered mechanism (either side). */
typedef struct {
    job job;       /* the pending call of a deferred mechanism */
    int pendings;  /* calls answered later */
    int frees;     /* free_userdata calls */
    int exchanges; /* new_exchange calls that made an exchange */
    int disposes;  /* dispose calls */
    int calls;     /* start/step calls */
    enum fault fault;
    ksasl_result setter_rc; /* what the misbehaving setter call returned */
    /* Client: who logs in. */
    char user[32];
    char key[32];
} mech;

/* One exchange's state. */
typedef struct {
    mech *m;
    int answered; /* client: the HMAC was sent */
    char user[32];
    uint8_t challenge[8];
    int have_user; /* server: the user name was received */
} exch;

static const struct {
    const char *user, *key;
    int64_t expiry_ms;
} KEYS[] = {{"alice", "alice-key", T0 + 5000}, {"mallory", "mallory-key", T0 + 60000}};

static void mech_free(void *userdata) { ((mech *)userdata)->frees++; }

static void *new_exchange(void *userdata) {
    mech *m = userdata;
    if (m->fault == F_NULL_FACTORY) {
        return NULL;
    }
    exch *x = calloc(1, sizeof *x);
    if (x == NULL) {
        abort();
    }
    x->m = m;
    m->exchanges++;
    return x;
}

static void dispose(void *exchange) {
    exch *x = exchange;
    x->m->disposes++;
    free(x);
}

/* A misbehaviour shared by both sides; 1 if `fault` was one of them (the return value in *rc). */
static int common_fault(mech *m, ksasl_host_output *out, int *rc) {
    switch (m->fault) {
    case F_FAIL_WITH_MESSAGE:
        CHECK_OK(ksasl_host_output_set_error(out, 0, "token service unreachable"));
        *rc = 1;
        return 1;
    case F_FAIL_WITHOUT_MESSAGE:
        *rc = 7;
        return 1;
    case F_ERROR_RETURNING_0:
        CHECK_OK(ksasl_host_output_set_message(out, (const uint8_t *)"x", 1));
        CHECK_OK(ksasl_host_output_set_error(out, 0, "second thoughts\n"));
        CHECK_OK(ksasl_host_output_set_error(out, 0, "ignored: the first message is kept"));
        m->setter_rc = ksasl_host_output_set_message(out, (const uint8_t *)"y", 1);
        *rc = 0;
        return 1;
    case F_NO_MESSAGE:
        *rc = 0;
        return 1;
    case F_MESSAGE_TWICE:
        CHECK_OK(ksasl_host_output_set_message(out, (const uint8_t *)"x", 1));
        m->setter_rc = ksasl_host_output_set_message(out, (const uint8_t *)"x", 1);
        *rc = 0;
        return 1;
    case F_NULL_MESSAGE:
        m->setter_rc = ksasl_host_output_set_message(out, NULL, 3);
        *rc = 0;
        return 1;
    case F_NULL_ERROR:
        m->setter_rc = ksasl_host_output_set_error(out, 0, NULL);
        *rc = -1;
        return 1;
    default:
        return 0;
    }
}

/* Client: sends the user name, then HMAC(key, challenge); done after the server's final
 * (empty) message. */
static int client_start(void *exchange, int64_t now_ms, ksasl_host_output *out) {
    exch *x = exchange;
    mech *m = x->m;
    int rc = 0;
    (void)now_ms;
    m->calls++;
    if (common_fault(m, out, &rc)) {
        return rc;
    }
    switch (m->fault) {
    case F_AFTER_COMPLETION:
        CHECK_OK(ksasl_host_output_set_done(out));
        m->setter_rc =
            ksasl_host_output_set_message(out, (const uint8_t *)m->user, strlen(m->user));
        return 0;
    case F_WRONG_SIDE:
        m->setter_rc = ksasl_host_output_set_authenticated(out, "alice", -1);
        return 0;
    default:
        break;
    }
    CHECK_OK(ksasl_host_output_set_message(out, (const uint8_t *)m->user, strlen(m->user)));
    return 0;
}

static int client_step(void *exchange, const uint8_t *challenge, size_t len, int64_t now_ms,
                       ksasl_host_output *out) {
    exch *x = exchange;
    mech *m = x->m;
    uint8_t mac[32];
    (void)now_ms;
    m->calls++;
    if (x->answered) {
        CHECK_INT(len, 0);
        if (m->fault == F_AFTER_THE_END) {
            return (int)ksasl_host_output_set_message(out, (const uint8_t *)"more", 4);
        }
        return (int)ksasl_host_output_set_done(out);
    }
    x->answered = 1;
    CHECK(challenge != NULL && len == 8);
    hmac_sha256(m->key, challenge, len, mac);
    return (int)ksasl_host_output_set_message(out, mac, sizeof mac);
}

/* Server: a key and an expiry per user; the challenge is the time, big-endian. */
static int server_step(void *exchange, const uint8_t *response, size_t len, int64_t now_ms,
                       ksasl_host_output *out) {
    exch *x = exchange;
    mech *m = x->m;
    int rc = 0;
    m->calls++;
    if (!x->have_user) {
        if (common_fault(m, out, &rc)) {
            return rc;
        }
        if (m->fault == F_WRONG_SIDE) {
            m->setter_rc = ksasl_host_output_set_done(out);
            return 0;
        }
        if (len == 0 || len >= sizeof x->user) {
            ksasl_host_output_set_error(out, 0, "bad user name");
            return 1;
        }
        memcpy(x->user, response, len);
        x->user[len] = '\0';
        x->have_user = 1;
        for (int i = 0; i < 8; i++) {
            x->challenge[i] = (uint8_t)((uint64_t)now_ms >> (56 - 8 * i));
        }
        return (int)ksasl_host_output_set_message(out, x->challenge, sizeof x->challenge);
    }
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        if (strcmp(KEYS[i].user, x->user) == 0) {
            uint8_t mac[32];
            hmac_sha256(KEYS[i].key, x->challenge, sizeof x->challenge, mac);
            if (len != 32 || memcmp(mac, response, 32) != 0) {
                CHECK_OK(ksasl_host_output_set_error(out, KSASL_INVALID_CREDENTIALS,
                                                          "wrong HMAC"));
                return 1;
            }
            switch (m->fault) {
            case F_EMPTY_ID:
                m->setter_rc = ksasl_host_output_set_authenticated(out, "", KEYS[i].expiry_ms);
                return 0;
            case F_BAD_UTF8_ID:
                m->setter_rc =
                    ksasl_host_output_set_authenticated(out, "\xff\xfe", KEYS[i].expiry_ms);
                return 0;
            case F_NULL_ID:
                m->setter_rc = ksasl_host_output_set_authenticated(out, NULL, KEYS[i].expiry_ms);
                return 0;
            case F_AFTER_COMPLETION:
                CHECK_OK(ksasl_host_output_set_authenticated(out, x->user, KEYS[i].expiry_ms));
                m->setter_rc = ksasl_host_output_set_message(out, NULL, 0);
                return 0;
            default:
                break;
            }
            CHECK_OK(ksasl_host_output_set_message(out, NULL, 0));
            return (int)ksasl_host_output_set_authenticated(out, x->user, KEYS[i].expiry_ms);
        }
    }
    CHECK_OK(ksasl_host_output_set_error(out, KSASL_UNKNOWN_USER, "unknown user"));
    return 1;
}

static const ksasl_client_mechanism_vtable CLIENT_VT = {new_exchange, client_start, client_step,
                                                       dispose};
static const ksasl_server_mechanism_vtable SERVER_VT = {new_exchange, server_step, dispose};

/* ---- the same mechanism, answering later ---- */

/* Records the call as the mechanism's pending job and says the answer comes later. */
static int defer(void *exchange, int kind, const uint8_t *in, size_t len, int64_t now,
                 ksasl_host_output *out) {
    mech *m = ((exch *)exchange)->m;
    CHECK(len <= sizeof m->job.in);
    m->job.kind = kind;
    m->job.exchange = exchange;
    m->job.len = len;
    m->job.now = now;
    if (len > 0) {
        memcpy(m->job.in, in, len);
    }
    m->pendings++;
    return (int)ksasl_host_output_set_pending(out, &m->job);
}

static int dclient_start(void *exchange, int64_t now_ms, ksasl_host_output *out) {
    return defer(exchange, JOB_START, NULL, 0, now_ms, out);
}

static int dclient_step(void *exchange, const uint8_t *challenge, size_t len, int64_t now_ms,
                        ksasl_host_output *out) {
    return defer(exchange, JOB_CLIENT_STEP, challenge, len, now_ms, out);
}

static int dserver_step(void *exchange, const uint8_t *response, size_t len, int64_t now_ms,
                        ksasl_host_output *out) {
    return defer(exchange, JOB_SERVER_STEP, response, len, now_ms, out);
}

/* The host finishes a job: the real callback, answering into an output of the host's. */
static int run_job(job *j, ksasl_host_output *answer) {
    switch (j->kind) {
    case JOB_START:
        return client_start(j->exchange, j->now, answer);
    case JOB_CLIENT_STEP:
        return client_step(j->exchange, j->in, j->len, j->now, answer);
    default:
        return server_step(j->exchange, j->in, j->len, j->now, answer);
    }
}

static const ksasl_client_mechanism_vtable DEFERRED_CLIENT_VT = {new_exchange, dclient_start,
                                                                dclient_step, dispose};
static const ksasl_server_mechanism_vtable DEFERRED_SERVER_VT = {new_exchange, dserver_step,
                                                                dispose};

static void mech_init(mech *m, const char *user, const char *key) {
    memset(m, 0, sizeof *m);
    snprintf(m->user, sizeof m->user, "%s", user);
    snprintf(m->key, sizeof m->key, "%s", key);
}

/* Every exchange made was disposed of once, and the userdata freed once. */
static void check_released(const mech *m) {
    CHECK_INT(m->frees, 1);
    CHECK_INT(m->disposes, m->exchanges);
}

/* ---- the Kafka drivers wired in memory ---- */

typedef struct {
    ksasl_client_connection *client;
    ksasl_server_connection *server;
    buf to_server, to_client, frame;
    int authenticated, reauthenticated;
    int server_authenticated, server_reauthenticated;
    ksasl_result client_rc;       /* the client's fatal failure */
    ksasl_server_action fail_act; /* FAIL_AT or CLOSE_NOW */
    char server_error[512];
    int closed;
    int illegal_state_answers; /* SaslAuthenticate requests after the end, refused */
    /* Deferred mechanisms: the work handed out, finished at the start of the next round. */
    job *client_work, *server_work;
    int client_pending, server_pending;
    ksasl_host_output *client_answer, *server_answer;
    /* How the late answers are made: by the mechanism's own callback (NULL), or by this. */
    int (*late_client)(job *j, ksasl_host_output *answer);
    int (*late_server)(job *j, ksasl_host_output *answer);
} hpair;

static int16_t rd16(const uint8_t *p) { return (int16_t)(((unsigned)p[0] << 8) | p[1]); }

static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void hpair_init(hpair *p, const ksasl_client_config *cc, const ksasl_server_config *sc) {
    memset(p, 0, sizeof *p);
    CHECK_OK(ksasl_client_connection_new(cc, &p->client));
    CHECK_OK(ksasl_server_connection_new(sc, &p->server));
    CHECK_OK(ksasl_host_output_new(0, &p->client_answer));
    CHECK_OK(ksasl_host_output_new(1, &p->server_answer));
}

static void hpair_free(hpair *p) {
    ksasl_client_connection_free(p->client);
    ksasl_server_connection_free(p->server);
    ksasl_host_output_free(p->client_answer);
    ksasl_host_output_free(p->server_answer);
    buf_free(&p->to_server);
    buf_free(&p->to_client);
    buf_free(&p->frame);
}

/* Records what the client driver said. */
static void hclient_event(hpair *p, ksasl_result rc, ksasl_client_event ev) {
    if (rc != KSASL_OK) {
        p->client_rc = rc;
        p->closed = 1;
        return;
    }
    if (ev == KSASL_CLIENT_EVENT_AUTHENTICATED) {
        p->authenticated++;
    } else if (ev == KSASL_CLIENT_EVENT_REAUTHENTICATED) {
        p->reauthenticated++;
    } else if (ev == KSASL_CLIENT_EVENT_PENDING) {
        CHECK(p->client_work == NULL);
        p->client_work = ksasl_client_connection_pending_work(p->client);
        CHECK(p->client_work != NULL);
        p->client_pending++;
    } else {
        CHECK_INT(ev, KSASL_CLIENT_EVENT_CONTINUE);
    }
}

static void hclient_read(hpair *p, int64_t now) {
    while (!p->closed && buf_take_frame(&p->to_client, &p->frame)) {
        ksasl_client_event ev = 99;
        const uint8_t *app = NULL;
        size_t app_len = 0;
        ksasl_result rc = ksasl_client_connection_handle_frame(
            p->client, p->frame.data, p->frame.len, now, &ev, &app, &app_len);
        hclient_event(p, rc, ev);
    }
}

/* A SaslAuthenticate response with ILLEGAL_SASL_STATE (34) to the request in `f` (v0 to v2),
 * as a broker's request handler answers SASL requests on an authenticated connection. */
static void illegal_state_response(hpair *p, const uint8_t *f) {
    uint8_t r[32];
    size_t n = 4;
    int16_t version = rd16(f + 2);
    memcpy(r + n, f + 4, 4); /* correlation id */
    n += 4;
    if (version >= 2) {
        r[n++] = 0; /* response header tagged fields */
    }
    r[n++] = 0;
    r[n++] = 34; /* error_code */
    if (version >= 2) {
        r[n++] = 0; /* error_message: null (compact) */
        r[n++] = 1; /* auth_bytes: empty (compact) */
    } else {
        r[n++] = 0xff;
        r[n++] = 0xff; /* error_message: null */
        be32(r + n, 0); /* auth_bytes: empty */
        n += 4;
    }
    if (version >= 1) {
        memset(r + n, 0, 8); /* session_lifetime_ms */
        n += 8;
    }
    if (version >= 2) {
        r[n++] = 0; /* tagged fields */
    }
    be32(r, (uint32_t)(n - 4));
    buf_append(&p->to_client, r, n);
}

static void hserver_action(hpair *p, ksasl_server_action act, const uint8_t *out, size_t len,
                           int64_t now);
static int run_job(job *j, ksasl_host_output *answer);

static void hserver_frame(hpair *p, int64_t now) {
    const uint8_t *f = p->frame.data;
    if (ksasl_server_connection_is_ready(p->server)) {
        CHECK(p->frame.len >= 8);
        switch (ksasl_server_connection_gate(p->server, rd16(f), now)) {
        case KSASL_GATE_BEGIN_REAUTHENTICATION:
            CHECK_INT(rd16(f), API_SASL_HANDSHAKE);
            break;
        case KSASL_GATE_PROCESS:
            p->illegal_state_answers++;
            illegal_state_response(p, f);
            return;
        default:
            p->closed = 1;
            return;
        }
    }
    ksasl_server_action act = 99;
    const uint8_t *out = NULL;
    size_t len = 0;
    int64_t dl = -7;
    CHECK_OK(ksasl_server_connection_handle_frame(p->server, p->frame.data, p->frame.len, now, &act,
                                                  &out, &len, &dl));
    hserver_action(p, act, out, len, now);
}

static void hserver_action(hpair *p, ksasl_server_action act, const uint8_t *out, size_t len,
                           int64_t now) {
    buf_append(&p->to_client, out, len);
    switch (act) {
    case KSASL_SERVER_ACTION_PENDING:
        CHECK(p->server_work == NULL);
        CHECK_INT(len, 0);
        p->server_work = ksasl_server_connection_pending_work(p->server);
        CHECK(p->server_work != NULL);
        p->server_pending++;
        break;
    case KSASL_SERVER_ACTION_CONTINUE:
        break;
    case KSASL_SERVER_ACTION_AUTHENTICATED:
        p->server_authenticated++;
        break;
    case KSASL_SERVER_ACTION_REAUTHENTICATED:
        p->server_reauthenticated++;
        break;
    case KSASL_SERVER_ACTION_FAIL_AT:
    case KSASL_SERVER_ACTION_CLOSE_NOW:
        p->fail_act = act;
        snprintf(p->server_error, sizeof p->server_error, "%s",
                 ksasl_server_connection_last_error(p->server));
        hclient_read(p, now);
        if (!p->closed) {
            p->client_rc = ksasl_client_connection_closed(p->client, now);
        }
        p->closed = 1;
        break;
    default:
        CHECK(!"unexpected server action");
    }
}

static void hpump(hpair *p, int64_t now) {
    for (int round = 0; round < 64; round++) {
        int moved = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        if (p->closed) {
            return;
        }
        /* The work deferred mechanisms handed out last round is finished now. */
        if (p->server_work != NULL) {
            job *j = p->server_work;
            ksasl_server_action act = 99;
            int64_t dl = -7;
            int rc = p->late_server ? p->late_server(j, p->server_answer)
                                    : run_job(j, p->server_answer);
            p->server_work = NULL;
            CHECK_OK(ksasl_server_connection_resume(p->server, p->server_answer, rc, now, &act,
                                                    &out, &len, &dl));
            hserver_action(p, act, out, len, now);
            moved = 1;
            if (p->closed) {
                return;
            }
        }
        if (p->client_work != NULL) {
            job *j = p->client_work;
            ksasl_client_event ev = 99;
            const uint8_t *app = NULL;
            size_t app_len = 0;
            int rc = p->late_client ? p->late_client(j, p->client_answer)
                                    : run_job(j, p->client_answer);
            p->client_work = NULL;
            ksasl_result r = ksasl_client_connection_resume(p->client, p->client_answer, rc, now,
                                                            &ev, &app, &app_len);
            hclient_event(p, r, ev);
            moved = 1;
            if (p->closed) {
                return;
            }
        }
        CHECK_OK(ksasl_client_connection_transmit(p->client, &out, &len));
        if (len > 0) {
            buf_append(&p->to_server, out, len);
            moved = 1;
        }
        while (!p->closed && buf_take_frame(&p->to_server, &p->frame)) {
            moved = 1;
            hserver_frame(p, now);
        }
        if (p->to_client.len > 0) {
            moved = 1;
        }
        hclient_read(p, now);
        if (!moved) {
            return;
        }
    }
    CHECK(!"the pair did not settle");
}

static int contains(const char *hay, const char *needle) {
    return hay != NULL && strstr(hay, needle) != NULL;
}

#define CHECK_CONTAINS(hay, needle)                                                   \
    do {                                                                              \
        const char *check_h_ = (hay);                                                 \
        if (contains(check_h_, (needle))) {                                           \
            check_passed++;                                                           \
        } else {                                                                      \
            check_fail_str(__FILE__, __LINE__, #hay " (contains)", check_h_, (needle)); \
        }                                                                             \
    } while (0)

/* A server registry with the password mechanisms (bob in a store) and the HMAC server. */
static ksasl_mechanism_registry *server_registry(mech *sm) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_credential_store *store = NULL;
    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "bob", "bob-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, store));
    CHECK_OK(ksasl_mechanism_registry_add_server_mechanism(r, NAME, &SERVER_VT, sm, mech_free));
    ksasl_credential_store_free(store);
    return r;
}

static ksasl_server_config *server_config(mech *sm, int64_t max_reauth_ms) {
    ksasl_server_config *sc = NULL;
    ksasl_mechanism_registry *r = server_registry(sm);
    ksasl_server_config_builder *b = server_builder(r);
    ksasl_mechanism_registry_free(r);
    CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(b, NULL, max_reauth_ms));
    CHECK_OK(ksasl_server_config_builder_set_failed_authentication_delay_ms(b, 0));
    sc = server_config_done(b);
    return sc;
}

static ksasl_client_config *client_config(mech *cm) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_client_config *cc = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_client_mechanism(r, NAME, &CLIENT_VT, cm, mech_free));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 1);
    cc = client_config_done(client_builder(r, NAME));
    ksasl_mechanism_registry_free(r);
    return cc;
}

/* ---- through the drivers ---- */

static void authenticates_and_reauthenticates(void) {
    mech cm, sm;
    mech_init(&cm, "alice", "alice-key");
    mech_init(&sm, "", "");
    ksasl_server_config *sc = server_config(&sm, 0);
    ksasl_client_config *cc = client_config(&cm);
    hpair p;
    const char *principal = NULL;
    int64_t lifetime = -7, expiry = -7, reauth_at = -7, cexpiry = -7;
    int started = -1;

    hpair_init(&p, cc, sc);
    CHECK_OK(ksasl_client_connection_start(p.client, T0));
    hpump(&p, T0);
    CHECK_INT(p.authenticated, 1);
    CHECK_INT(p.server_authenticated, 1);
    CHECK_INT(p.client_rc, KSASL_OK);
    CHECK_OK(ksasl_server_connection_session(p.server, &principal, NULL, NULL, &lifetime, &expiry));
    CHECK_STR(principal, "User:alice");
    /* connections.max.reauth.ms is off: the credential's expiry alone bounds the session. */
    CHECK_INT(lifetime, 5000);
    CHECK_INT(expiry, T0 + 5000);
    CHECK_OK(ksasl_client_connection_session(p.client, &lifetime, &reauth_at, &cexpiry));
    CHECK_INT(lifetime, 5000);
    CHECK_INT(cexpiry, T0 + 5000);
    int64_t due = ksasl_client_connection_next_deadline(p.client);
    CHECK(due >= T0 + 4250 && due <= T0 + 4750);
    CHECK_INT(due, reauth_at);
    CHECK(cm.calls == 3 && sm.calls == 2);

    CHECK_OK(ksasl_client_connection_handle_timeout(p.client, due, &started));
    CHECK_INT(started, 1);
    hpump(&p, due);
    CHECK_INT(p.reauthenticated, 1);
    CHECK_INT(p.server_reauthenticated, 1);
    CHECK_OK(ksasl_server_connection_session(p.server, &principal, NULL, NULL, &lifetime, &expiry));
    CHECK_STR(principal, "User:alice");
    /* The same key still expires at T0 + 5 s: the new session ends there too. */
    CHECK_INT(expiry, T0 + 5000);
    CHECK_INT(lifetime, T0 + 5000 - due);
    CHECK_INT(ksasl_server_connection_gate(p.server, API_METADATA, T0 + 5000), KSASL_GATE_PROCESS);
    CHECK_INT(ksasl_server_connection_gate(p.server, API_METADATA, T0 + 5001),
              KSASL_GATE_CLOSE_EXPIRED);
    CHECK_INT(cm.exchanges, 2);
    CHECK_INT(sm.exchanges, 2);
    hpair_free(&p);

    /* The built-ins of the same listener still work next to it. */
    {
        ksasl_mechanism_registry *r = NULL;
        ksasl_client_config *bob = NULL;
        CHECK_OK(ksasl_mechanism_registry_new(&r));
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(r, "bob", "bob-secret"));
        bob = client_config_done(client_builder(r, "SCRAM-SHA-512"));
        hpair_init(&p, bob, sc);
        CHECK_OK(ksasl_client_connection_start(p.client, T0));
        hpump(&p, T0);
        CHECK_INT(p.authenticated, 1);
        CHECK_OK(ksasl_server_connection_session(p.server, &principal, NULL, NULL, NULL, NULL));
        CHECK_STR(principal, "User:bob");
        hpair_free(&p);
        ksasl_client_config_free(bob);
        ksasl_mechanism_registry_free(r);
    }
    CHECK_INT(sm.exchanges, 2);

    /* Userdata lives as long as a configuration holds the mechanism. */
    CHECK_INT(cm.frees, 0);
    CHECK_INT(sm.frees, 0);
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
    check_released(&cm);
    check_released(&sm);
}

static void principal_change_is_refused(void) {
    mech cm, sm;
    mech_init(&cm, "alice", "alice-key");
    mech_init(&sm, "", "");
    ksasl_server_config *sc = server_config(&sm, 3000);
    ksasl_client_config *cc = client_config(&cm);
    hpair p;
    int64_t lifetime = -1;
    int started = -1;

    hpair_init(&p, cc, sc);
    CHECK_OK(ksasl_client_connection_start(p.client, T0));
    hpump(&p, T0);
    CHECK_INT(p.authenticated, 1);
    /* max reauth 3 s is shorter than the credential's 5 s. */
    CHECK_OK(ksasl_server_connection_session(p.server, NULL, NULL, NULL, &lifetime, NULL));
    CHECK_INT(lifetime, 3000);
    snprintf(cm.user, sizeof cm.user, "mallory");
    snprintf(cm.key, sizeof cm.key, "mallory-key");
    int64_t due = ksasl_client_connection_next_deadline(p.client);
    CHECK_OK(ksasl_client_connection_handle_timeout(p.client, due, &started));
    CHECK_INT(started, 1);
    hpump(&p, due);
    CHECK_INT(p.reauthenticated, 0);
    CHECK_INT(p.server_reauthenticated, 0);
    CHECK(p.client_rc != KSASL_OK);
    CHECK_CONTAINS(ksasl_client_connection_last_error(p.client),
                   "Cannot change principals during re-authentication from User.alice: "
                   "User.mallory");
    CHECK_CONTAINS(p.server_error, "Cannot change principals");
    CHECK(!ksasl_server_connection_is_ready(p.server));
    hpair_free(&p);
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
    check_released(&cm);
    check_released(&sm);
}

/* A misbehaving client mechanism: the client connection fails with HOST_MECHANISM_FAILED and
 * `text`, stays failed, and the server authenticates nobody. */
static void client_misbehaves(enum fault fault, const char *text, ksasl_result setter_rc) {
    mech cm, sm;
    mech_init(&cm, "alice", "alice-key");
    mech_init(&sm, "", "");
    cm.fault = fault;
    ksasl_server_config *sc = server_config(&sm, 0);
    ksasl_client_config *cc = client_config(&cm);
    hpair p;
    int64_t lifetime = -1;
    ksasl_result rc;

    hpair_init(&p, cc, sc);
    rc = ksasl_client_connection_start(p.client, T0);
    if (rc == KSASL_OK) {
        hpump(&p, T0);
        rc = p.client_rc;
    }
    CHECK_RC(rc, KSASL_HOST_MECHANISM_FAILED);
    CHECK_STR(ksasl_result_name(rc), "HOST_MECHANISM_FAILED");
    CHECK_CONTAINS(ksasl_client_connection_last_error(p.client), "HOST_MECHANISM_FAILED");
    CHECK_CONTAINS(ksasl_client_connection_last_error(p.client), text);
    /* The code is named once: "HOST_MECHANISM_FAILED: the ... mechanism's ...". */
    CHECK_INT(occurrences(ksasl_client_connection_last_error(p.client), "HOST_MECHANISM_FAILED"),
              1);
    if (setter_rc != KSASL_OK) {
        CHECK_RC(cm.setter_rc, setter_rc);
    }
    CHECK_INT(p.authenticated, 0);
    CHECK_INT(p.server_authenticated, 0);
    CHECK(!ksasl_server_connection_is_ready(p.server));
    CHECK_RC(ksasl_server_connection_session(p.server, NULL, NULL, NULL, &lifetime, NULL),
             KSASL_WRONG_STATE);
    /* The client connection is failed, not stuck. */
    CHECK(ksasl_client_connection_start(p.client, T0) != KSASL_OK);
    CHECK_RC(ksasl_client_connection_session(p.client, NULL, NULL, NULL), KSASL_WRONG_STATE);
    hpair_free(&p);
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
    check_released(&cm);
    check_released(&sm);
}

/* A misbehaving server mechanism: the server fails the connection (FAIL_AT) with
 * HOST_MECHANISM_FAILED and `text`, the client is refused with Kafka's generic sentence. */
static void server_misbehaves(enum fault fault, const char *text, ksasl_result setter_rc) {
    mech cm, sm;
    mech_init(&cm, "alice", "alice-key");
    mech_init(&sm, "", "");
    sm.fault = fault;
    ksasl_server_config *sc = server_config(&sm, 0);
    ksasl_client_config *cc = client_config(&cm);
    hpair p;

    hpair_init(&p, cc, sc);
    CHECK_OK(ksasl_client_connection_start(p.client, T0));
    hpump(&p, T0);
    CHECK_INT(p.fail_act, KSASL_SERVER_ACTION_FAIL_AT);
    CHECK_CONTAINS(p.server_error, "HOST_MECHANISM_FAILED");
    CHECK_CONTAINS(p.server_error, text);
    CHECK_INT(occurrences(p.server_error, "HOST_MECHANISM_FAILED"), 1);
    if (setter_rc != KSASL_OK) {
        CHECK_RC(sm.setter_rc, setter_rc);
    }
    CHECK_INT(p.authenticated, 0);
    CHECK_INT(p.server_authenticated, 0);
    CHECK(!ksasl_server_connection_is_ready(p.server));
    CHECK_RC(ksasl_server_connection_session(p.server, NULL, NULL, NULL, NULL, NULL),
             KSASL_WRONG_STATE);
    if (fault == F_NULL_FACTORY) {
        /* No exchange could be made at the handshake: the server closes without a response. */
        CHECK_RC(p.client_rc, KSASL_CONNECTION_CLOSED);
    } else {
        CHECK_RC(p.client_rc, KSASL_SERVER_REJECTED_AUTHENTICATION);
        /* The host's message stays on the server: the client gets Kafka's generic sentence. */
        CHECK_CONTAINS(ksasl_client_connection_last_error(p.client),
                       "Authentication failed during authentication due to invalid credentials "
                       "with SASL mechanism " NAME);
    }
    if (fault == F_FAIL_WITH_MESSAGE) {
        CHECK(!contains(ksasl_client_connection_last_error(p.client), "token service"));
    }
    hpair_free(&p);
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
    check_released(&cm);
    check_released(&sm);
}

static void misbehaviour_through_the_drivers(void) {
    const char *c = "the " NAME " mechanism's start ";
    const char *s = "the " NAME " mechanism's step ";
    char t[256];
#define WITH(prefix, rest) (snprintf(t, sizeof t, "%s%s", prefix, rest), t)

    client_misbehaves(F_FAIL_WITH_MESSAGE, WITH(c, "failed: token service unreachable"), 0);
    client_misbehaves(F_FAIL_WITHOUT_MESSAGE, WITH(c, "returned 7 without an error message"), 0);
    client_misbehaves(F_ERROR_RETURNING_0, WITH(c, "failed: second thoughts\\x0a"),
                      KSASL_HOST_MECHANISM_FAILED);
    client_misbehaves(F_NO_MESSAGE, WITH(c, "set no message before it was done"), 0);
    client_misbehaves(F_AFTER_COMPLETION,
                      WITH(c, "answered after completing the exchange "
                              "(set_message after set_done)"),
                      KSASL_HOST_MECHANISM_FAILED);
    client_misbehaves(F_MESSAGE_TWICE, WITH(c, "set the message twice"),
                      KSASL_HOST_MECHANISM_FAILED);
    client_misbehaves(F_NULL_MESSAGE, WITH(c, "gave a NULL message with a length"),
                      KSASL_NULL_ARGUMENT);
    client_misbehaves(F_NULL_ERROR,
                      WITH(c, "returned -1 without an error message (and gave a NULL error "
                              "message)"),
                      KSASL_NULL_ARGUMENT);
    client_misbehaves(F_WRONG_SIDE,
                      WITH(c, "called set_authenticated, which is for server mechanisms"),
                      KSASL_HOST_MECHANISM_FAILED);
    client_misbehaves(F_NULL_FACTORY,
                      "the " NAME " mechanism's new_exchange failed: it returned NULL", 0);

    server_misbehaves(F_FAIL_WITH_MESSAGE, WITH(s, "failed: token service unreachable"), 0);
    server_misbehaves(F_FAIL_WITHOUT_MESSAGE, WITH(s, "returned 7 without an error message"), 0);
    server_misbehaves(F_ERROR_RETURNING_0, WITH(s, "failed: second thoughts"),
                      KSASL_HOST_MECHANISM_FAILED);
    server_misbehaves(F_NO_MESSAGE,
                      WITH(s, "set neither a challenge nor an authenticated client"), 0);
    server_misbehaves(F_AFTER_COMPLETION,
                      WITH(s, "answered after completing the exchange (set_message after "
                              "set_authenticated)"),
                      KSASL_HOST_MECHANISM_FAILED);
    server_misbehaves(F_MESSAGE_TWICE, WITH(s, "set the message twice"),
                      KSASL_HOST_MECHANISM_FAILED);
    server_misbehaves(F_NULL_MESSAGE, WITH(s, "gave a NULL message with a length"),
                      KSASL_NULL_ARGUMENT);
    server_misbehaves(F_NULL_ERROR, WITH(s, "returned -1 without an error message"),
                      KSASL_NULL_ARGUMENT);
    server_misbehaves(F_WRONG_SIDE, WITH(s, "called set_done, which is for client mechanisms"),
                      KSASL_HOST_MECHANISM_FAILED);
    server_misbehaves(F_EMPTY_ID, WITH(s, "authenticated an empty authorization id"),
                      KSASL_HOST_MECHANISM_FAILED);
    server_misbehaves(F_BAD_UTF8_ID, WITH(s, "gave a non-UTF-8 authorization id"),
                      KSASL_HOST_MECHANISM_FAILED);
    server_misbehaves(F_NULL_ID, WITH(s, "gave a NULL authorization id"), KSASL_NULL_ARGUMENT);
    server_misbehaves(F_NULL_FACTORY,
                      "the " NAME " mechanism's new_exchange failed: it returned NULL", 0);
#undef WITH

    /* A wrong HMAC (the host's own verdict) and an unknown user: refused, nobody in. */
    {
        mech cm, sm;
        mech_init(&cm, "alice", "not-alice-key");
        mech_init(&sm, "", "");
        ksasl_server_config *sc = server_config(&sm, 0);
        ksasl_client_config *cc = client_config(&cm);
        hpair p;
        hpair_init(&p, cc, sc);
        CHECK_OK(ksasl_client_connection_start(p.client, T0));
        hpump(&p, T0);
        CHECK_INT(p.fail_act, KSASL_SERVER_ACTION_FAIL_AT);
        /* The host chose the code, as a built-in mechanism would. */
        CHECK_CONTAINS(p.server_error, "INVALID_CREDENTIALS: the " NAME
                                       " mechanism's step failed: wrong HMAC");
        CHECK_RC(p.client_rc, KSASL_SERVER_REJECTED_AUTHENTICATION);
        hpair_free(&p);
        snprintf(cm.user, sizeof cm.user, "eve");
        hpair_init(&p, cc, sc);
        CHECK_OK(ksasl_client_connection_start(p.client, T0));
        hpump(&p, T0);
        CHECK_CONTAINS(p.server_error, "UNKNOWN_USER: the " NAME
                                       " mechanism's step failed: unknown user");
        CHECK_INT(p.authenticated, 0);
        hpair_free(&p);
        ksasl_client_config_free(cc);
        ksasl_server_config_free(sc);
        check_released(&cm);
        check_released(&sm);
    }

    /* The client keeps talking after the server's final message: the authenticated server's
     * request handler answers ILLEGAL_SASL_STATE, as Kafka's does, and the client fails. */
    {
        mech cm, sm;
        mech_init(&cm, "alice", "alice-key");
        mech_init(&sm, "", "");
        cm.fault = F_AFTER_THE_END;
        ksasl_server_config *sc = server_config(&sm, 0);
        ksasl_client_config *cc = client_config(&cm);
        hpair p;
        hpair_init(&p, cc, sc);
        CHECK_OK(ksasl_client_connection_start(p.client, T0));
        hpump(&p, T0);
        CHECK_INT(p.server_authenticated, 1);
        CHECK_INT(p.authenticated, 0);
        CHECK_INT(p.illegal_state_answers, 1);
        CHECK(p.client_rc != KSASL_OK);
        CHECK(ksasl_client_connection_start(p.client, T0) != KSASL_OK);
        hpair_free(&p);
        ksasl_client_config_free(cc);
        ksasl_server_config_free(sc);
        check_released(&cm);
        check_released(&sm);
    }
}

/* ---- single exchanges (ksasl_client_exchange / ksasl_server_exchange) ---- */

static void single_exchanges(void) {
    mech cm, sm;
    ksasl_mechanism_registry *creg = NULL, *sreg = NULL;
    ksasl_client_exchange *c = NULL;
    ksasl_server_exchange *s = NULL;
    const uint8_t *out = NULL, *sout = NULL;
    size_t len = 0, slen = 0;
    int done = -1;
    ksasl_server_step_kind st = 0;
    const char *principal = NULL, *name = NULL, *mechanism = NULL;
    int64_t expiry = 0;
    int token = -1;

    mech_init(&cm, "mallory", "mallory-key");
    mech_init(&sm, "", "");
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_client_mechanism(creg, NAME, &CLIENT_VT, &cm, mech_free));
    sreg = server_registry(&sm);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(sreg, 1), 4);

    /* A full exchange. */
    CHECK_OK(ksasl_client_exchange_new(creg, NAME, &c));
    CHECK_OK(ksasl_server_exchange_new(sreg, NAME, &s));
    CHECK_OK(ksasl_client_exchange_start(c, T0, &out, &len, &done));
    CHECK(done == 0 && len == 7 && memcmp(out, "mallory", 7) == 0);
    CHECK_OK(ksasl_server_exchange_step(s, out, len, T0, &st, &sout, &slen));
    CHECK(st == KSASL_SERVER_STEP_CHALLENGE && slen == 8);
    CHECK_OK(ksasl_client_exchange_step(c, sout, slen, T0, &out, &len, &done));
    CHECK(done == 0 && len == 32);
    CHECK_OK(ksasl_server_exchange_step(s, out, len, T0, &st, &sout, &slen));
    CHECK_INT(st, KSASL_SERVER_STEP_DONE);
    CHECK_INT(slen, 0);
    CHECK(sout != NULL); /* an empty last message, not none */
    CHECK_OK(ksasl_server_exchange_outcome(s, &principal, &name, &mechanism, &expiry, &token, NULL,
                                           NULL));
    CHECK_STR(principal, "User:mallory");
    CHECK_STR(name, "mallory");
    CHECK_STR(mechanism, NAME);
    CHECK_INT(expiry, T0 + 60000);
    CHECK_INT(token, 0);
    CHECK_OK(ksasl_client_exchange_step(c, sout, slen, T0, &out, &len, &done));
    CHECK_INT(done, 1);
    CHECK(out == NULL && len == 0);
    /* The core's state machine: no steps after the end. */
    CHECK_RC(ksasl_client_exchange_step(c, sout, slen, T0, &out, &len, &done),
             KSASL_STEP_AFTER_DONE);
    CHECK_RC(ksasl_server_exchange_step(s, out, 0, T0, &st, &sout, &slen), KSASL_STEP_AFTER_DONE);
    CHECK_INT(cm.calls, 3);
    CHECK_INT(sm.calls, 2);
    CHECK_INT(cm.disposes, 0);
    ksasl_client_exchange_free(c);
    ksasl_server_exchange_free(s);
    CHECK_INT(cm.disposes, 1);
    CHECK_INT(sm.disposes, 1);

    /* A failed step leaves the exchange failed: the mechanism is not called again. */
    cm.fault = F_FAIL_WITHOUT_MESSAGE;
    CHECK_OK(ksasl_client_exchange_new(creg, NAME, &c));
    CHECK_RC(ksasl_client_exchange_start(c, T0, &out, &len, &done), KSASL_HOST_MECHANISM_FAILED);
    CHECK_STR(ksasl_client_exchange_last_error(c),
              "HOST_MECHANISM_FAILED: the " NAME
              " mechanism's start returned 7 without an error message");
    CHECK_RC(ksasl_client_exchange_start(c, T0, &out, &len, &done), KSASL_STEP_AFTER_FAILURE);
    CHECK_RC(ksasl_client_exchange_step(c, NULL, 0, T0, &out, &len, &done),
             KSASL_STEP_AFTER_FAILURE);
    CHECK_INT(cm.calls, 4);
    ksasl_client_exchange_free(c);

    sm.fault = F_NO_MESSAGE;
    CHECK_OK(ksasl_server_exchange_new(sreg, NAME, &s));
    CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)"alice", 5, T0, &st, &sout, &slen),
             KSASL_HOST_MECHANISM_FAILED);
    CHECK_STR(ksasl_server_exchange_client_message(s),
              "Authentication failed during authentication due to invalid credentials with SASL "
              "mechanism " NAME);
    CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)"alice", 5, T0, &st, &sout, &slen),
             KSASL_STEP_AFTER_FAILURE);
    CHECK_RC(ksasl_server_exchange_outcome(s, &principal, NULL, NULL, NULL, NULL, NULL, NULL),
             KSASL_WRONG_STATE);
    CHECK_INT(sm.calls, 3);
    ksasl_server_exchange_free(s);

    /* A factory returning NULL: no exchange, the constructor says why; nothing to dispose. */
    cm.fault = F_NULL_FACTORY;
    sm.fault = F_NULL_FACTORY;
    c = (ksasl_client_exchange *)&cm;
    CHECK_RC(ksasl_client_exchange_new(creg, NAME, &c), KSASL_HOST_MECHANISM_FAILED);
    CHECK(c == (ksasl_client_exchange *)&cm); /* out-parameters are written only on success */
    CHECK_STR(ksasl_last_constructor_error(), "HOST_MECHANISM_FAILED: the " NAME
                                              " mechanism's new_exchange failed: it returned NULL");
    CHECK_RC(ksasl_server_exchange_new(sreg, NAME, &s), KSASL_HOST_MECHANISM_FAILED);
    CHECK_INT(cm.exchanges, 2);
    CHECK_INT(sm.exchanges, 2);

    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(sreg);
    check_released(&cm);
    check_released(&sm);
}

/* ---- registration: NULL and invalid arguments, replacement, ownership ---- */

/* A stateless mechanism: the exchange state is the userdata itself. */
static void *static_exchange(void *userdata) {
    ((mech *)userdata)->exchanges++;
    return userdata;
}

static int noop_start(void *x, int64_t now, ksasl_host_output *out) {
    (void)now;
    ((mech *)x)->calls++;
    return (int)ksasl_host_output_set_message(out, NULL, 0);
}

static int noop_step(void *x, const uint8_t *ch, size_t len, int64_t now, ksasl_host_output *out) {
    (void)x, (void)ch, (void)len, (void)now;
    return (int)ksasl_host_output_set_done(out);
}

static void registration(void) {
    ksasl_mechanism_registry *r = NULL;
    counter ud = {0, 0};
    ksasl_client_mechanism_vtable cvt = CLIENT_VT;
    ksasl_server_mechanism_vtable svt = SERVER_VT;

    CHECK_OK(ksasl_mechanism_registry_new(&r));

    /* The library takes the userdata in every case: a failed call frees it at once. */
    CHECK_RC(
        ksasl_mechanism_registry_add_client_mechanism(NULL, NAME, &CLIENT_VT, &ud, counter_free),
        KSASL_NULL_ARGUMENT);
    CHECK_INT(ud.frees, 1);
    CHECK_RC(
        ksasl_mechanism_registry_add_server_mechanism(NULL, NAME, &SERVER_VT, &ud, counter_free),
        KSASL_NULL_ARGUMENT);
    CHECK_INT(ud.frees, 2);
    CHECK_RC(ksasl_mechanism_registry_add_client_mechanism(r, NULL, &CLIENT_VT, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ud.frees, 3);
    CHECK_RC(ksasl_mechanism_registry_add_server_mechanism(r, NULL, &SERVER_VT, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ud.frees, 4);
    CHECK_RC(ksasl_mechanism_registry_add_client_mechanism(r, NAME, NULL, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_CONTAINS(ksasl_mechanism_registry_last_error(r), "vtable must not be NULL");
    CHECK_RC(ksasl_mechanism_registry_add_server_mechanism(r, NAME, NULL, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ud.frees, 6);
    cvt.new_exchange = NULL;
    CHECK_RC(ksasl_mechanism_registry_add_client_mechanism(r, NAME, &cvt, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_CONTAINS(ksasl_mechanism_registry_last_error(r), "vtable->new_exchange must not be NULL");
    cvt = CLIENT_VT;
    cvt.start = NULL;
    CHECK_RC(ksasl_mechanism_registry_add_client_mechanism(r, NAME, &cvt, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_CONTAINS(ksasl_mechanism_registry_last_error(r), "vtable->start must not be NULL");
    cvt = CLIENT_VT;
    cvt.step = NULL;
    CHECK_RC(ksasl_mechanism_registry_add_client_mechanism(r, NAME, &cvt, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_CONTAINS(ksasl_mechanism_registry_last_error(r), "vtable->step must not be NULL");
    svt.step = NULL;
    CHECK_RC(ksasl_mechanism_registry_add_server_mechanism(r, NAME, &svt, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    svt = SERVER_VT;
    svt.new_exchange = NULL;
    CHECK_RC(ksasl_mechanism_registry_add_server_mechanism(r, NAME, &svt, &ud, counter_free),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ud.frees, 11);
    /* Names as in SaslHandshake: 1 to 20 of A-Z 0-9 - _. */
    CHECK_RC(
        ksasl_mechanism_registry_add_client_mechanism(r, "x-hmac", &CLIENT_VT, &ud, counter_free),
        KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_server_mechanism(r, "", &SERVER_VT, &ud, counter_free),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(
        ksasl_mechanism_registry_add_server_mechanism(r, "\xff", &SERVER_VT, &ud, counter_free),
        KSASL_INVALID_ARGUMENT);
    CHECK_INT(ud.frees, 14);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 0);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 1), 0);
    /* NULL userdata and no free function are fine. */
    CHECK_RC(ksasl_mechanism_registry_add_client_mechanism(NULL, NAME, &CLIENT_VT, NULL, NULL),
             KSASL_NULL_ARGUMENT);

    /* Replacing a mechanism releases the old one's userdata (nothing else holds it). */
    {
        counter a = {0, 0}, b = {0, 0};
        ksasl_client_mechanism_vtable minimal = {static_exchange, noop_start, noop_step, NULL};
        mech m;
        ksasl_client_exchange *c = NULL;
        const uint8_t *out = NULL;
        size_t len = 9;
        int done = -1;
        CHECK_OK(
            ksasl_mechanism_registry_add_client_mechanism(r, "X-A", &CLIENT_VT, &a, counter_free));
        CHECK_OK(
            ksasl_mechanism_registry_add_client_mechanism(r, "X-A", &CLIENT_VT, &b, counter_free));
        CHECK_INT(a.frees, 1);
        CHECK_INT(b.frees, 0);
        /* Without dispose nor free function: the exchange state stays the host's. */
        mech_init(&m, "", "");
        CHECK_OK(ksasl_mechanism_registry_add_client_mechanism(r, "X-A", &minimal, &m, NULL));
        CHECK_INT(b.frees, 1);
        CHECK_OK(ksasl_client_exchange_new(r, "X-A", &c));
        CHECK_OK(ksasl_client_exchange_start(c, T0, &out, &len, &done));
        CHECK(len == 0 && done == 0 && out != NULL); /* an empty first message */
        ksasl_client_exchange_free(c);
        CHECK_INT(m.exchanges, 1);
        CHECK_INT(m.calls, 1);
        CHECK_INT(m.disposes, 0);
        CHECK_INT(m.frees, 0);
    }
    ksasl_mechanism_registry_free(r);
    CHECK_INT(ud.frees, 14);
}

/* ksasl_host_output_* with a NULL output, and an output used by the other side's setters,
 * are covered above through the callbacks; NULL handles here. */
static void null_outputs(void) {
    CHECK_RC(ksasl_host_output_set_message(NULL, (const uint8_t *)"x", 1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_host_output_set_message(NULL, NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_host_output_set_done(NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_host_output_set_authenticated(NULL, "alice", -1), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_host_output_set_error(NULL, 0, "x"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_host_output_set_error(NULL, KSASL_UNKNOWN_USER, "x"), KSASL_NULL_ARGUMENT);
}

/* ksasl_host_output_set_error: the host's own code, 0 for HOST_MECHANISM_FAILED, or a misuse
 * for a foreign one. */
static void host_error_codes(void) {
    mech sm;
    ksasl_mechanism_registry *reg = NULL;
    ksasl_server_exchange *s = NULL;
    ksasl_host_output *a = NULL;
    ksasl_server_step_kind st = 0;
    const uint8_t *out = NULL;
    size_t len = 0;

    mech_init(&sm, "", "");
    CHECK_OK(ksasl_mechanism_registry_new(&reg));
    CHECK_OK(ksasl_mechanism_registry_add_server_mechanism(reg, NAME, &DEFERRED_SERVER_VT, &sm,
                                                           mech_free));
    CHECK_OK(ksasl_host_output_new(1, &a));

    CHECK_OK(ksasl_server_exchange_new(reg, NAME, &s));
    CHECK_OK(ksasl_server_exchange_step(s, (const uint8_t *)"zed", 3, T0, &st, &out, &len));
    CHECK_INT(st, KSASL_SERVER_STEP_PENDING);
    CHECK_OK(ksasl_host_output_set_error(a, KSASL_UNKNOWN_USER, "no such user"));
    CHECK_OK(ksasl_host_output_set_error(a, KSASL_INVALID_CREDENTIALS, "ignored"));
    CHECK_RC(ksasl_server_exchange_resume(s, a, 1, T0, &st, &out, &len), KSASL_UNKNOWN_USER);
    CHECK_STR(ksasl_server_exchange_last_error(s),
              "UNKNOWN_USER: the " NAME " mechanism's late answer failed: no such user");
    CHECK_STR(ksasl_server_exchange_client_message(s),
              "Authentication failed during authentication due to invalid credentials with SASL "
              "mechanism " NAME);
    ksasl_server_exchange_free(s);

    /* Not a ksasl code: refused, and the step fails as a misuse. */
    CHECK_OK(ksasl_server_exchange_new(reg, NAME, &s));
    CHECK_OK(ksasl_server_exchange_step(s, (const uint8_t *)"zed", 3, T0, &st, &out, &len));
    CHECK_RC(ksasl_host_output_set_error(a, 99999, "nothing"), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_host_output_set_error(a, KSASL_UNKNOWN_USER, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_exchange_resume(s, a, 1, T0, &st, &out, &len),
             KSASL_HOST_MECHANISM_FAILED);
    CHECK_STR(ksasl_server_exchange_last_error(s),
              "HOST_MECHANISM_FAILED: the " NAME " mechanism's late answer returned 1 without an "
              "error message (and failed with 99999, which is not a ksasl error code)");
    ksasl_server_exchange_free(s);

    /* Code 0 is the library's own HOST_MECHANISM_FAILED (named once in the detail). */
    CHECK_OK(ksasl_server_exchange_new(reg, NAME, &s));
    CHECK_OK(ksasl_server_exchange_step(s, (const uint8_t *)"zed", 3, T0, &st, &out, &len));
    CHECK_OK(ksasl_host_output_set_error(a, 0, "nothing"));
    CHECK_RC(ksasl_server_exchange_resume(s, a, 1, T0, &st, &out, &len),
             KSASL_HOST_MECHANISM_FAILED);
    CHECK_STR(ksasl_server_exchange_last_error(s),
              "HOST_MECHANISM_FAILED: the " NAME " mechanism's late answer failed: nothing");
    ksasl_server_exchange_free(s);

    ksasl_host_output_free(a);
    ksasl_mechanism_registry_free(reg);
    check_released(&sm);
}

/* The registry, the configurations and the connections may be freed in any order: the
 * userdata goes with the last of them, and an exchange in progress is disposed of with its
 * connection. */
static void ownership(void) {
    mech cm, sm;
    mech_init(&cm, "alice", "alice-key");
    mech_init(&sm, "", "");
    ksasl_server_config *sc = server_config(&sm, 0); /* the registry is already freed */
    ksasl_client_config *cc = client_config(&cm);
    hpair p;
    hpair_init(&p, cc, sc);
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
    CHECK_INT(cm.frees, 0);
    CHECK_INT(sm.frees, 0);
    /* Half an exchange: the server has sent its challenge, the client has not answered. */
    {
        const uint8_t *out = NULL;
        size_t len = 0;
        CHECK_OK(ksasl_client_connection_start(p.client, T0));
        for (int i = 0; i < 3; i++) {
            CHECK_OK(ksasl_client_connection_transmit(p.client, &out, &len));
            buf_append(&p.to_server, out, len);
            while (buf_take_frame(&p.to_server, &p.frame)) {
                hserver_frame(&p, T0);
            }
            if (i < 2) {
                hclient_read(&p, T0);
            }
        }
    }
    CHECK_INT(sm.exchanges, 1);
    CHECK_INT(sm.calls, 1);
    CHECK_INT(sm.disposes, 0);
    CHECK_INT(cm.exchanges, 1);
    ksasl_server_connection_free(p.server);
    p.server = NULL;
    check_released(&sm);
    CHECK_INT(cm.frees, 0);
    ksasl_client_connection_free(p.client);
    p.client = NULL;
    check_released(&cm);
    hpair_free(&p);
}


/* ---- mechanisms answering later (ksasl_host_output_set_pending, *_resume) ---- */

static ksasl_server_config *deferred_server_config(mech *sm, int64_t max_reauth_ms) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_credential_store *store = NULL;
    ksasl_server_config *sc = NULL;
    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "bob", "bob-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, store));
    CHECK_OK(
        ksasl_mechanism_registry_add_server_mechanism(r, NAME, &DEFERRED_SERVER_VT, sm, mech_free));
    ksasl_credential_store_free(store);
    ksasl_server_config_builder *b = server_builder(r);
    ksasl_mechanism_registry_free(r);
    CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(b, NULL, max_reauth_ms));
    CHECK_OK(ksasl_server_config_builder_set_failed_authentication_delay_ms(b, 0));
    sc = server_config_done(b);
    return sc;
}

static ksasl_client_config *deferred_client_config(mech *cm) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_client_config *cc = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(
        ksasl_mechanism_registry_add_client_mechanism(r, NAME, &DEFERRED_CLIENT_VT, cm, mech_free));
    cc = client_config_done(client_builder(r, NAME));
    ksasl_mechanism_registry_free(r);
    return cc;
}

/* Both deferred mechanisms (alice logs in), their configurations and a pair of connections. */
typedef struct {
    mech cm, sm;
    ksasl_server_config *sc;
    ksasl_client_config *cc;
    hpair p;
} dfix;

static void dfix_init(dfix *f, int64_t max_reauth_ms) {
    mech_init(&f->cm, "alice", "alice-key");
    mech_init(&f->sm, "", "");
    f->sc = deferred_server_config(&f->sm, max_reauth_ms);
    f->cc = deferred_client_config(&f->cm);
    hpair_init(&f->p, f->cc, f->sc);
}

/* Frees everything; every exchange was disposed of and the userdata freed once. */
static void dfix_free(dfix *f) {
    hpair_free(&f->p);
    ksasl_client_config_free(f->cc);
    ksasl_server_config_free(f->sc);
    check_released(&f->cm);
    check_released(&f->sm);
}

static void deferred_authenticates_and_reauthenticates(void) {
    dfix f;
    const char *principal = NULL;
    int64_t lifetime = -7, expiry = -7;
    int started = -1;

    dfix_init(&f, 0);
    CHECK(ksasl_client_connection_pending_work(f.p.client) == NULL);
    CHECK(ksasl_server_connection_pending_work(f.p.server) == NULL);
    CHECK(ksasl_client_connection_pending_work(NULL) == NULL);
    CHECK(ksasl_server_connection_pending_work(NULL) == NULL);
    CHECK_OK(ksasl_client_connection_start(f.p.client, T0));
    hpump(&f.p, T0);
    CHECK_INT(f.p.client_rc, KSASL_OK);
    CHECK_INT(f.p.authenticated, 1);
    CHECK_INT(f.p.server_authenticated, 1);
    /* start, the HMAC and the server's last message; the two server steps. */
    CHECK_INT(f.p.client_pending, 3);
    CHECK_INT(f.p.server_pending, 2);
    CHECK(f.cm.pendings == 3 && f.cm.calls == 3 && f.sm.pendings == 2 && f.sm.calls == 2);
    /* Once resumed, nothing is pending. */
    CHECK(ksasl_client_connection_pending_work(f.p.client) == NULL);
    CHECK(ksasl_server_connection_pending_work(f.p.server) == NULL);
    CHECK_OK(
        ksasl_server_connection_session(f.p.server, &principal, NULL, NULL, &lifetime, &expiry));
    CHECK_STR(principal, "User:alice");
    CHECK_INT(lifetime, 5000);
    CHECK_INT(expiry, T0 + 5000);

    int64_t due = ksasl_client_connection_next_deadline(f.p.client);
    CHECK(due >= T0 + 4250 && due <= T0 + 4750);
    CHECK_OK(ksasl_client_connection_handle_timeout(f.p.client, due, &started));
    CHECK_INT(started, 1);
    hpump(&f.p, due);
    CHECK_INT(f.p.reauthenticated, 1);
    CHECK_INT(f.p.server_reauthenticated, 1);
    CHECK_INT(f.p.client_pending, 6);
    CHECK_INT(f.p.server_pending, 4);
    CHECK_OK(
        ksasl_server_connection_session(f.p.server, &principal, NULL, NULL, &lifetime, &expiry));
    CHECK_INT(expiry, T0 + 5000);
    CHECK_INT(lifetime, T0 + 5000 - due);
    dfix_free(&f);
}

static void deferred_principal_change_is_refused(void) {
    dfix f;
    int started = -1;

    dfix_init(&f, 3000);
    CHECK_OK(ksasl_client_connection_start(f.p.client, T0));
    hpump(&f.p, T0);
    CHECK_INT(f.p.authenticated, 1);
    snprintf(f.cm.user, sizeof f.cm.user, "mallory");
    snprintf(f.cm.key, sizeof f.cm.key, "mallory-key");
    int64_t due = ksasl_client_connection_next_deadline(f.p.client);
    CHECK_OK(ksasl_client_connection_handle_timeout(f.p.client, due, &started));
    hpump(&f.p, due);
    CHECK_INT(f.p.reauthenticated, 0);
    CHECK_CONTAINS(ksasl_client_connection_last_error(f.p.client),
                   "Cannot change principals during re-authentication from User.alice: "
                   "User.mallory");
    CHECK_CONTAINS(f.p.server_error, "Cannot change principals");
    dfix_free(&f);
}

/* Late answers that fail. */
static int late_error(job *j, ksasl_host_output *answer) {
    (void)j;
    CHECK_OK(ksasl_host_output_set_error(answer, 0, "directory timeout"));
    return 1;
}

static int late_silent_failure(job *j, ksasl_host_output *answer) {
    (void)j;
    (void)answer;
    return 5;
}

static int late_nothing(job *j, ksasl_host_output *answer) {
    (void)j;
    (void)answer;
    return 0;
}

/* Answers later once more, then for real. */
static int late_twice(job *j, ksasl_host_output *answer) {
    if (!j->again) {
        j->again = 1;
        return (int)ksasl_host_output_set_pending(answer, j);
    }
    j->again = 0;
    return run_job(j, answer);
}

static void late_answers_that_fail(void) {
    struct {
        int server; /* which side answers badly */
        int (*late)(job *, ksasl_host_output *);
        const char *text;
    } cases[] = {
        {1, late_error, "mechanism's late answer failed: directory timeout"},
        {1, late_silent_failure, "mechanism's late answer returned 5 without an error message"},
        {1, late_nothing, "late answer set neither a challenge nor an authenticated client"},
        {0, late_error, "mechanism's late answer failed: directory timeout"},
        {0, late_nothing, "late answer set no message before it was done"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dfix f;
        dfix_init(&f, 0);
        if (cases[i].server) {
            f.p.late_server = cases[i].late;
        } else {
            f.p.late_client = cases[i].late;
        }
        CHECK_OK(ksasl_client_connection_start(f.p.client, T0));
        hpump(&f.p, T0);
        CHECK_INT(f.p.authenticated, 0);
        CHECK(!ksasl_server_connection_is_ready(f.p.server));
        if (cases[i].server) {
            /* Kafka's failure response after the delay, the host's text only on the server. */
            CHECK_INT(f.p.fail_act, KSASL_SERVER_ACTION_FAIL_AT);
            CHECK_CONTAINS(f.p.server_error, cases[i].text);
            CHECK_CONTAINS(f.p.server_error, "HOST_MECHANISM_FAILED");
            CHECK_CONTAINS(ksasl_client_connection_last_error(f.p.client),
                           "Authentication failed during authentication due to invalid "
                           "credentials with SASL mechanism " NAME);
            CHECK(!contains(ksasl_client_connection_last_error(f.p.client), "directory"));
        } else {
            CHECK_INT(f.p.client_rc, KSASL_HOST_MECHANISM_FAILED);
            CHECK_CONTAINS(ksasl_client_connection_last_error(f.p.client), cases[i].text);
        }
        /* Failed, not stuck: nothing is pending, a resume is refused. */
        {
            ksasl_client_event ev = 99;
            CHECK(ksasl_client_connection_pending_work(f.p.client) == NULL);
            CHECK_RC(ksasl_client_connection_resume(f.p.client, f.p.client_answer, 0, T0, &ev, NULL,
                                                    NULL),
                     KSASL_WRONG_STATE);
            CHECK_INT(ev, 99);
        }
        dfix_free(&f);
    }

    /* Answering later again from a late answer is allowed: the driver waits once more. */
    {
        dfix f;
        dfix_init(&f, 0);
        f.p.late_server = late_twice;
        f.p.late_client = late_twice;
        CHECK_OK(ksasl_client_connection_start(f.p.client, T0));
        hpump(&f.p, T0);
        CHECK_INT(f.p.authenticated, 1);
        CHECK_INT(f.p.client_pending, 6);
        CHECK_INT(f.p.server_pending, 4);
        dfix_free(&f);
    }
}

/* Runs the pair until the server's first mechanism step is pending. */
static void until_server_pending(hpair *p) {
    const uint8_t *out = NULL;
    size_t len = 0;
    CHECK_OK(ksasl_client_connection_start(p->client, T0));
    for (int i = 0; i < 8 && p->server_pending == 0 && !p->closed; i++) {
        if (p->client_work != NULL) {
            ksasl_client_event ev = 99;
            int rc = run_job(p->client_work, p->client_answer);
            p->client_work = NULL;
            ksasl_result r = ksasl_client_connection_resume(p->client, p->client_answer, rc, T0,
                                                            &ev, NULL, NULL);
            hclient_event(p, r, ev);
        }
        CHECK_OK(ksasl_client_connection_transmit(p->client, &out, &len));
        buf_append(&p->to_server, out, len);
        while (p->server_pending == 0 && buf_take_frame(&p->to_server, &p->frame)) {
            hserver_frame(p, T0);
        }
        hclient_read(p, T0);
    }
    CHECK_INT(p->server_pending, 1);
}

static void resume_misuse(void) {
    dfix f;
    ksasl_server_action act = 99;
    ksasl_client_event ev = 99;
    const uint8_t *out = NULL;
    size_t len = 0;
    int64_t dl = -7;
    ksasl_host_output *o = NULL;

    CHECK_RC(ksasl_host_output_new(0, NULL), KSASL_NULL_ARGUMENT);
    ksasl_host_output_free(NULL);

    dfix_init(&f, 0);
    /* Nothing pending: refused, nothing changes. */
    CHECK_RC(ksasl_client_connection_resume(f.p.client, f.p.client_answer, 0, T0, &ev, NULL, NULL),
             KSASL_WRONG_STATE);
    CHECK_CONTAINS(ksasl_client_connection_last_error(f.p.client),
                   "no SASL mechanism work is pending");
    CHECK_RC(
        ksasl_server_connection_resume(f.p.server, f.p.server_answer, 0, T0, &act, &out, &len, &dl),
        KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_connection_resume(NULL, f.p.client_answer, 0, T0, &ev, NULL, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_server_connection_resume(NULL, f.p.server_answer, 0, T0, &act, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_INT(ev, 99);
    CHECK_INT(act, 99);

    until_server_pending(&f.p);
    void *work = ksasl_server_connection_pending_work(f.p.server);
    CHECK(work == &f.sm.job);
    /* A NULL answer, a client's answer, NULL out-parameters: refused, still pending. */
    CHECK_RC(ksasl_server_connection_resume(f.p.server, NULL, 0, T0, &act, &out, &len, &dl),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(
        ksasl_server_connection_resume(f.p.server, f.p.client_answer, 0, T0, &act, &out, &len, &dl),
        KSASL_INVALID_ARGUMENT);
    CHECK_CONTAINS(ksasl_server_connection_last_error(f.p.server), "made for a client mechanism");
    CHECK_RC(
        ksasl_server_connection_resume(f.p.server, f.p.server_answer, 0, T0, NULL, &out, &len, &dl),
        KSASL_NULL_ARGUMENT);
    CHECK(ksasl_server_connection_pending_work(f.p.server) == work);
    /* The client's request arriving again while the server's mechanism works: close now. */
    {
        ksasl_server_connection *again = f.p.server;
        /* Build a second SaslAuthenticate the simplest way: feed the same bytes again. */
        CHECK(f.p.frame.len > 0);
        CHECK_OK(ksasl_server_connection_handle_frame(again, f.p.frame.data, f.p.frame.len, T0,
                                                      &act, &out, &len, &dl));
        CHECK_INT(act, KSASL_SERVER_ACTION_CLOSE_NOW);
        CHECK_CONTAINS(ksasl_server_connection_last_error(again), "is awaited");
        /* ...and the pending work is still there to resume. */
        CHECK(ksasl_server_connection_pending_work(again) == work);
    }
    /* Setters on an answer: pending is exclusive with everything else. */
    CHECK_OK(ksasl_host_output_new(1, &o));
    CHECK_OK(ksasl_host_output_set_message(o, (const uint8_t *)"x", 1));
    CHECK_RC(ksasl_host_output_set_pending(o, NULL), KSASL_HOST_MECHANISM_FAILED);
    CHECK_RC(ksasl_host_output_set_pending(NULL, NULL), KSASL_NULL_ARGUMENT);
    /* The violation travels with the answer: the resumed step fails. */
    CHECK_OK(ksasl_server_connection_resume(f.p.server, o, 0, T0, &act, &out, &len, &dl));
    CHECK_INT(act, KSASL_SERVER_ACTION_FAIL_AT);
    CHECK_CONTAINS(ksasl_server_connection_last_error(f.p.server),
                   "set a message and then said the answer comes later");
    /* The answer was emptied by the resume and can be reused. */
    CHECK_OK(ksasl_host_output_set_pending(o, NULL));
    CHECK_RC(ksasl_host_output_set_message(o, (const uint8_t *)"x", 1),
             KSASL_HOST_MECHANISM_FAILED);
    CHECK_RC(ksasl_host_output_set_authenticated(o, "alice", -1), KSASL_HOST_MECHANISM_FAILED);
    CHECK_RC(ksasl_host_output_set_pending(o, NULL), KSASL_HOST_MECHANISM_FAILED);
    ksasl_host_output_free(o);
    dfix_free(&f);
}

/* A connection freed while its mechanism's answer is pending disposes of the exchange. */
static void freed_while_pending(void) {
    dfix f;
    dfix_init(&f, 0);
    until_server_pending(&f.p);
    CHECK(ksasl_server_connection_pending_work(f.p.server) == &f.sm.job);
    CHECK_INT(f.sm.exchanges, 1);
    CHECK_INT(f.sm.disposes, 0);
    ksasl_server_connection_free(f.p.server);
    f.p.server = NULL;
    CHECK_INT(f.sm.disposes, 1);
    dfix_free(&f);
}

static void deferred_single_exchanges(void) {
    mech cm, sm;
    ksasl_mechanism_registry *creg = NULL, *sreg = NULL;
    ksasl_client_exchange *c = NULL;
    ksasl_server_exchange *s = NULL;
    ksasl_host_output *ca = NULL, *sa = NULL;
    const uint8_t *out = NULL, *sout = NULL;
    size_t len = 0, slen = 0;
    int done = -1;
    ksasl_server_step_kind st = 0;
    const char *principal = NULL;

    mech_init(&cm, "alice", "alice-key");
    mech_init(&sm, "", "");
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_client_mechanism(creg, NAME, &DEFERRED_CLIENT_VT, &cm,
                                                           mech_free));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_server_mechanism(sreg, NAME, &DEFERRED_SERVER_VT, &sm,
                                                           mech_free));
    CHECK_OK(ksasl_host_output_new(0, &ca));
    CHECK_OK(ksasl_host_output_new(1, &sa));
    CHECK_OK(ksasl_client_exchange_new(creg, NAME, &c));
    CHECK_OK(ksasl_server_exchange_new(sreg, NAME, &s));
    CHECK(ksasl_client_exchange_pending_work(c) == NULL);
    CHECK(ksasl_server_exchange_pending_work(s) == NULL);
    CHECK(ksasl_client_exchange_pending_work(NULL) == NULL);
    CHECK(ksasl_server_exchange_pending_work(NULL) == NULL);
    CHECK_RC(ksasl_client_exchange_resume(c, ca, 0, &out, &len, &done), KSASL_WRONG_STATE);
    CHECK_RC(ksasl_server_exchange_resume(s, sa, 0, T0, &st, &sout, &slen), KSASL_WRONG_STATE);

    /* start: no message and not done means "later". */
    CHECK_OK(ksasl_client_exchange_start(c, T0, &out, &len, &done));
    CHECK(out == NULL && len == 0 && done == 0);
    CHECK(ksasl_client_exchange_pending_work(c) == &cm.job);
    /* A step before the answer: refused, still pending. */
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"x", 1, T0, &out, &len, &done),
             KSASL_WRONG_STATE);
    CHECK_RC(ksasl_client_exchange_resume(c, sa, 0, &out, &len, &done), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_client_exchange_resume(c, NULL, 0, &out, &len, &done), KSASL_NULL_ARGUMENT);
    CHECK(ksasl_client_exchange_pending_work(c) == &cm.job);
    CHECK_OK(ksasl_client_exchange_resume(c, ca, run_job(&cm.job, ca), &out, &len, &done));
    CHECK(done == 0 && len == 5 && memcmp(out, "alice", 5) == 0);
    CHECK(ksasl_client_exchange_pending_work(c) == NULL);

    CHECK_OK(ksasl_server_exchange_step(s, out, len, T0, &st, &sout, &slen));
    CHECK_INT(st, KSASL_SERVER_STEP_PENDING);
    CHECK(sout == NULL && slen == 0);
    CHECK(ksasl_server_exchange_pending_work(s) == &sm.job);
    CHECK_RC(ksasl_server_exchange_step(s, out, len, T0, &st, &sout, &slen), KSASL_WRONG_STATE);
    CHECK_OK(ksasl_server_exchange_resume(s, sa, run_job(&sm.job, sa), T0, &st, &sout, &slen));
    CHECK(st == KSASL_SERVER_STEP_CHALLENGE && slen == 8);

    CHECK_OK(ksasl_client_exchange_step(c, sout, slen, T0, &out, &len, &done));
    CHECK(out == NULL && done == 0);
    CHECK_OK(ksasl_client_exchange_resume(c, ca, run_job(&cm.job, ca), &out, &len, &done));
    CHECK(done == 0 && len == 32);
    CHECK_OK(ksasl_server_exchange_step(s, out, len, T0, &st, &sout, &slen));
    CHECK_INT(st, KSASL_SERVER_STEP_PENDING);
    CHECK_OK(ksasl_server_exchange_resume(s, sa, run_job(&sm.job, sa), T0, &st, &sout, &slen));
    CHECK_INT(st, KSASL_SERVER_STEP_DONE);
    CHECK_OK(ksasl_server_exchange_outcome(s, &principal, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK_STR(principal, "User:alice");
    CHECK_RC(ksasl_server_exchange_resume(s, sa, 0, T0, &st, &sout, &slen), KSASL_WRONG_STATE);
    ksasl_client_exchange_free(c);
    ksasl_server_exchange_free(s);

    /* A failed late answer fails the exchange with the host's text. */
    CHECK_OK(ksasl_server_exchange_new(sreg, NAME, &s));
    CHECK_OK(ksasl_server_exchange_step(s, (const uint8_t *)"alice", 5, T0, &st, &sout, &slen));
    CHECK_INT(st, KSASL_SERVER_STEP_PENDING);
    CHECK_RC(ksasl_server_exchange_resume(s, sa, late_error(&sm.job, sa), T0, &st, &sout, &slen),
             KSASL_HOST_MECHANISM_FAILED);
    CHECK_STR(ksasl_server_exchange_last_error(s),
              "HOST_MECHANISM_FAILED: the " NAME
              " mechanism's late answer failed: directory timeout");
    CHECK_STR(ksasl_server_exchange_client_message(s),
              "Authentication failed during authentication due to invalid credentials with SASL "
              "mechanism " NAME);
    CHECK_RC(ksasl_server_exchange_step(s, (const uint8_t *)"alice", 5, T0, &st, &sout, &slen),
             KSASL_STEP_AFTER_FAILURE);
    ksasl_server_exchange_free(s);

    CHECK_OK(ksasl_client_exchange_new(creg, NAME, &c));
    CHECK_OK(ksasl_client_exchange_start(c, T0, &out, &len, &done));
    CHECK_RC(
        ksasl_client_exchange_resume(c, ca, late_silent_failure(&cm.job, ca), &out, &len, &done),
        KSASL_HOST_MECHANISM_FAILED);
    CHECK_RC(ksasl_client_exchange_step(c, (const uint8_t *)"x", 1, T0, &out, &len, &done),
             KSASL_STEP_AFTER_FAILURE);
    ksasl_client_exchange_free(c);

    ksasl_host_output_free(ca);
    ksasl_host_output_free(sa);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(sreg);
    check_released(&cm);
    check_released(&sm);
}

void test_hostmech(void) {
    hmac_vectors();
    authenticates_and_reauthenticates();
    principal_change_is_refused();
    misbehaviour_through_the_drivers();
    single_exchanges();
    registration();
    null_outputs();
    ownership();
    deferred_authenticates_and_reauthenticates();
    deferred_principal_change_is_refused();
    late_answers_that_fail();
    resume_misuse();
    deferred_single_exchanges();
    freed_while_pending();
    host_error_codes();
}
