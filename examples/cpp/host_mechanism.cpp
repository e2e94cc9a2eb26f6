// A SASL mechanism written in C++ on both sides, plugged into ksasl next to the built-in ones.
//
// X-HMAC-CHALLENGE is a small challenge-response mechanism: the client sends its user name,
// the server answers with an 8-byte challenge (the current time), the client proves that it
// knows its key with HMAC-SHA256(key, challenge), and the server ends with an empty message
// and authenticates the user. Each key has an expiry, which the server reports with
// set_authenticated() and which then bounds the KIP-368 session.
//
// The mechanism's classes derive from ksasl::host_client_mechanism and
// ksasl::host_server_mechanism; factories made of std::function create one object per
// exchange. A ksasl::client_connection and a ksasl::server_connection (a broker that also offers PLAIN and
// SCRAM) exchange Kafka frames in memory. The checks:
//   - authentication and re-authentication, the session ending at the key's expiry
//     (connections.max.reauth.ms 0: lifetime = expiry - now), the built-ins still working;
//   - a principal change on re-authentication refused with Kafka's text;
//   - exceptions thrown by mechanisms and factories becoming HOST_MECHANISM_FAILED (with the
//     exception's text on the side that threw), and setter misuse reported by the library;
//   - a deferred variant whose calls say "later" (set_pending) and are finished by the host,
//     which hands the answer to resume() in a ksasl::host_answer;
//   - every mechanism object and every factory freed once nothing uses them.
//
// SHA-256 and HMAC-SHA256 are implemented below (FIPS 180-4, RFC 2104) so that the example
// depends on nothing but ksasl; they are checked against published test vectors first.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::int64_t T0 = 1800000000000;
constexpr const char *NAME = "X-HMAC-CHALLENGE";
constexpr std::int16_t API_METADATA = 3;
constexpr const char *KAFKA_GENERIC_FAILURE =
    "Authentication failed during authentication due to invalid credentials with SASL mechanism X-HMAC-CHALLENGE";

using check::contains;
using check::error_of;
using check::expect;
using check::is_error;

/* ---- SHA-256 and HMAC-SHA256 ---------------------------------------------------------- */

using digest = std::array<std::uint8_t, 32>;

class sha256 {
public:
    sha256 &update(ksasl::bytes_view data) {
        for (std::uint8_t b : data) {
            block_[fill_++] = b;
            if (fill_ == block_.size()) {
                compress();
                fill_ = 0;
            }
        }
        bits_ += 8 * static_cast<std::uint64_t>(data.size());
        return *this;
    }

    digest finish() {
        const std::uint64_t bits = bits_;
        const std::uint8_t marker = 0x80, zero = 0;
        update(ksasl::bytes_view(&marker, 1));
        while (fill_ != 56) {
            update(ksasl::bytes_view(&zero, 1));
        }
        std::array<std::uint8_t, 8> length{};
        for (std::size_t i = 0; i < 8; i++) {
            length[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
        }
        update(ksasl::bytes_view(length.data(), length.size()));
        digest out{};
        for (std::size_t i = 0; i < 8; i++) {
            for (std::size_t j = 0; j < 4; j++) {
                out[4 * i + j] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * j));
            }
        }
        return out;
    }

private:
    static std::uint32_t rotr(std::uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

    void compress() {
        static constexpr std::array<std::uint32_t, 64> k = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
            0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
            0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
            0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
            0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
            0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
            0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
        std::array<std::uint32_t, 64> w{};
        for (std::size_t i = 0; i < 16; i++) {
            w[i] = (std::uint32_t{block_[4 * i]} << 24) | (std::uint32_t{block_[4 * i + 1]} << 16) |
                   (std::uint32_t{block_[4 * i + 2]} << 8) | std::uint32_t{block_[4 * i + 3]};
        }
        for (std::size_t i = 16; i < 64; i++) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::array<std::uint32_t, 8> v = state_; // a b c d e f g h
        for (std::size_t i = 0; i < 64; i++) {
            const std::uint32_t e = v[4];
            const std::uint32_t a = v[0];
            const std::uint32_t t1 =
                v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) + k[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
            std::move_backward(v.begin(), v.end() - 1, v.end()); // h = g, ..., b = a
            v[4] += t1;
            v[0] = t1 + t2;
        }
        for (std::size_t i = 0; i < 8; i++) {
            state_[i] += v[i];
        }
    }

    std::array<std::uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                           0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<std::uint8_t, 64> block_{};
    std::size_t fill_ = 0;
    std::uint64_t bits_ = 0;
};

digest hmac_sha256(std::string_view key, ksasl::bytes_view data) {
    std::array<std::uint8_t, 64> k{};
    if (key.size() > k.size()) {
        const digest d = sha256().update(key).finish();
        std::copy(d.begin(), d.end(), k.begin());
    } else {
        std::transform(key.begin(), key.end(), k.begin(), [](char c) { return static_cast<std::uint8_t>(c); });
    }
    std::array<std::uint8_t, 64> ipad{}, opad{};
    for (std::size_t i = 0; i < k.size(); i++) {
        ipad[i] = static_cast<std::uint8_t>(k[i] ^ 0x36);
        opad[i] = static_cast<std::uint8_t>(k[i] ^ 0x5c);
    }
    const digest inner = sha256().update(ksasl::bytes_view(ipad.data(), ipad.size())).update(data).finish();
    return sha256()
        .update(ksasl::bytes_view(opad.data(), opad.size()))
        .update(ksasl::bytes_view(inner.data(), inner.size()))
        .finish();
}

