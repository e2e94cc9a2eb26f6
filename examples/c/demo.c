/* make demo: a ksasl broker-side driver and two client-side drivers talk Kafka over a real
 * loopback TCP socket, on the wall clock, with a 3-second session lifetime.
 *
 *   client "oauth"  OAUTHBEARER, tokens of 8 s from a refresher; re-authenticates before each
 *                   session ends, and once more when the tracker sees a refreshed token;
 *   client "legacy" SCRAM-SHA-256 with re-authentication disabled, like a client without
 *                   KIP-368: the broker closes it on its first request after 3 s.
 *
 * Both send a METADATA request every 400 ms. Everything binds to 127.0.0.1 on a free port and
 * the program ends by itself after about 9 seconds, printing the broker's metrics. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ksasl.h"
#include "frames.h"

#define SESSION_MS 3000
#define TOKEN_S 8
#define RUN_MS 9000
#define MAX_FRAME (512 * 1024)

static int64_t T0;

static void say(const char *who, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("[+%6.3fs] %-7s ", (double)(wall_ms() - T0) / 1000.0, who);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static void die(const char *what, ksasl_result r, const char *detail) {
    fprintf(stderr, "demo: %s failed: %s (%u): %s\n", what, ksasl_result_name(r), r, detail ? detail : "");
    exit(1);
}

#define OK(call, detail) do { ksasl_result r_ = (call); if (r_ != KSASL_OK) die(#call, r_, (detail)); } while (0)

static const char *api(int16_t key) {
    switch (key) {
    case 3: return "METADATA";
    case 17: return "SASL_HANDSHAKE";
    case 18: return "API_VERSIONS";
    case 36: return "SASL_AUTHENTICATE";
    default: return "OTHER";
    }
}

static void write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return; }
        p += w;
        n -= (size_t)w;
    }
}

/* ---------------------------------------------------------------- broker side */
typedef struct {
    int fd;
    const char *name;
    ksasl_server_connection *conn;
    buf_t in;
    int closed;
} broker_conn_t;

static void broker_frame(broker_conn_t *b, const uint8_t *f, size_t n, int64_t now) {
    /* The gate routes every frame: only PROCESS (a live session) reaches the handlers. */
    int16_t gkey = n >= 2 ? be16(f) : -1;
    ksasl_gate g = ksasl_server_connection_gate(b->conn, gkey, now);
    if (g == KSASL_GATE_CLOSE) {
        say("broker", "closes %s: the connection failed", b->name);
        b->closed = 1;
        return;
    }
    if (g != KSASL_GATE_NOT_AUTHENTICATED && n >= 8) {
        int16_t key = gkey;
        if (g == KSASL_GATE_PROCESS) {
            uint8_t resp[12];
            put32(resp, 8);
            memcpy(resp + 4, f + 4, 4); /* correlation id */
            memset(resp + 8, 0, 4);
            write_all(b->fd, resp, sizeof resp);
            return;
        }
        if (g == KSASL_GATE_CLOSE_EXPIRED) {
            say("broker", "closes %s: session expired, %s arrived after it", b->name, api(key));
            b->closed = 1;
            return;
        }
        say("broker", "%s: SaslHandshake on an authenticated connection: re-authentication begins", b->name);
    }
    if (n >= 8) {
        int16_t key = be16(f), version = be16(f + 2);
        if (key == 17 && n >= 14) {
            /* SaslHandshake: the mechanism follows the client id. */
            int16_t idlen = be16(f + 8);
            size_t at = 10 + (idlen > 0 ? (size_t)idlen : 0);
            int16_t mlen = at + 2 <= n ? be16(f + at) : 0;
            say("broker", "%s: <- %s v%d [%.*s]", b->name, api(key), version, (int)(mlen > 0 && at + 2 + (size_t)mlen <= n ? mlen : 0),
                (const char *)f + at + 2);
        } else {
            say("broker", "%s: <- %s v%d (%zu bytes)", b->name, api(key), version, n);
        }
    }
    ksasl_server_action action;
    const uint8_t *out;
    size_t out_len;
    int64_t deadline;
    OK(ksasl_server_connection_handle_frame(b->conn, f, n, now, &action, &out, &out_len, &deadline), ksasl_server_connection_last_error(b->conn));
    write_all(b->fd, out, out_len);
    const char *principal, *mechanism, *why, *told;
    int64_t lifetime, expiry;
    switch (action) {
    case KSASL_SERVER_ACTION_AUTHENTICATED:
    case KSASL_SERVER_ACTION_REAUTHENTICATED:
        OK(ksasl_server_connection_session(b->conn, &principal, &mechanism, NULL, &lifetime, &expiry), ksasl_server_connection_last_error(b->conn));
        say("broker", "%s: %s %s with %s, session lifetime %lld ms (sent in the final SaslAuthenticate response)", b->name, principal,
            action == KSASL_SERVER_ACTION_AUTHENTICATED ? "authenticated" : "re-authenticated", mechanism, (long long)lifetime);
        break;
    case KSASL_SERVER_ACTION_FAIL_AT:
    case KSASL_SERVER_ACTION_CLOSE_NOW:
    case KSASL_SERVER_ACTION_REAUTH_FAILED: {
        ksasl_result reason = ksasl_server_connection_error(b->conn, &why, &told);
        say("broker", "%s: authentication failed: %s: %s (the client was told: \"%s\")", b->name, ksasl_result_name(reason), why, told);
        b->closed = action != KSASL_SERVER_ACTION_REAUTH_FAILED;
        break;
    }
    default:
        break;
    }
}

