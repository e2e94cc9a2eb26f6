// An OAUTHBEARER token refresher driven by a fake clock, then a Kafka-framed OAUTHBEARER
// authentication with the refreshed token.
//
// The refresh callback has librdkafka's shape (oauthbearer_token_refresh_cb): it is called
// when a refresh is due, fetches a token (here: an unsecured JWT built by
// ksasl::oauth_token::new_unsecured, valid for 60 s) and answers with set_token. The host's loop
// jumps virtual time to each next_deadline() and calls run_due(). With Kafka's defaults
// (window factor 0.8, jitter 0.05) each refresh happens 80-85 % into the current token's life.
//
// Then a ksasl::client_connection and a ksasl::server_connection (a broker) exchange Kafka frames in
// memory: the bytes one side transmits are split at their 4-byte length prefixes and handed
// to the other side one frame at a time, until both sides report the connection
// authenticated. A ksasl::tracker then watches the connection: at each further refresh it
// asks for a re-authentication (start_reauthentication), which presents the new token.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "ksasl.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t T0 = 1795000000000; // the virtual clock's start (ms since the epoch)
constexpr std::int64_t LIFETIME_S = 60;     // each token's lifetime
constexpr int REFRESHES = 6;

std::string at(std::int64_t now) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "t=+%7.3fs", static_cast<double>(now - T0) / 1000.0);
    return buf;
}

void expect(bool ok, const std::string &what) {
    if (!ok) {
        throw std::runtime_error("unexpected: " + what);
    }
}

// Splits a byte stream into Kafka frames (4-byte big-endian length, then the frame), keeping
// an incomplete tail in `pending` for the next call.
std::vector<std::vector<std::uint8_t>> split_frames(ksasl::bytes_view bytes, std::vector<std::uint8_t> &pending) {
    pending.insert(pending.end(), bytes.begin(), bytes.end());
    std::vector<std::vector<std::uint8_t>> frames;
    std::size_t pos = 0;
    while (pending.size() - pos >= 4) {
        const std::size_t len = (std::size_t{pending[pos]} << 24) | (std::size_t{pending[pos + 1]} << 16) |
                                (std::size_t{pending[pos + 2]} << 8) | std::size_t{pending[pos + 3]};
        if (pending.size() - pos - 4 < len) {
            break;
        }
        const auto begin = pending.begin() + static_cast<std::ptrdiff_t>(pos + 4);
        frames.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(len));
        pos += 4 + len;
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(pos));
    return frames;
}

int be16(const std::vector<std::uint8_t> &f, std::size_t at) { return (f[at] << 8) | f[at + 1]; }

long be32(const std::vector<std::uint8_t> &f, std::size_t at) {
    return static_cast<long>((static_cast<std::uint32_t>(f[at]) << 24) | (static_cast<std::uint32_t>(f[at + 1]) << 16) |
                             (static_cast<std::uint32_t>(f[at + 2]) << 8) | static_cast<std::uint32_t>(f[at + 3]));
}

// A request frame's header (api key, version, correlation id); the body holds the token.
std::string describe_request(const std::vector<std::uint8_t> &f) {
    if (f.size() < 8) {
        return std::to_string(f.size()) + " bytes";
    }
    const int key = be16(f, 0);
    const char *name = key == 18 ? "ApiVersions" : key == 17 ? "SaslHandshake" : key == 36 ? "SaslAuthenticate" : "?";
    return std::string(name) + " v" + std::to_string(be16(f, 2)) + " corr=" + std::to_string(be32(f, 4)) + " (" +
           std::to_string(f.size()) + (key == 36 ? " bytes, token not shown)" : " bytes)");
}

std::string describe_response(const std::vector<std::uint8_t> &f) {
    if (f.size() < 4) {
        return std::to_string(f.size()) + " bytes";
    }
    return "response corr=" + std::to_string(be32(f, 0)) + " (" + std::to_string(f.size()) + " bytes)";
}

const char *action_name(ksasl::server_action a) {
    switch (a) {
    case ksasl::server_action::continue_: return "continue";
    case ksasl::server_action::need_credential: return "need_credential";
    case ksasl::server_action::authenticated: return "authenticated";
    case ksasl::server_action::reauthenticated: return "reauthenticated";
    case ksasl::server_action::reauth_failed: return "reauth_failed";
    case ksasl::server_action::fail_at: return "fail_at";
    case ksasl::server_action::close_now: return "close_now";
    case ksasl::server_action::pending: return "pending";
    }
    return "?";
}