std::string hex(const digest &d) {
    std::string s;
    char b[3];
    for (std::uint8_t x : d) {
        std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(x));
        s += b;
    }
    return s;
}

void hash_vectors() {
    std::printf("SHA-256 and HMAC-SHA256 test vectors\n");
    expect(hex(sha256().update(std::string_view("abc")).finish()) ==
               "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
           "SHA-256(\"abc\") (FIPS 180-4)");
    expect(hex(sha256().update(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).finish()) ==
               "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
           "SHA-256 of a two-block message (FIPS 180-4)");
    expect(hex(hmac_sha256("Jefe", std::string_view("what do ya want for nothing?"))) ==
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
           "HMAC-SHA256 (RFC 4231 test case 2)");
}

/* ---- the mechanism --------------------------------------------------------------------- */

// Who the client logs in as; shared with the test, which changes it between authentications.
struct credentials {
    std::string user;
    std::string key;
};

// The server's keys and their expiries.
struct key_entry {
    const char *user;
    const char *key;
    std::int64_t expiry_ms;
};
constexpr key_entry KEYS[] = {{"alice", "alice-key", T0 + 5000}, {"mallory", "mallory-key", T0 + 60000}};

// Counts the mechanism objects of one registration: made, alive, and calls.
struct census {
    int made = 0;
    int alive = 0;
    int calls = 0;
};

// Keeps a census of its objects.
class counted {
protected:
    explicit counted(std::shared_ptr<census> c) : census_(std::move(c)) {
        census_->made++;
        census_->alive++;
    }
    ~counted() { census_->alive--; }
    counted(const counted &) = delete;
    counted &operator=(const counted &) = delete;

    std::shared_ptr<census> census_;
};

class hmac_client final : public ksasl::host_client_mechanism, counted {
public:
    hmac_client(const credentials &who, std::shared_ptr<census> c) : counted(std::move(c)), who_(who) {}

    void start(std::int64_t, ksasl::host_output &out) override {
        census_->calls++;
        out.set_message(who_.user);
    }

    void step(ksasl::bytes_view challenge, std::int64_t, ksasl::host_output &out) override {
        census_->calls++;
        if (answered_) {
            // The server's last (empty) message: the client side is complete.
            if (!challenge.empty()) {
                throw std::runtime_error("unexpected data after the server's last message");
            }
            out.set_done();
            return;
        }
        if (challenge.size() != 8) {
            throw std::runtime_error("the challenge is not 8 bytes long");
        }
        answered_ = true;
        const digest mac = hmac_sha256(who_.key, challenge);
        out.set_message(ksasl::bytes_view(mac.data(), mac.size()));
    }

private:
    credentials who_; // taken when the exchange starts
    bool answered_ = false;
};

class hmac_server final : public ksasl::host_server_mechanism, counted {
public:
    explicit hmac_server(std::shared_ptr<census> c) : counted(std::move(c)) {}

    void step(ksasl::bytes_view response, std::int64_t now_ms, ksasl::host_output &out) override {
        census_->calls++;
        if (user_.empty()) {
            if (response.empty() || response.size() > 64) {
                out.set_error("bad user name"); // failing without an exception
                return;
            }
            user_ = response.to_string();
            for (std::size_t i = 0; i < challenge_.size(); i++) {
                challenge_[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(now_ms) >> (56 - 8 * i));
            }
            out.set_message(ksasl::bytes_view(challenge_.data(), challenge_.size()));
            return;
        }
        const auto k = std::find_if(std::begin(KEYS), std::end(KEYS), [&](const key_entry &e) { return user_ == e.user; });
        if (k == std::end(KEYS)) {
            out.set_error(KSASL_UNKNOWN_USER, "unknown user"); // one of the library's codes
            return;
        }
        const digest want = hmac_sha256(k->key, ksasl::bytes_view(challenge_.data(), challenge_.size()));
        if (response.size() != want.size() || !std::equal(want.begin(), want.end(), response.begin())) {
            throw std::runtime_error("wrong HMAC"); // failing with an exception
        }
        out.set_message(ksasl::bytes_view()); // an empty last message
        out.set_authenticated(user_, k->expiry_ms);
    }

private:
    std::string user_;
    std::array<std::uint8_t, 8> challenge_{};
};

/* ---- the same mechanism, answering later ------------------------------------------------ */

// A call of a deferred mechanism, to be finished by the host: the real mechanism's call,
// answering into whatever output the host gives it.
struct deferred_call {
    std::function<void(ksasl::host_output &)> run;
};

// Wraps a mechanism: every call is recorded and answered later (set_pending with the call).
class deferred_client final : public ksasl::host_client_mechanism {
public:
    explicit deferred_client(std::unique_ptr<ksasl::host_client_mechanism> real) : real_(std::move(real)) {}