/* ---------------------------------------------------------------- client side */
typedef struct {
    int fd;
    const char *name;
    ksasl_client_connection *conn;
    buf_t in;
    int closed, authenticated;
    int32_t next_corr;
    int64_t next_request;
    int sent, answered;
    ksasl_tracker *tracker; /* only for the OAUTHBEARER client */
    ksasl_refresher *refresher;
    uint64_t generation_at_start;
} client_t;

static void client_flush(client_t *c) {
    const uint8_t *out;
    size_t len;
    OK(ksasl_client_connection_transmit(c->conn, &out, &len), ksasl_client_connection_last_error(c->conn));
    if (len) write_all(c->fd, out, len);
}

static void client_note_session(client_t *c, const char *what) {
    int64_t lifetime, reauth_at, expiry;
    OK(ksasl_client_connection_session(c->conn, &lifetime, &reauth_at, &expiry), ksasl_client_connection_last_error(c->conn));
    if (reauth_at >= 0)
        say(c->name, "%s: session %lld ms, next re-authentication at +%.3fs", what, (long long)lifetime, (double)(reauth_at - T0) / 1000.0);
    else
        say(c->name, "%s: session %lld ms, this client will not re-authenticate", what, (long long)lifetime);
    if (c->tracker)
        OK(ksasl_tracker_authenticated(c->tracker, 1, c->generation_at_start, lifetime, reauth_at, expiry), ksasl_tracker_last_error(c->tracker));
}

static void client_frame(client_t *c, const uint8_t *f, size_t n, int64_t now) {
    ksasl_client_event ev;
    const uint8_t *app;
    size_t app_len;
    ksasl_result r = ksasl_client_connection_handle_frame(c->conn, f, n, now, &ev, &app, &app_len);
    if (r != KSASL_OK) {
        say(c->name, "authentication failed: %s", ksasl_client_connection_last_error(c->conn));
        c->closed = 1;
        return;
    }
    switch (ev) {
    case KSASL_CLIENT_EVENT_APPLICATION:
        c->answered++;
        if (ksasl_client_connection_is_reauthenticating(c->conn))
            say(c->name, "METADATA response corr=%d arrived during re-authentication: handed back in order", be32(app));
        break;
    case KSASL_CLIENT_EVENT_AUTHENTICATED:
        c->authenticated = 1;
        client_note_session(c, "authenticated");
        break;
    case KSASL_CLIENT_EVENT_REAUTHENTICATED:
        client_note_session(c, "re-authenticated");
        break;
    default:
        break;
    }
    client_flush(c);
}