// Moves frames between a client and a broker connection until both report `client_done` /
// `broker_done`. Frames reaching a ready broker go through its per-request gate first.
void pump(ksasl::client_connection &client, ksasl::server_connection &broker, std::int64_t now, ksasl::client_event client_done,
          ksasl::server_action broker_done) {
    std::vector<std::uint8_t> to_broker, to_client;
    bool client_ok = false, broker_ok = false;
    for (int round = 0; round < 16 && !(client_ok && broker_ok); round++) {
        std::vector<std::vector<std::uint8_t>> replies;
        for (const auto &frame : split_frames(client.transmit(), to_broker)) {
            std::printf("  client -> broker  %s\n", describe_request(frame).c_str());
            if (broker.is_ready()) {
                // An authenticated connection: only a SaslHandshake starting a
                // re-authentication is expected here.
                expect(frame.size() >= 2 && broker.gate(static_cast<std::int16_t>(be16(frame, 0)), now) ==
                                                ksasl::gate_verdict::begin_reauth,
                       "the gate passes the re-authentication to the driver");
            }
            const ksasl::server_connection::output o = broker.handle_frame(frame, now);
            if (o.action == broker_done) {
                broker_ok = true;
            } else if (o.action != ksasl::server_action::continue_) {
                throw std::runtime_error(std::string("broker action ") + action_name(o.action) + ": " +
                                         broker.last_error());
            }
            for (auto &r : split_frames(o.out, to_client)) {
                replies.push_back(std::move(r));
            }
        }
        for (const auto &frame : replies) {
            std::printf("  broker -> client  %s\n", describe_response(frame).c_str());
            const ksasl::client_connection::frame_result r = client.handle_frame(frame, now);
            if (r.event == client_done) {
                client_ok = true;
            } else if (r.event != ksasl::client_event::continue_) {
                throw std::runtime_error("unexpected client event: " + client.last_error());
            }
        }
    }
    expect(client_ok && broker_ok, "both sides (re-)authenticated");
    expect(to_broker.empty() && to_client.empty(), "no partial frames left");
}

} // namespace