    void start(std::int64_t now_ms, ksasl::host_output &out) override {
        call_.run = [this, now_ms](ksasl::host_output &o) { real_->start(now_ms, o); };
        out.set_pending(&call_);
    }

    void step(ksasl::bytes_view challenge, std::int64_t now_ms, ksasl::host_output &out) override {
        call_.run = [this, copy = challenge.to_vector(), now_ms](ksasl::host_output &o) { real_->step(copy, now_ms, o); };
        out.set_pending(&call_);
    }

private:
    std::unique_ptr<ksasl::host_client_mechanism> real_;
    deferred_call call_;
};

class deferred_server final : public ksasl::host_server_mechanism {
public:
    explicit deferred_server(std::unique_ptr<ksasl::host_server_mechanism> real) : real_(std::move(real)) {}

    void step(ksasl::bytes_view response, std::int64_t now_ms, ksasl::host_output &out) override {
        call_.run = [this, copy = response.to_vector(), now_ms](ksasl::host_output &o) { real_->step(copy, now_ms, o); };
        out.set_pending(&call_);
    }

private:
    std::unique_ptr<ksasl::host_server_mechanism> real_;
    deferred_call call_;
};

// The host finishes a deferred call into `answer`. The same rule as for calls made by the
// library applies: an exception fails the step with its text; a misuse of a setter is already
// recorded in the answer by the library.
void finish(deferred_call &call, ksasl::host_answer &answer) {
    try {
        call.run(answer);
    } catch (const ksasl::host_output_error &e) {
        if (e.output() != answer.get()) {
            answer.set_error(e.what());
        }
    } catch (const std::exception &e) {
        answer.set_error(e.what());
    }
}

/* ---- registries and configurations ------------------------------------------------------ */

ksasl::host_client_factory client_factory(std::shared_ptr<const credentials> who, std::shared_ptr<census> c,
                                          bool deferred) {
    return [who, c, deferred]() -> std::unique_ptr<ksasl::host_client_mechanism> {
        auto real = std::make_unique<hmac_client>(*who, c);
        if (!deferred) {
            return real;
        }
        return std::make_unique<deferred_client>(std::move(real));
    };
}

ksasl::host_server_factory server_factory(std::shared_ptr<census> c, bool deferred) {
    return [c, deferred]() -> std::unique_ptr<ksasl::host_server_mechanism> {
        auto real = std::make_unique<hmac_server>(c);
        if (!deferred) {
            return real;
        }
        return std::make_unique<deferred_server>(std::move(real));
    };
}

// A listener with PLAIN and SCRAM (bob, from a store) and `mechanism`. The registry goes away
// at once: the configuration keeps what it needs.
ksasl::server_config listener(ksasl::host_server_factory mechanism, std::int64_t max_reauth_ms) {
    ksasl::credential_store users;
    users.add_user("bob", "bob-secret");
    ksasl::mechanism_registry reg;
    reg.add_password_servers(users);
    reg.add_server_mechanism(NAME, std::move(mechanism));
    if (reg.mechanism_count(true) != 4) {
        throw std::runtime_error("the listener does not offer 4 mechanisms");
    }
    return ksasl::server_config_builder(reg)
        .set_max_reauth_ms(max_reauth_ms)
        .set_failed_authentication_delay_ms(0)
        .build();
}

ksasl::client_config hmac_client_config(ksasl::host_client_factory mechanism) {
    ksasl::mechanism_registry reg;
    reg.add_client_mechanism(NAME, std::move(mechanism));
    return ksasl::client_config_builder(reg, NAME).build();
}

/* ---- the Kafka drivers wired in memory -------------------------------------------------- */

// Takes the complete frames (4-byte big-endian length, then the frame) off a byte stream.
std::vector<std::vector<std::uint8_t>> take_frames(std::vector<std::uint8_t> &stream) {
    std::vector<std::vector<std::uint8_t>> frames;
    std::size_t pos = 0;
    while (stream.size() - pos >= 4) {
        const std::size_t len = (std::size_t{stream[pos]} << 24) | (std::size_t{stream[pos + 1]} << 16) |
                                (std::size_t{stream[pos + 2]} << 8) | std::size_t{stream[pos + 3]};
        if (stream.size() - pos - 4 < len) {
            break;
        }
        const auto begin = stream.begin() + static_cast<std::ptrdiff_t>(pos + 4);
        frames.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(len));
        pos += 4 + len;
    }
    stream.erase(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(pos));
    return frames;
}

// A client connection and a broker connection, with what happened between them. Deferred
// calls handed out in one round are finished (or failed by `late_server`) at the next.
struct wire {
    ksasl::client_connection client;
    ksasl::server_connection server;
    ksasl::host_answer client_answer = ksasl::host_answer::for_client();
    ksasl::host_answer server_answer = ksasl::host_answer::for_server();
    std::vector<std::uint8_t> to_server, to_client;

    int authenticated = 0, reauthenticated = 0;
    int server_authenticated = 0, server_reauthenticated = 0;
    int client_pending = 0, server_pending = 0;
    std::optional<ksasl::error> client_error; // the client connection's fatal failure
    std::optional<ksasl::server_action> server_failure;
    std::string server_error;
    ksasl::server_connection::reason_info server_reason; // why the broker failed it
    bool closed = false;

