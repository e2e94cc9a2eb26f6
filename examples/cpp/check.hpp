// What the C++ examples share as programs that double as tests: an [ok]/[FAILED] line per
// expectation, the ksasl::error a call throws, and a main() body that reports unexpected
// exceptions and turns the failures into the exit status.

#ifndef KSASL_EXAMPLES_CHECK_HPP
#define KSASL_EXAMPLES_CHECK_HPP

#include "ksasl.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace check {

inline int failures = 0;

inline void expect(bool ok, const std::string &what) {
    std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what.c_str());
    if (!ok) {
        failures++;
    }
}

inline bool contains(std::string_view hay, std::string_view needle) {
    return hay.find(needle) != std::string_view::npos;
}

// Runs f; returns the ksasl::error it threw (printed), or nothing.
template <typename F>
std::optional<ksasl::error> error_of(F &&f) {
    try {
        f();
    } catch (const ksasl::error &e) {
        std::printf("    -> %s\n", e.what());
        return e;
    }
    std::printf("    -> no exception\n");
    return std::nullopt;
}

inline std::size_t occurrences(std::string_view hay, std::string_view needle) {
    std::size_t n = 0;
    for (std::size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1)) {
        n++;
    }
    return n;
}

// The error has `code` and `text`, and names its code once ("NAME: message").
inline bool is_error(const std::optional<ksasl::error> &e, std::uint32_t code, std::string_view text = {}) {
    return e && e->code() == code && contains(e->what(), text) && occurrences(e->what(), e->name()) == 1 &&
           !contains(e->message(), e->name());
}

// The whole of an example's main(): 0 when every expectation held, 1 when one failed or an
// exception escaped.
template <typename F>
int run(const char *title, F &&body) {
    try {
        std::printf("ksasl %s (C++ wrapper): %s\n\n", std::string(ksasl::version()).c_str(), title);
        body();
    } catch (const ksasl::error &e) {
        std::fprintf(stderr, "unexpected ksasl error %s (%u): %s\n", e.name(), static_cast<unsigned>(e.code()),
                     e.message());
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "unexpected exception: %s\n", e.what());
        return 1;
    }
    std::printf("\n%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}

// ---- an in-memory login, for the examples that build clients and listeners ----

// Splits a byte stream into Kafka frames (4-byte big-endian length, then the frame), keeping
// an incomplete tail in `pending`.
inline std::vector<std::vector<std::uint8_t>> split_frames(ksasl::bytes_view bytes, std::vector<std::uint8_t> &pending) {
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

struct login_result {
    std::string principal;      // "" when authentication did not complete
    std::int64_t lifetime_ms = -1; // the session lifetime the client was told
};

// Authenticates a connection of `config` against one of the listener's in memory.
inline login_result authenticate(const ksasl::client_config &config, const ksasl::server_config &listener,
                          std::int64_t now) {
    ksasl::client_connection client(config);
    ksasl::server_connection broker(listener);
    client.start(now);
    std::vector<std::uint8_t> to_broker, to_client;
    bool client_ok = false, broker_ok = false;
    for (int round = 0; round < 16 && !(client_ok && broker_ok); round++) {
        for (const auto &frame : split_frames(client.transmit(), to_broker)) {
            const ksasl::server_connection::output o = broker.handle_frame(frame, now);
            broker_ok |= o.action == ksasl::server_action::authenticated;
            if (o.action != ksasl::server_action::continue_ && o.action != ksasl::server_action::authenticated) {
                std::printf("    broker: %s\n", broker.last_error().c_str());
                return {};
            }
            for (const auto &reply : split_frames(o.out, to_client)) {
                client_ok |= client.handle_frame(reply, now).event == ksasl::client_event::authenticated;
            }
        }
    }
    if (!client_ok || !broker_ok) {
        return {};
    }
    return {broker.session().principal, client.session().lifetime_ms};
}

} // namespace check

#endif