static void client_start_reauth(client_t *c, int64_t now, const char *why) {
    uint64_t generation = c->refresher ? ksasl_refresher_generation(c->refresher) : 0;
    int started;
    OK(ksasl_client_connection_start_reauthentication(c->conn, now, &started), ksasl_client_connection_last_error(c->conn));
    if (!started) {
        say(c->name, "%s, but the last re-authentication began under a second ago: deferred to +%.3fs", why,
            (double)(ksasl_client_connection_next_deadline(c->conn) - T0) / 1000.0);
        return;
    }
    c->generation_at_start = generation;
    say(c->name, "re-authenticating: %s", why);
    client_flush(c);
}

static void client_tick(client_t *c, int64_t now) {
    if (c->closed || !c->authenticated) return;
    if (ksasl_client_connection_reauth_pending(c->conn, now)) {
        client_start_reauth(c, now, "its re-authentication time has come");
        return;
    }
    if (now >= c->next_request) {
        int send_now;
        OK(ksasl_client_connection_before_request(c->conn, now, &send_now), ksasl_client_connection_last_error(c->conn));
        if (!send_now) return; /* held during re-authentication */
        uint8_t req[14];
        put32(req, 10);
        req[4] = 0; req[5] = 3; req[6] = 0; req[7] = 0; /* METADATA v0 */
        put32(req + 8, c->next_corr++);
        req[12] = 0xff; req[13] = 0xff; /* null client id */
        write_all(c->fd, req, sizeof req);
        c->sent++;
        c->next_request = now + 400;
    }
}

static void read_frames(int fd, buf_t *in, int *closed, void (*on)(void *, const uint8_t *, size_t, int64_t), void *ctx) {
    uint8_t tmp[4096];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) *closed = 1;
        return;
    }
    buf_push(in, tmp, (size_t)n);
    for (;;) {
        const uint8_t *body;
        size_t len;
        long used = frame_next(in, &body, &len, MAX_FRAME);
        if (used < 0) { *closed = 1; return; }
        if (used == 0) return;
        on(ctx, body, len, wall_ms());
        buf_consume(in, (size_t)used);
        if (*closed) return;
    }
}

static void on_broker(void *ctx, const uint8_t *f, size_t n, int64_t now) { broker_frame(ctx, f, n, now); }
static void on_client(void *ctx, const uint8_t *f, size_t n, int64_t now) { client_frame(ctx, f, n, now); }

static void install_token(ksasl_refresher *r, int64_t now) {
    ksasl_oauth_token *t;
    OK(ksasl_oauth_token_new_unsecured("alice", TOKEN_S, NULL, now, &t), ksasl_last_constructor_error());
    const char *names[] = {"logicalCluster"};
    const char *values[] = {"lkc-demo"};
    OK(ksasl_refresher_set_token(r, ksasl_oauth_token_value(t), ksasl_oauth_token_expiry_ms(t), "alice", names, values, 1, now), ksasl_refresher_last_error(r));
    say("idp", "issued token generation %llu, valid %d s (next refresh at +%.3fs)", (unsigned long long)ksasl_refresher_generation(r), TOKEN_S,
        (double)(ksasl_refresher_next_deadline(r) - T0) / 1000.0);
    ksasl_oauth_token_free(t);
}