    deferred_call *client_work = nullptr;
    deferred_call *server_work = nullptr;
    std::function<void(deferred_call &, ksasl::host_answer &)> late_server = finish;

    wire(const ksasl::client_config &cc, const ksasl::server_config &sc) : client(cc), server(sc) {}

    void start(std::int64_t now) {
        try {
            client.start(now);
        } catch (const ksasl::error &e) {
            client_failed(e);
        }
    }

    void pump(std::int64_t now) {
        for (int round = 0; round < 64; round++) {
            if (closed) {
                return;
            }
            bool moved = false;
            if (server_work != nullptr) {
                late_server(*std::exchange(server_work, nullptr), server_answer);
                on_server(server.resume(server_answer, now), now);
                moved = true;
            }
            if (!closed && client_work != nullptr) {
                finish(*std::exchange(client_work, nullptr), client_answer);
                try {
                    on_client(client.resume(client_answer, now));
                } catch (const ksasl::error &e) {
                    client_failed(e);
                }
                moved = true;
            }
            if (closed) {
                return;
            }
            const ksasl::bytes_view out = client.transmit();
            if (!out.empty()) {
                to_server.insert(to_server.end(), out.begin(), out.end());
                moved = true;
            }
            for (const auto &frame : take_frames(to_server)) {
                moved = true;
                if (closed) {
                    break;
                }
                if (server.is_ready()) {
                    // Authenticated: only a SaslHandshake starting a re-authentication comes here.
                    const auto api_key = static_cast<std::int16_t>((frame.at(0) << 8) | frame.at(1));
                    if (server.gate(api_key, now) != ksasl::gate_verdict::begin_reauth) {
                        throw std::logic_error("unexpected request on an authenticated connection");
                    }
                }
                on_server(server.handle_frame(frame, now), now);
            }
            moved = moved || !to_client.empty();
            deliver(now);
            if (!moved) {
                return;
            }
        }
        throw std::logic_error("the connections did not settle");
    }

private:
    void client_failed(const ksasl::error &e) {
        client_error = e;
        closed = true;
    }

    void on_client(const ksasl::client_connection::frame_result &r) {
        if (r.event == ksasl::client_event::authenticated) {
            authenticated++;
        } else if (r.event == ksasl::client_event::reauthenticated) {
            reauthenticated++;
        } else if (r.event == ksasl::client_event::pending) {
            client_work = static_cast<deferred_call *>(client.pending_work());
            client_pending++;
        } else if (r.event != ksasl::client_event::continue_) {
            throw std::logic_error("unexpected client event");
        }
    }

    void on_server(const ksasl::server_connection::output &o, std::int64_t now) {
        to_client.insert(to_client.end(), o.out.begin(), o.out.end());
        switch (o.action) {
        case ksasl::server_action::continue_:
            break;
        case ksasl::server_action::pending:
            server_work = static_cast<deferred_call *>(server.pending_work());
            server_pending++;
            break;
        case ksasl::server_action::authenticated:
            server_authenticated++;
            break;
        case ksasl::server_action::reauthenticated:
            server_reauthenticated++;
            break;
        case ksasl::server_action::fail_at:
        case ksasl::server_action::close_now:
            // The failure response (if any) goes out, then the broker closes the connection.
            server_failure = o.action;
            server_error = server.last_error();
            server_reason = server.reason();
            deliver(now);
            if (!closed) {
                try {
                    client.closed(now);
                } catch (const ksasl::error &e) {
                    client_error = e;
                }
            }
            closed = true;
            break;
        case ksasl::server_action::need_credential:
        case ksasl::server_action::reauth_failed:
            throw std::logic_error("unexpected server action");
        }
    }

    void deliver(std::int64_t now) {
        for (const auto &frame : take_frames(to_client)) {
            if (closed) {
                break;
            }
            try {
                on_client(client.handle_frame(frame, now));
            } catch (const ksasl::error &e) {
                client_failed(e);
            }
        }
    }
};

/* ---- the checks -------------------------------------------------------------------------- */

