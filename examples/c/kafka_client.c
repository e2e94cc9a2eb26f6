/* A small Kafka client over a real TCP socket: it authenticates through the ksasl client
 * connection driver, sends a Metadata v0 request every 250 ms for a while, and
 * re-authenticates whenever the session lifetime the broker granted demands it. It works
 * against a real Kafka broker as well as against examples/c/mini_broker.c.
 *
 *   kafka_client HOST PORT MECHANISM USERNAME PASSWORD DURATION_MS [MIN_REAUTHS]
 *
 * With MECHANISM OAUTHBEARER, USERNAME is the principal of an unsecured token (for brokers
 * running Kafka's unsecured validator) and PASSWORD is ignored; or, when USERNAME is
 * "oidc:FILE", tokens come from an identity provider, with the settings in FILE (one
 * "name=value" per line, Kafka's property names: sasl.oauthbearer.token.endpoint.url,
 * clientId, clientSecret, ssl.truststore.location, ..., and the refresher's
 * sasl.login.refresh.min.period.seconds and sasl.login.refresh.buffer.seconds), refreshed in
 * the client's loop on Kafka's schedule. At the end it prints its own
 * SASL metrics (Kafka's names) on one line starting with "metrics". Exit status 0 when every
 * request was answered, no authentication failed, and at least MIN_REAUTHS
 * re-authentications happened. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ksasl.h"
#include "frames.h"

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads "name=value" lines (blank lines and '#' comments skipped) into OIDC settings and a
 * refresher configuration. */
static int read_oidc_settings(const char *path, ksasl_oidc_settings *s, ksasl_refresher_config_builder *b) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char line[4096];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *eq = strchr(line, '=');
        if (line[0] == '#' || line[0] == 0 || !eq) continue;
        *eq = 0;
        if (strcmp(line, "sasl.login.refresh.min.period.seconds") == 0)
            rc = ksasl_refresher_config_builder_set_min_period_seconds(b, atoll(eq + 1));
        else if (strcmp(line, "sasl.login.refresh.buffer.seconds") == 0)
            rc = ksasl_refresher_config_builder_set_buffer_seconds(b, atoll(eq + 1));
        else if ((rc = ksasl_oidc_settings_set(s, line, eq + 1)) != 0)
            fprintf(stderr, "%s: %s\n", path, ksasl_oidc_settings_last_error(s));
    }
    fclose(f);
    return rc;
}