int main(void) {
    T0 = wall_ms();
    printf("ksasl %s demo: Kafka SASL over loopback TCP with KIP-368 re-authentication\n", ksasl_version());
    printf("broker: connections.max.reauth.ms=%d; oauth client: %d s tokens; legacy client: no re-authentication\n\n", SESSION_MS, TOKEN_S);

    /* Broker: PLAIN/SCRAM users and unsecured OAUTHBEARER tokens. */
    ksasl_credential_store *store;
    ksasl_mechanism_registry *server_reg;
    ksasl_server_config_builder *server_builder;
    ksasl_server_config *server_cfg;
    OK(ksasl_credential_store_new(&store), ksasl_last_constructor_error());
    OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096), ksasl_credential_store_last_error(store));
    OK(ksasl_mechanism_registry_new(&server_reg), ksasl_last_constructor_error());
    OK(ksasl_mechanism_registry_add_password_servers(server_reg, store), ksasl_mechanism_registry_last_error(server_reg));
    OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(server_reg, NULL, 0), ksasl_mechanism_registry_last_error(server_reg));
    OK(ksasl_server_config_builder_new(server_reg, &server_builder), ksasl_last_constructor_error());
    OK(ksasl_server_config_builder_set_max_reauth_ms(server_builder, NULL, SESSION_MS), ksasl_server_config_builder_last_error(server_builder));
    OK(ksasl_server_config_builder_build(server_builder, &server_cfg), ksasl_server_config_builder_last_error(server_builder));
    ksasl_server_config_builder_free(server_builder);

    /* The OAUTHBEARER client: a refresher, a tracker and a client configuration. */
    ksasl_refresher *refresher;
    ksasl_tracker *tracker;
    ksasl_mechanism_registry *oauth_reg;
    ksasl_client_config_builder *oauth_builder;
    ksasl_client_config *oauth_cfg;
    OK(ksasl_refresher_new(NULL, &refresher), ksasl_last_constructor_error());
    OK(ksasl_tracker_new(refresher, 0, &tracker), ksasl_last_constructor_error());
    if (ksasl_refresher_poll(refresher, wall_ms())) install_token(refresher, wall_ms());
    OK(ksasl_mechanism_registry_new(&oauth_reg), ksasl_last_constructor_error());
    OK(ksasl_mechanism_registry_add_oauthbearer_client(oauth_reg, refresher), ksasl_mechanism_registry_last_error(oauth_reg));
    OK(ksasl_client_config_builder_new(oauth_reg, "OAUTHBEARER", &oauth_builder), ksasl_last_constructor_error());
    OK(ksasl_client_config_builder_set_client_id(oauth_builder, "demo-oauth"), ksasl_client_config_builder_last_error(oauth_builder));
    OK(ksasl_client_config_builder_build(oauth_builder, &oauth_cfg), ksasl_client_config_builder_last_error(oauth_builder));
    ksasl_client_config_builder_free(oauth_builder);

    /* The legacy client: SCRAM, never re-authenticates. */
    ksasl_mechanism_registry *scram_reg;
    ksasl_client_config_builder *scram_builder;
    ksasl_client_config *scram_cfg;
    OK(ksasl_mechanism_registry_new(&scram_reg), ksasl_last_constructor_error());
    OK(ksasl_mechanism_registry_add_password_clients(scram_reg, "alice", "alice-secret"), ksasl_mechanism_registry_last_error(scram_reg));
    OK(ksasl_client_config_builder_new(scram_reg, "SCRAM-SHA-256", &scram_builder), ksasl_last_constructor_error());
    OK(ksasl_client_config_builder_set_reauth_timing(scram_builder, KSASL_REAUTH_DISABLED), ksasl_client_config_builder_last_error(scram_builder));
    OK(ksasl_client_config_builder_build(scram_builder, &scram_cfg), ksasl_client_config_builder_last_error(scram_builder));
    ksasl_client_config_builder_free(scram_builder);

    /* Loopback listener on a free port. */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 4) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0) {
        perror("demo: listen");
        return 1;
    }
    printf("broker listening on 127.0.0.1:%d\n\n", ntohs(addr.sin_port));

    client_t clients[2] = {
        {.name = "oauth", .tracker = tracker, .refresher = refresher, .next_corr = 0},
        {.name = "legacy", .next_corr = 0},
    };
    broker_conn_t brokers[2] = {{.name = "oauth"}, {.name = "legacy"}};
    ksasl_client_config *cfgs[2] = {oauth_cfg, scram_cfg};
    for (int i = 0; i < 2; i++) {
        clients[i].fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(clients[i].fd, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("demo: connect"); return 1; }
        brokers[i].fd = accept(lfd, NULL, NULL);
        if (brokers[i].fd < 0) { perror("demo: accept"); return 1; }
        OK(ksasl_server_connection_new(server_cfg, &brokers[i].conn), ksasl_last_constructor_error());
        OK(ksasl_client_connection_new(cfgs[i], &clients[i].conn), ksasl_last_constructor_error());
        clients[i].generation_at_start = ksasl_refresher_generation(refresher);
        say(clients[i].name, "connected; starting SASL (ApiVersions, SaslHandshake, SaslAuthenticate)");
        OK(ksasl_client_connection_start(clients[i].conn, wall_ms()), ksasl_client_connection_last_error(clients[i].conn));
        client_flush(&clients[i]);
    }

    while (wall_ms() - T0 < RUN_MS) {
        int64_t now = wall_ms();
        /* The tracker: refresh the token when due, and re-authenticate connections that
         * still use an older one. */
        int refresh;
        const uint64_t *ids;
        size_t n_ids;
        OK(ksasl_tracker_poll(tracker, now, &refresh, &ids, &n_ids), ksasl_tracker_last_error(tracker));
        if (refresh) install_token(refresher, now);
        for (size_t k = 0; k < n_ids; k++)
            if (!clients[0].closed && !ksasl_client_connection_is_reauthenticating(clients[0].conn))
                client_start_reauth(&clients[0], now, "the tracker saw a refreshed token");
        for (int i = 0; i < 2; i++) client_tick(&clients[i], now);

        struct pollfd p[4];
        for (int i = 0; i < 2; i++) {
            p[i] = (struct pollfd){.fd = clients[i].closed ? -1 : clients[i].fd, .events = POLLIN};
            p[2 + i] = (struct pollfd){.fd = brokers[i].closed ? -1 : brokers[i].fd, .events = POLLIN};
        }
        poll(p, 4, 20);
        for (int i = 0; i < 2; i++) {
            if (p[2 + i].revents) {
                read_frames(brokers[i].fd, &brokers[i].in, &brokers[i].closed, on_broker, &brokers[i]);
                if (brokers[i].closed) shutdown(brokers[i].fd, SHUT_RDWR);
            }
            if (p[i].revents) {
                read_frames(clients[i].fd, &clients[i].in, &clients[i].closed, on_client, &clients[i]);
                if (clients[i].closed && clients[i].authenticated && !brokers[i].closed) continue;
                if (clients[i].closed) say(clients[i].name, "connection closed by the broker");
            }
        }
    }

    printf("\n");
    for (int i = 0; i < 2; i++)
        printf("%-7s %d requests sent, %d answered, connection %s\n", clients[i].name, clients[i].sent, clients[i].answered,
               clients[i].closed ? "closed" : "open");
    printf("\nbroker metrics (socket-server-metrics):\n");
    const char *names[] = {"successful-authentication-total", "successful-reauthentication-total", "failed-authentication-total",
                           "failed-reauthentication-total", "expired-connections-killed-count", "reauthentication-latency-max"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        double v;
        OK(ksasl_server_config_metric(server_cfg, names[k], wall_ms(), &v), ksasl_last_constructor_error());
        printf("  %-36s %g\n", names[k], v);
    }
    int ok = !clients[0].closed && clients[1].closed;
    double reauths = 0, killed = 0;
    ksasl_server_config_metric(server_cfg, "successful-reauthentication-total", wall_ms(), &reauths);
    ksasl_server_config_metric(server_cfg, "expired-connections-killed-count", wall_ms(), &killed);
    ok = ok && reauths >= 3 && killed == 1;

    for (int i = 0; i < 2; i++) {
        close(clients[i].fd);
        close(brokers[i].fd);
        ksasl_client_connection_free(clients[i].conn);
        ksasl_server_connection_free(brokers[i].conn);
        buf_free(&clients[i].in);
        buf_free(&brokers[i].in);
    }
    close(lfd);
    ksasl_client_config_free(oauth_cfg);
    ksasl_client_config_free(scram_cfg);
    ksasl_mechanism_registry_free(oauth_reg);
    ksasl_mechanism_registry_free(scram_reg);
    ksasl_tracker_free(tracker);
    ksasl_refresher_free(refresher);
    ksasl_server_config_free(server_cfg);
    ksasl_mechanism_registry_free(server_reg);
    ksasl_credential_store_free(store);
    if (!ok) {
        fprintf(stderr, "demo: unexpected outcome (oauth open, legacy closed for expiry, >= 3 re-authentications expected)\n");
        return 1;
    }
    printf("\nok: the oauth client stayed connected across every session; the legacy client was cut off at expiry\n");
    return 0;
}