void authenticates_and_reauthenticates(bool deferred) {
    std::printf("%s mechanism: authentication and re-authentication\n", deferred ? "deferred" : "direct");
    auto who = std::make_shared<credentials>(credentials{"alice", "alice-key"});
    auto cc_census = std::make_shared<census>();
    auto sc_census = std::make_shared<census>();
    const std::weak_ptr<census> watch_client = cc_census, watch_server = sc_census;
    {
        const ksasl::server_config sc = listener(server_factory(sc_census, deferred), 0);
        const ksasl::client_config cc = hmac_client_config(client_factory(who, cc_census, deferred));
        {
            wire w(cc, sc);
            w.start(T0);
            w.pump(T0);
            expect(w.authenticated == 1 && w.server_authenticated == 1 && !w.client_error, "alice authenticates");
            if (deferred) {
                std::printf("    answered later: %d client calls, %d server calls\n", w.client_pending, w.server_pending);
                expect(w.client_pending == 3 && w.server_pending == 2, "every call was answered later through resume()");
                expect(w.client.pending_work() == nullptr && w.server.pending_work() == nullptr,
                       "nothing is pending once resumed");
            }
            const ksasl::server_connection::session_info s = w.server.session();
            std::printf("    broker: %s, lifetime %lld ms, expiry T0+%lld ms\n", s.principal.c_str(),
                        static_cast<long long>(s.lifetime_ms), static_cast<long long>(s.expiry_ms.value_or(-1) - T0));
            expect(s.principal == "User:alice", "the principal is the mechanism's authorization id");
            expect(s.mechanism == NAME && !s.token_authenticated, "the session names the host mechanism");
            expect(s.lifetime_ms == 5000 && s.expiry_ms == T0 + 5000,
                   "with connections.max.reauth.ms 0 the key's expiry alone bounds the session");
            const ksasl::client_connection::session_info cs = w.client.session();
            const std::int64_t due = w.client.next_deadline().value_or(-1);
            expect(cs.lifetime_ms == 5000 && cs.expiry_ms == T0 + 5000, "the client sees the same session");
            expect(cs.reauth_at_ms == due && due >= T0 + 4250 && due <= T0 + 4750,
                   "the client re-authenticates 85-95 % into the session");

            expect(w.client.handle_timeout(due), "the re-authentication starts when due");
            w.pump(due);
            expect(w.reauthenticated == 1 && w.server_reauthenticated == 1, "alice re-authenticates");
            const ksasl::server_connection::session_info r = w.server.session();
            std::printf("    re-authenticated at T0+%lld ms: lifetime %lld ms\n", static_cast<long long>(due - T0),
                        static_cast<long long>(r.lifetime_ms));
            expect(r.expiry_ms == T0 + 5000 && r.lifetime_ms == T0 + 5000 - due,
                   "the new session ends at the same expiry (lifetime = expiry - now)");
            expect(w.server.gate(API_METADATA, T0 + 5000) == ksasl::gate_verdict::process &&
                       w.server.gate(API_METADATA, T0 + 5001) == ksasl::gate_verdict::close_expired,
                   "requests after the expiry close the connection");
            if (deferred) {
                expect(w.client_pending == 6 && w.server_pending == 4, "the re-authentication was answered later too");
            }
            expect(cc_census->made == 2 && sc_census->made == 2, "one mechanism object per side and authentication");
        }
        {
            // The built-in mechanisms of the same listener.
            ksasl::mechanism_registry bob;
            bob.add_password_clients("bob", "bob-secret");
            const ksasl::client_config bc = ksasl::client_config_builder(bob, "SCRAM-SHA-512").build();
            wire w(bc, sc);
            w.start(T0);
            w.pump(T0);
            expect(w.authenticated == 1 && w.server.session().principal == "User:bob" &&
                       w.server.session().mechanism == "SCRAM-SHA-512",
                   "SCRAM-SHA-512 still works on the same listener");
        }
        expect(cc_census->alive == 0 && sc_census->alive == 0, "every mechanism object was destroyed with its exchange");
        cc_census.reset();
        sc_census.reset();
        expect(!watch_client.expired() && !watch_server.expired(), "the configurations keep the factories");
    }
    expect(watch_client.expired() && watch_server.expired(), "the factories were freed with the configurations");
}

void principal_change_is_refused(bool deferred) {
    std::printf("%s mechanism: a principal change on re-authentication\n", deferred ? "deferred" : "direct");
    auto who = std::make_shared<credentials>(credentials{"alice", "alice-key"});
    auto c = std::make_shared<census>();
    const ksasl::server_config sc = listener(server_factory(c, deferred), 3000);
    const ksasl::client_config cc = hmac_client_config(client_factory(who, c, deferred));
    wire w(cc, sc);
    w.start(T0);
    w.pump(T0);
    expect(w.authenticated == 1, "alice authenticates");
    expect(w.server.session().lifetime_ms == 3000, "connections.max.reauth.ms (3 s) is shorter than the key's 5 s");
    *who = credentials{"mallory", "mallory-key"};
    const std::int64_t due = w.client.next_deadline().value_or(-1);
    expect(w.client.handle_timeout(due), "the re-authentication starts");
    w.pump(due);
    expect(w.reauthenticated == 0 && w.server_reauthenticated == 0, "mallory does not take over the connection");
    if (w.client_error) {
        std::printf("    client: %s\n", w.client_error->what());
    }
    expect(w.client_error &&
               contains(w.client_error->what(),
                        "Cannot change principals during re-authentication from User.alice: User.mallory"),
           "the client is refused with Kafka's text");
    expect(contains(w.server_error, "Cannot change principals"), "the broker says why too");
    expect(!w.server.is_ready(), "the broker connection is closing");
}

// A client mechanism whose start() throws.
class throwing_client final : public ksasl::host_client_mechanism {
public:
    void start(std::int64_t, ksasl::host_output &) override { throw std::runtime_error("token service unreachable"); }
    void step(ksasl::bytes_view, std::int64_t, ksasl::host_output &) override {}
};