static int connect_to(const char *host, const char *port) {
    struct addrinfo hints = {0}, *res;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        if (fd >= 0) close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: kafka_client HOST PORT MECHANISM USERNAME PASSWORD DURATION_MS [MIN_REAUTHS]\n"
                        "       (GSSAPI: USERNAME is the Kerberos principal, PASSWORD its keytab;\n"
                        "        the service is kafka@HOST)\n");
        return 2;
    }
    const char *mech = argv[3];
    int64_t duration = atoll(argv[6]);
    int min_reauths = argc > 7 ? atoi(argv[7]) : 0;
    ksasl_mechanism_registry *reg;
    ksasl_client_config *cfg;
    ksasl_client_connection *conn;
    ksasl_refresher *refresher = NULL;
    ksasl_kerberos_login *login = NULL;
    ksasl_oidc_login *oidc = NULL;
    int oauth = strcmp(mech, "OAUTHBEARER") == 0;
    if (ksasl_mechanism_registry_new(&reg)) {
        fprintf(stderr, "setup failed: %s\n", ksasl_last_constructor_error());
        return 1;
    }
    if (oauth && strncmp(argv[4], "oidc:", 5) == 0) {
        /* Tokens from the identity provider: the first now, the next ones when the refresher
         * says (polled in the loop below). */
        ksasl_oidc_settings *settings = NULL;
        ksasl_refresher_config_builder *rb = NULL;
        ksasl_refresher_config *rc = NULL;
        int64_t now = wall_ms();
        if (ksasl_oidc_settings_new(&settings) || ksasl_refresher_config_builder_new(&rb) ||
            read_oidc_settings(argv[4] + 5, settings, rb) || ksasl_refresher_config_builder_build(rb, &rc) ||
            ksasl_refresher_new(rc, &refresher) || ksasl_oidc_login_new(settings, &oidc)) {
            fprintf(stderr, "OIDC setup failed: %s\n", ksasl_last_constructor_error());
            return 1;
        }
        ksasl_oidc_settings_free(settings);
        ksasl_refresher_config_free(rc);
        ksasl_refresher_config_builder_free(rb);
        if (!ksasl_refresher_poll(refresher, now) || ksasl_oidc_login_refresh(oidc, refresher, now) ||
            ksasl_mechanism_registry_add_oauthbearer_client(reg, refresher)) {
            fprintf(stderr, "OIDC login failed: %s\n", ksasl_oidc_login_last_error(oidc));
            return 1;
        }
        printf("[+ 0.000s] token from the identity provider (generation %llu)\n",
               (unsigned long long)ksasl_refresher_generation(refresher));
    } else if (oauth) {
        /* One unsecured token of an hour, installed in a refresher the client reads from. */
        ksasl_oauth_token *token = NULL;
        int64_t now = wall_ms();
        if (ksasl_oauth_token_new_unsecured(argv[4], 3600, NULL, now, &token) ||
            ksasl_refresher_new(NULL, &refresher) || !ksasl_refresher_poll(refresher, now) ||
            ksasl_refresher_set_token(refresher, ksasl_oauth_token_value(token), ksasl_oauth_token_expiry_ms(token), argv[4], NULL,
                                      NULL, 0, now) ||
            ksasl_mechanism_registry_add_oauthbearer_client(reg, refresher)) {
            fprintf(stderr, "token setup failed: %s\n", ksasl_last_constructor_error());
            return 1;
        }
        ksasl_oauth_token_free(token);
    } else if (strcmp(mech, "GSSAPI") == 0) {
        /* A ticket-granting ticket from the keytab (no kinit), renewed on Kafka's schedule by
         * ksasl_kerberos_login_poll below; every (re-)authentication uses the current one. */
        if (ksasl_kerberos_login_new(argv[4], argv[5], NULL, -1, -1, -1, &login) ||
            ksasl_kerberos_login_login(login, wall_ms()) ||
            ksasl_mechanism_registry_add_gssapi_client(reg, login, "kafka", argv[1], 0)) {
            fprintf(stderr, "Kerberos setup failed: %s %s / %s\n", ksasl_last_constructor_error(),
                    login ? ksasl_kerberos_login_last_error(login) : "", ksasl_mechanism_registry_last_error(reg));
            return 1;
        }
    } else if (ksasl_mechanism_registry_add_password_clients(reg, argv[4], argv[5])) {
        fprintf(stderr, "setup failed: %s\n", ksasl_last_constructor_error());
        return 1;
    }
    ksasl_client_config_builder *builder;
    if (ksasl_client_config_builder_new(reg, mech, &builder) || ksasl_client_config_builder_set_client_id(builder, "ksasl-c-client") ||
        ksasl_client_config_builder_build(builder, &cfg) || ksasl_client_connection_new(cfg, &conn)) {
        fprintf(stderr, "setup failed: %s / %s\n", ksasl_last_constructor_error(), ksasl_client_config_builder_last_error(builder));
        return 1;
    }
    ksasl_client_config_builder_free(builder);
    int fd = connect_to(argv[1], argv[2]);
    if (fd < 0) {
        perror("connect");
        return 1;
    }
    int64_t t0 = wall_ms(), next_request = 0;
    int32_t corr = 0;
    int sent = 0, answered = 0, reauths = 0, authenticated = 0, failed = 0, reauthing = 0;
    buf_t in = {0};
    ksasl_client_connection_start(conn, t0);
    while (!failed && wall_ms() - t0 < duration) {
        int64_t now = wall_ms();
        int started = 0, relogged = 0;
        if (oidc && ksasl_refresher_poll(refresher, now)) {
            if (ksasl_oidc_login_refresh(oidc, refresher, now) == KSASL_OK)
                printf("[+%6.3fs] new token from the identity provider (generation %llu)\n", (double)(now - t0) / 1000.0,
                       (unsigned long long)ksasl_refresher_generation(refresher));
            else
                fprintf(stderr, "token refresh failed (the current token stays): %s\n", ksasl_oidc_login_last_error(oidc));
        }
        if (login && ksasl_kerberos_login_poll(login, now, &relogged) == KSASL_OK && relogged)
            printf("[+%6.3fs] Kerberos login renewed (ticket until +%.1fs)\n", (double)(now - t0) / 1000.0,
                   (double)(ksasl_kerberos_login_ticket_end_ms(login) - t0) / 1000.0);
        /* The re-authentication deadline is a timer: start it on time, not lazily. */
        if (authenticated && ksasl_client_connection_handle_timeout(conn, now, &started) == KSASL_OK && started) {
            reauthing = 1;
            printf("[+%6.3fs] re-authenticating at the deadline; requests are held until it completes\n", (double)(now - t0) / 1000.0);
        }
        if (authenticated && now >= next_request) {
            int send_now = 0;
            if (ksasl_client_connection_before_request(conn, now, &send_now) != KSASL_OK) break;
            if (send_now) {
                /* Metadata v0, all topics: header v1 (client id "ksasl-c-client") + empty array. */
                uint8_t req[36];
                const char *id = "ksasl-c-client";
                size_t idl = strlen(id), n = 2 + 2 + 4 + 2 + idl + 4;
                put32(req, (int32_t)n);
                req[4] = 0; req[5] = 3; req[6] = 0; req[7] = 0;
                put32(req + 8, corr++);
                req[12] = 0; req[13] = (uint8_t)idl;
                memcpy(req + 14, id, idl);
                put32(req + 14 + idl, 0);
                if (write_all(fd, req, 4 + n) != 0) break;
                sent++;
                next_request = now + 250;
            } else if (ksasl_client_connection_is_reauthenticating(conn) && !reauthing) {
                reauthing = 1;
                printf("[+%6.3fs] re-authenticating; requests are held until it completes\n", (double)(now - t0) / 1000.0);
            }
        }
        const uint8_t *out;
        size_t out_len;
        if (ksasl_client_connection_transmit(conn, &out, &out_len) == KSASL_OK && out_len && write_all(fd, out, out_len) != 0) break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0) continue;
        uint8_t tmp[65536];
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r <= 0) {
            ksasl_client_connection_closed(conn, wall_ms());
            fprintf(stderr, "the broker closed the connection: %s\n", ksasl_client_connection_last_error(conn));
            failed = 1;
            break;
        }
        buf_push(&in, tmp, (size_t)r);
        for (;;) {
            const uint8_t *body;
            size_t len;
            long used = frame_next(&in, &body, &len, 100 * 1024 * 1024);
            if (used <= 0) break;
            ksasl_client_event ev;
            const uint8_t *app;
            size_t app_len;
            ksasl_result res = ksasl_client_connection_handle_frame(conn, body, len, wall_ms(), &ev, &app, &app_len);
            buf_consume(&in, (size_t)used);
            if (res != KSASL_OK) {
                fprintf(stderr, "authentication failed: %s\n", ksasl_client_connection_last_error(conn));
                failed = 1;
                break;
            }
            int64_t lifetime, reauth_at, expiry;
            switch (ev) {
            case KSASL_CLIENT_EVENT_APPLICATION:
                answered++;
                break;
            case KSASL_CLIENT_EVENT_AUTHENTICATED:
            case KSASL_CLIENT_EVENT_REAUTHENTICATED:
                ksasl_client_connection_session(conn, &lifetime, &reauth_at, &expiry);
                if (ev == KSASL_CLIENT_EVENT_REAUTHENTICATED) reauths++;
                reauthing = 0;
                authenticated = 1;
                printf("[+%6.3fs] %s with %s: session lifetime %lld ms, re-authentication at %s%.3fs\n", (double)(wall_ms() - t0) / 1000.0,
                       ev == KSASL_CLIENT_EVENT_AUTHENTICATED ? "authenticated" : "re-authenticated", mech, (long long)lifetime,
                       reauth_at < 0 ? "never " : "+", reauth_at < 0 ? 0.0 : (double)(reauth_at - t0) / 1000.0);
                break;
            default:
                break;
            }
        }
    }
    /* Collect the answers still in flight. */
    int64_t drain_until = wall_ms() + 1000;
    while (!failed && answered < sent && wall_ms() < drain_until) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0) continue;
        uint8_t tmp[65536];
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r <= 0) break;
        buf_push(&in, tmp, (size_t)r);
        const uint8_t *body;
        size_t len;
        long used;
        while ((used = frame_next(&in, &body, &len, 100 * 1024 * 1024)) > 0) {
            ksasl_client_event ev;
            const uint8_t *app;
            size_t app_len;
            if (ksasl_client_connection_handle_frame(conn, body, len, wall_ms(), &ev, &app, &app_len) == KSASL_OK && ev == KSASL_CLIENT_EVENT_APPLICATION)
                answered++;
            buf_consume(&in, (size_t)used);
        }
    }
    printf("%d Metadata requests sent, %d answered, %d re-authentications\n", sent, answered, reauths);
    static const char *const metric_names[] = {"successful-authentication-total", "successful-reauthentication-total",
                                               "failed-reauthentication-total", "reauthentication-latency-avg"};
    printf("metrics");
    for (size_t i = 0; i < sizeof metric_names / sizeof *metric_names; i++) {
        double v = 0;
        if (ksasl_client_config_metric(cfg, metric_names[i], wall_ms(), &v) == KSASL_OK) printf(" %s=%g", metric_names[i], v);
    }
    printf("\n");
    close(fd);
    buf_free(&in);
    ksasl_client_connection_free(conn);
    ksasl_client_config_free(cfg);
    ksasl_mechanism_registry_free(reg);
    uint64_t tokens = refresher ? ksasl_refresher_generation(refresher) : 0;
    if (oidc) printf("%llu tokens from the identity provider\n", (unsigned long long)tokens);
    ksasl_oidc_login_free(oidc);
    ksasl_refresher_free(refresher);
    ksasl_kerberos_login_free(login);
    return (!failed && authenticated && sent > 0 && answered == sent && reauths >= min_reauths) ? 0 : 1;
}