int main() {
    try {
        std::printf("ksasl %s (C++ wrapper): OAUTHBEARER refresh on a virtual clock\n\n",
                    std::string(ksasl::version()).c_str());

        // Kafka's sasl.login.refresh.* defaults: window factor 0.8, jitter 0.05, min period
        // 60 s, buffer 300 s (a 60 s token is shorter than both: the window rule applies).
        ksasl::refresher refresher(ksasl::refresher_config_builder()
                                       .set_window_factor(0.8)
                                       .set_window_jitter(0.05)
                                       .set_min_period_seconds(60)
                                       .set_buffer_seconds(300)
                                       .build());

        std::vector<std::int64_t> set_at;  // when each token was installed
        std::vector<std::int64_t> expiry;  // and when it expires
        // librdkafka's oauthbearer_token_refresh_cb: get a token, then set_token (or
        // set_token_failure; throwing here would report a failure too).
        const auto fetch = [&](ksasl::refresher_ref r, std::int64_t now) {
            const ksasl::oauth_token t = ksasl::oauth_token::new_unsecured("alice", LIFETIME_S, "kafka", now);
            r.set_token(t.value(), t.expiry_ms(), "alice", {{"logicalCluster", "lkc-demo"}}, now);
            set_at.push_back(now);
            expiry.push_back(t.expiry_ms());
        };
        refresher.set_refresh_callback(fetch);

        std::int64_t now = T0;
        for (int i = 0; i < REFRESHES; i++) {
            const std::optional<std::int64_t> deadline = refresher.next_deadline();
            expect(deadline.has_value(), "a refresh is scheduled");
            if (*deadline > now) {
                // Nothing runs before the deadline.
                expect(!refresher.run_due(*deadline - 1), "no refresh before the deadline");
            }
            now = std::max(now, *deadline);
            expect(refresher.run_due(now), "the callback ran at the deadline");
            expect(set_at.size() == static_cast<std::size_t>(i) + 1 && set_at.back() == now, "a token was installed");
            expect(refresher.generation() == static_cast<std::uint64_t>(i) + 1, "the generation advanced");
            if (i == 0) {
                std::printf("%s  refresh 1: first token (generation 1), expires at %s\n", at(now).c_str(),
                            at(expiry.back()).c_str());
                continue;
            }
            const std::int64_t into = now - set_at[static_cast<std::size_t>(i) - 1];
            const double pct = 100.0 * static_cast<double>(into) / static_cast<double>(LIFETIME_S * 1000);
            std::printf("%s  refresh %d: %5.2f %% into the previous token's %lld s life (generation %llu)\n",
                        at(now).c_str(), i + 1, pct, static_cast<long long>(LIFETIME_S),
                        static_cast<unsigned long long>(refresher.generation()));
            // 80-85 % of 60 s, to the millisecond.
            expect(into >= 48000 && into <= 51000, "the refresh happened 80-85 % into the token's life");
        }

        // An OAUTHBEARER client presenting the refresher's current token, and a broker with
        // Kafka's unsecured validator requiring the "kafka" scope.
        std::printf("\n%s  OAUTHBEARER over Kafka frames with the generation-%llu token\n", at(now).c_str(),
                    static_cast<unsigned long long>(refresher.generation()));
        ksasl::mechanism_registry client_side;
        client_side.add_oauthbearer_client(refresher);
        ksasl::mechanism_registry broker_side;
        broker_side.add_oauthbearer_unsecured_server("kafka", 0);

        const ksasl::client_config ccfg =
            ksasl::client_config_builder(client_side, "OAUTHBEARER").set_client_id("ksasl-cpp-refresher").build();
        const ksasl::server_config scfg = ksasl::server_config_builder(broker_side)
                                              .set_max_reauth_ms(3600 * 1000) // KIP-368: sessions end with the token
                                              .build();

        ksasl::client_connection client(ccfg);
        ksasl::server_connection broker(scfg);
        client.start(now);

        pump(client, broker, now, ksasl::client_event::authenticated, ksasl::server_action::authenticated);
        std::uint64_t presented = refresher.generation();

        const ksasl::server_connection::session_info ss = broker.session();
        const ksasl::client_connection::session_info cs = client.session();
        std::printf("  => broker: %s authenticated, session lifetime %.3f s, expires at %s\n", ss.principal.c_str(),
                    static_cast<double>(ss.lifetime_ms) / 1000.0, ss.expiry_ms ? at(*ss.expiry_ms).c_str() : "never");
        std::printf("  => client: re-authenticates at %s, session expires at %s\n",
                    cs.reauth_at_ms ? at(*cs.reauth_at_ms).c_str() : "never",
                    cs.expiry_ms ? at(*cs.expiry_ms).c_str() : "never");
        expect(ss.principal == "User:alice" && ss.mechanism == "OAUTHBEARER", "the principal is User:alice");
        // The session ends with the token the client presented: the latest one.
        expect(ss.expiry_ms && *ss.expiry_ms == expiry.back(), "the session ends when the refreshed token expires");
        expect(broker.is_ready(), "the broker connection is ready for requests");
        expect(broker.gate(3, now) == ksasl::gate_verdict::process, "a Metadata request passes the gate");

        // The tracker: at each refresh, connections still on an older token re-authenticate
        // (spread over 0 ms: at once). The host's loop jumps to the earliest deadline of the
        // refresher, the tracker and the connection's own KIP-368 timer.
        std::printf("\n%s  a tracker re-authenticates the connection after each refresh\n", at(now).c_str());
        ksasl::tracker tracker(refresher, 0);
        tracker.authenticated(1, presented, cs.lifetime_ms, cs.reauth_at_ms, cs.expiry_ms);
        int reauthentications = 0;
        for (int step = 0; step < 64 && reauthentications < 2; step++) {
            std::optional<std::int64_t> next;
            for (const std::optional<std::int64_t> d :
                 {refresher.next_deadline(), tracker.next_deadline(), client.next_deadline()}) {
                if (d && (!next || *d < *next)) {
                    next = d;
                }
            }
            expect(next.has_value(), "something is scheduled");
            now = std::max(now, *next);
            if (refresher.run_due(now)) {
                std::printf("%s  refresh (callback): generation %llu\n", at(now).c_str(),
                            static_cast<unsigned long long>(refresher.generation()));
            }
            const ksasl::tracker::poll_result p = tracker.poll(now);
            if (p.refresh) {
                // The tracker claimed the refresh (it wants a fresh token before a
                // re-authentication): the host fetches it itself.
                fetch(refresher.ref(), now);
                std::printf("%s  refresh (asked by the tracker): generation %llu\n", at(now).c_str(),
                            static_cast<unsigned long long>(refresher.generation()));
            }
            bool started = false;
            for (const std::uint64_t id : p.ids.to_vector()) {
                expect(id == 1, "the tracker names our connection");
                started = client.start_reauthentication(now) || started;
                std::printf("%s  tracker: connection %llu is on an old token: re-authenticate (%s)\n",
                            at(now).c_str(), static_cast<unsigned long long>(id), started ? "started" : "deferred");
            }
            if (!started && client.handle_timeout(now)) {
                started = true;
                std::printf("%s  the connection's own re-authentication timer fired\n", at(now).c_str());
            }
            if (!started) {
                continue;
            }
            presented = refresher.generation();
            pump(client, broker, now, ksasl::client_event::reauthenticated, ksasl::server_action::reauthenticated);
            const ksasl::client_connection::session_info c2 = client.session();
            const ksasl::server_connection::session_info s2 = broker.session();
            std::printf("  => re-authenticated with generation %llu; session expires at %s\n",
                        static_cast<unsigned long long>(presented), s2.expiry_ms ? at(*s2.expiry_ms).c_str() : "never");
            expect(s2.expiry_ms && *s2.expiry_ms == expiry.back(), "the new session ends with the newest token");
            tracker.authenticated(1, presented, c2.lifetime_ms, c2.reauth_at_ms, c2.expiry_ms);
            reauthentications++;
        }
        expect(reauthentications == 2, "two re-authentications with refreshed tokens");

        std::printf("\nok\n");
        return 0;
    } catch (const ksasl::error &e) {
        std::fprintf(stderr, "unexpected ksasl error %s (%u): %s\n", e.name(), static_cast<unsigned>(e.code()),
                     e.message());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
    }
    return 1;
}