// A server mechanism whose step() throws `what` (a std::runtime_error), or an int.
class throwing_server final : public ksasl::host_server_mechanism {
public:
    explicit throwing_server(bool standard) : standard_(standard) {}
    void step(ksasl::bytes_view, std::int64_t, ksasl::host_output &) override {
        if (standard_) {
            throw std::runtime_error("the key directory is unreachable");
        }
        throw 42;
    }

private:
    bool standard_;
};

// A client mechanism that sets its first message twice; records what the setter threw.
class twice_client final : public ksasl::host_client_mechanism {
public:
    explicit twice_client(std::shared_ptr<std::uint32_t> seen) : seen_(std::move(seen)) {}
    void start(std::int64_t, ksasl::host_output &out) override {
        out.set_message(std::string_view("alice"));
        try {
            out.set_message(std::string_view("alice"));
        } catch (const ksasl::host_output_error &e) {
            *seen_ = e.code();
            throw;
        }
    }
    void step(ksasl::bytes_view, std::int64_t, ksasl::host_output &) override {}

private:
    std::shared_ptr<std::uint32_t> seen_;
};

// A server mechanism that authenticates an empty authorization id.
class nobody_server final : public ksasl::host_server_mechanism {
public:
    void step(ksasl::bytes_view, std::int64_t, ksasl::host_output &out) override { out.set_authenticated(""); }
};

void exceptions_and_misuse() {
    std::printf("exceptions and misuse become HOST_MECHANISM_FAILED\n");
    auto who = std::make_shared<credentials>(credentials{"alice", "alice-key"});
    auto c = std::make_shared<census>();
    const ksasl::server_config hmac_listener = listener(server_factory(c, false), 0);

    // A client mechanism that throws: the client connection fails with the exception's text.
    {
        const ksasl::client_config cc =
            hmac_client_config([] { return std::make_unique<throwing_client>(); });
        wire w(cc, hmac_listener);
        w.start(T0);
        w.pump(T0);
        if (w.client_error) {
            std::printf("    client connection: %s\n", w.client_error->what());
        }
        expect(is_error(w.client_error, KSASL_HOST_MECHANISM_FAILED,
                        "the X-HMAC-CHALLENGE mechanism's start failed: token service unreachable"),
               "a throwing client mechanism fails the connection with what()");
        expect(w.server_authenticated == 0, "nobody is authenticated");

        ksasl::mechanism_registry reg;
        reg.add_client_mechanism(NAME, [] { return std::make_unique<throwing_client>(); });
        ksasl::client_exchange client(reg, NAME);
        const auto e = error_of([&] { client.start(T0); });
        expect(e && std::string(e->what()) ==
                        "HOST_MECHANISM_FAILED: the X-HMAC-CHALLENGE mechanism's start failed: token service "
                        "unreachable",
               "the same through ksasl::client_exchange");
        expect(is_error(error_of([&] { client.start(T0); }), KSASL_STEP_AFTER_FAILURE),
               "the exchange stays failed");
    }

    // A server mechanism that throws: the broker fails the connection (Kafka's delayed
    // response); the exception's text stays on the broker.
    {
        const ksasl::server_config sc = listener([] { return std::make_unique<throwing_server>(true); }, 0);
        const ksasl::client_config cc = hmac_client_config(client_factory(who, c, false));
        wire w(cc, sc);
        w.start(T0);
        w.pump(T0);
        std::printf("    broker: %s\n", w.server_error.c_str());
        expect(w.server_failure == ksasl::server_action::fail_at &&
                   contains(w.server_error, "HOST_MECHANISM_FAILED") &&
                   contains(w.server_error, "step failed: the key directory is unreachable"),
               "a throwing server mechanism fails the exchange with what() on the broker");
        expect(is_error(w.client_error, KSASL_SERVER_REJECTED_AUTHENTICATION, KAFKA_GENERIC_FAILURE) &&
                   !contains(w.client_error->what(), "key directory"),
               "the client only gets Kafka's generic sentence");
        std::printf("    reason: %s: %s; told the client \"%s\"\n", ksasl::result_name(w.server_reason.code),
                    w.server_reason.message.c_str(), w.server_reason.client_text.c_str());
        expect(w.server_reason.code == KSASL_HOST_MECHANISM_FAILED &&
                   contains(w.server_reason.message, "the key directory is unreachable") &&
                   !contains(w.server_reason.message, "HOST_MECHANISM_FAILED") &&
                   contains(w.server_reason.client_text, KAFKA_GENERIC_FAILURE),
               "the broker's reason: the code, the detail, and the text the client was sent");
    }

    // Through ksasl::server_exchange: an exception that is not a std::exception; the mechanism's own
    // verdicts (set_error, a std::runtime_error); an empty authorization id.
    {
        ksasl::mechanism_registry reg;
        reg.add_server_mechanism("X-INT", [] { return std::make_unique<throwing_server>(false); });
        reg.add_server_mechanism("X-NOBODY", [] { return std::make_unique<nobody_server>(); });
        reg.add_server_mechanism(NAME, server_factory(c, false));
        ksasl::server_exchange thrower(reg, "X-INT");
        expect(is_error(error_of([&] { thrower.step(std::string_view("x"), T0); }), KSASL_HOST_MECHANISM_FAILED,
                        "not a std::exception"),
               "any exception is caught at the C boundary");
        expect(thrower.client_message() ==
                   "Authentication failed during authentication due to invalid credentials with SASL mechanism X-INT",
               "the client message is Kafka's generic sentence");

        ksasl::server_exchange eve(reg, NAME);
        expect(eve.step(std::string_view("eve"), T0).status == ksasl::server_step_kind::challenge, "eve is challenged");
        expect(is_error(error_of([&] { eve.step(std::string_view("x"), T0); }), KSASL_UNKNOWN_USER,
                        "UNKNOWN_USER: the X-HMAC-CHALLENGE mechanism's step failed: unknown user"),
               "an unknown user: set_error(KSASL_UNKNOWN_USER, ...) without an exception keeps the code");
        ksasl::server_exchange alice(reg, NAME);
        alice.step(std::string_view("alice"), T0);
        expect(is_error(error_of([&] { alice.step(std::string(32, 'x'), T0); }), KSASL_HOST_MECHANISM_FAILED,
                        "step failed: wrong HMAC"),
               "a wrong HMAC (an exception)");
        ksasl::server_exchange nobody(reg, "X-NOBODY");
        expect(is_error(error_of([&] { nobody.step(std::string_view("x"), T0); }), KSASL_HOST_MECHANISM_FAILED,
                        "authenticated an empty authorization id"),
               "a wrong answer is described by the library");
    }

    // A setter the library refuses: host_output_error inside the mechanism, the library's
    // description in the step's error.
    {
        auto seen = std::make_shared<std::uint32_t>(0);
        ksasl::mechanism_registry reg;
        reg.add_client_mechanism(NAME, [seen] { return std::make_unique<twice_client>(seen); });
        ksasl::client_exchange client(reg, NAME);
        expect(is_error(error_of([&] { client.start(T0); }), KSASL_HOST_MECHANISM_FAILED,
                        "the X-HMAC-CHALLENGE mechanism's start set the message twice"),
               "a second message is refused with the library's reason");
        expect(*seen == KSASL_HOST_MECHANISM_FAILED, "the setter threw ksasl::host_output_error (HOST_MECHANISM_FAILED)");
    }

    // Factories that throw or return nothing: no exchange.
    {
        auto alive = std::make_shared<int>(0);
        const std::weak_ptr<int> watch = alive;
        ksasl::mechanism_registry reg;
        reg.add_client_mechanism(NAME, [alive]() -> std::unique_ptr<ksasl::host_client_mechanism> {
            throw std::runtime_error("out of exchanges");
        });
        reg.add_server_mechanism(NAME, []() -> std::unique_ptr<ksasl::host_server_mechanism> { return nullptr; });
        alive.reset();
        expect(is_error(error_of([&] { ksasl::client_exchange client(reg, NAME); }), KSASL_HOST_MECHANISM_FAILED,
                        "new_exchange failed: it returned NULL"),
               "a throwing factory fails the exchange (constructor)");
        expect(is_error(error_of([&] { ksasl::server_exchange server(reg, NAME); }), KSASL_HOST_MECHANISM_FAILED,
                        "new_exchange failed: it returned NULL"),
               "a factory returning nullptr fails it too");
        // Replacing the mechanism releases the old factory.
        reg.add_client_mechanism(NAME, client_factory(who, c, false));
        expect(watch.expired(), "a replaced factory is freed");
    }

    // Registration errors: the factory is freed at once.
    {
        auto alive = std::make_shared<int>(0);
        const std::weak_ptr<int> watch = alive;
        ksasl::mechanism_registry reg;
        expect(is_error(error_of([&] {
                            reg.add_client_mechanism("x-hmac", [alive] { return std::make_unique<throwing_client>(); });
                        }),
                        KSASL_INVALID_ARGUMENT),
               "a lower-case name is refused");
        alive.reset();
        expect(watch.expired(), "the refused factory was freed");
        expect(is_error(error_of([&] { reg.add_server_mechanism(NAME, nullptr); }), KSASL_NULL_ARGUMENT),
               "an empty factory is refused");
        expect(reg.mechanism_count(false) == 0 && reg.mechanism_count(true) == 0, "nothing was registered");
    }
    expect(c->alive == 0, "every mechanism object was destroyed");
}

void deferred_exchanges() {
    std::printf("deferred mechanism through ksasl::client_exchange and ksasl::server_exchange\n");
    const credentials alice{"alice", "alice-key"};
    auto c = std::make_shared<census>();
    ksasl::mechanism_registry creg, sreg;
    creg.add_client_mechanism(NAME, client_factory(std::make_shared<credentials>(alice), c, true));
    sreg.add_server_mechanism(NAME, server_factory(c, true));
    ksasl::host_answer ca = ksasl::host_answer::for_client();
    ksasl::host_answer sa = ksasl::host_answer::for_server();
    {
        ksasl::client_exchange client(creg, NAME);
        ksasl::server_exchange server(sreg, NAME);
        expect(client.pending_work() == nullptr && server.pending_work() == nullptr, "nothing pending yet");
        expect(is_error(error_of([&] { client.resume(ca); }), KSASL_WRONG_STATE), "nothing to resume");

        ksasl::client_exchange::step_result cr = client.start(T0);
        expect(cr.pending && !cr.done && cr.out.empty(), "start: the answer comes later");
        auto *work = static_cast<deferred_call *>(client.pending_work());
        expect(work != nullptr, "pending_work() is the pointer given to set_pending()");
        expect(is_error(error_of([&] { client.step(std::string_view("x"), T0); }), KSASL_WRONG_STATE),
               "a step while the answer is awaited is refused");
        expect(is_error(error_of([&] { client.resume(sa); }), KSASL_INVALID_ARGUMENT, "server mechanism"),
               "a server's answer is refused");
        expect(client.pending_work() == work, "still pending");
        finish(*work, ca);
        cr = client.resume(ca);
        expect(!cr.pending && cr.out.as_string_view() == "alice", "resume: the first message");

        ksasl::server_exchange::step_result sr = server.step(cr.out, T0);
        expect(sr.status == ksasl::server_step_kind::pending && sr.out.empty(), "server step: later");
        finish(*static_cast<deferred_call *>(server.pending_work()), sa);
        sr = server.resume(sa, T0);
        expect(sr.status == ksasl::server_step_kind::challenge && sr.out.size() == 8, "resume: the challenge");

        cr = client.step(sr.out, T0);
        expect(cr.pending, "client step: later");
        finish(*static_cast<deferred_call *>(client.pending_work()), ca);
        cr = client.resume(ca);
        expect(cr.out.size() == 32, "resume: the HMAC");

        sr = server.step(cr.out, T0);
        finish(*static_cast<deferred_call *>(server.pending_work()), sa);
        sr = server.resume(sa, T0);
        expect(sr.status == ksasl::server_step_kind::done, "resume: authenticated");
        const ksasl::server_exchange::outcome_info o = server.outcome();
        expect(o.principal == "User:alice" && o.mechanism == NAME && o.credential_expiry_ms == T0 + 5000,
               "the outcome: User:alice until the key's expiry");
        cr = client.step(sr.out, T0);
        finish(*static_cast<deferred_call *>(client.pending_work()), ca);
        cr = client.resume(ca);
        expect(cr.done && !cr.pending, "the client side completes");
        expect(is_error(error_of([&] { server.resume(sa, T0); }), KSASL_WRONG_STATE), "nothing left to resume");
    }
    {
        // A late failure: the host's error text on the server's side only.
        ksasl::server_exchange server(sreg, NAME);
        expect(server.step(std::string_view("alice"), T0).status == ksasl::server_step_kind::pending, "later again");
        sa.set_error("directory timeout");
        const auto e = error_of([&] { server.resume(sa, T0); });
        expect(e && std::string(e->what()) ==
                        "HOST_MECHANISM_FAILED: the X-HMAC-CHALLENGE mechanism's late answer failed: directory timeout",
               "a late answer with set_error() fails the exchange");
        expect(server.client_message() == KAFKA_GENERIC_FAILURE, "the client is told Kafka's generic sentence");
    }
    {
        // The deferred work throws: finish() turns it into the answer's error.
        ksasl::client_exchange client(creg, NAME);
        client.start(T0);
        deferred_call failing{[](ksasl::host_output &) { throw std::runtime_error("the signer crashed"); }};
        finish(failing, ca);
        expect(is_error(error_of([&] { client.resume(ca); }), KSASL_HOST_MECHANISM_FAILED,
                        "late answer failed: the signer crashed"),
               "an exception in the late work fails the client exchange with its text");
    }
    expect(c->alive == 0 && c->made == 4, "every deferred exchange was disposed of");

    std::printf("deferred mechanism: a late failure through the drivers\n");
    const ksasl::server_config sc = listener(server_factory(c, true), 0);
    const ksasl::client_config cc = hmac_client_config(client_factory(std::make_shared<credentials>(alice), c, true));
    wire w(cc, sc);
    w.late_server = [](deferred_call &, ksasl::host_answer &answer) { answer.set_error("directory timeout"); };
    w.start(T0);
    w.pump(T0);
    std::printf("    broker: %s\n", w.server_error.c_str());
    expect(w.server_failure == ksasl::server_action::fail_at &&
               contains(w.server_error, "late answer failed: directory timeout"),
           "the broker fails the exchange with the host's text");
    expect(is_error(w.client_error, KSASL_SERVER_REJECTED_AUTHENTICATION, KAFKA_GENERIC_FAILURE),
           "the client is refused as for any failed exchange");
    expect(w.client.pending_work() == nullptr &&
               is_error(error_of([&] { w.client.resume(w.client_answer, T0); }), KSASL_WRONG_STATE),
           "failed, not stuck: nothing is pending");
}

} // namespace

int main() {
    return check::run("a host mechanism written in C++", [] {
        hash_vectors();
        authenticates_and_reauthenticates(false);
        principal_change_is_refused(false);
        exceptions_and_misuse();
        authenticates_and_reauthenticates(true);
        principal_change_is_refused(true);
        deferred_exchanges();
    });
}
