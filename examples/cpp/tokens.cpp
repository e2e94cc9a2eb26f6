// Delegation tokens (KIP-48) through the C++ wrapper.
//
// A broker-side ksasl::token_authority creates, renews, expires, describes and sweeps tokens
// by Kafka's rules; its errors are ksasl::error codes (DELEGATION_TOKEN_NOT_FOUND, ...). A
// token then logs in with SCRAM and `tokenauth=true`: through Kafka-framed connections wired
// in memory (the session capped by the token's expiry), through single exchanges, and with
// the token kept in a ksasl::refresher that wants it renewed before it expires. Finally the
// client side of Kafka's token APIs (ksasl::delegation_token_codec) talks to the authority, directly and
// as application requests over authenticated connections, where a connection that logged in
// with a token may not ask for tokens (Kafka error 64).
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::int64_t T0 = 1800000000000;
// Kafka's defaults: delegation.token.expiry.time.ms (1 day) and .expiry.check.interval.ms (1 h).
constexpr std::int64_t KAFKA_EXPIRY_TIME_MS = 24 * 3600 * 1000;
constexpr std::int64_t KAFKA_EXPIRY_CHECK_INTERVAL_MS = 3600 * 1000;

// Section 7.2 of Kafka's delegation token design: HMAC-SHA512 of this id under "secret".
constexpr const char *REF_ID = "AAECAwQFBgcICQoLDA0ODw";
constexpr const char *REF_HMAC_B64 =
    "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==";

using check::contains;
using check::error_of;
using check::expect;
using check::is_error;

bool same_bytes(ksasl::bytes_view a, ksasl::bytes_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// A frame without its 4-byte length prefix.
ksasl::bytes_view body(ksasl::bytes_view frame) {
    if (frame.size() < 4) {
        throw std::runtime_error("a frame shorter than its length prefix");
    }
    return ksasl::bytes_view(frame.data() + 4, frame.size() - 4);
}

std::int32_t be32(ksasl::bytes_view b, std::size_t at) {
    return static_cast<std::int32_t>((std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
                                     (std::uint32_t{b[at + 2]} << 8) | std::uint32_t{b[at + 3]});
}

std::int16_t be16(ksasl::bytes_view b, std::size_t at) {
    return static_cast<std::int16_t>((b[at] << 8) | b[at + 1]);
}

/* ---- a client connection and a broker connection, wired in memory ---------------------- */

std::vector<std::vector<std::uint8_t>> take_frames(std::vector<std::uint8_t> &stream) {
    std::vector<std::vector<std::uint8_t>> frames;
    std::size_t pos = 0;
    while (stream.size() - pos >= 4) {
        const std::size_t len = static_cast<std::size_t>(be32(stream, pos));
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

struct link {
    ksasl::client_connection client;
    ksasl::server_connection server;
    bool client_authenticated = false;
    bool server_authenticated = false;
    std::optional<ksasl::error> client_error;

    link(const ksasl::client_config &cc, const ksasl::server_config &sc) : client(cc), server(sc) {}

    // Authenticates (or fails); the broker answers credential requests with nothing (the
    // store and the authority answer everything in this example).
    link &authenticate(std::int64_t now) {
        std::vector<std::uint8_t> to_server, to_client;
        try {
            client.start(now);
            for (int round = 0; round < 32 && !client_authenticated; round++) {
                const ksasl::bytes_view out = client.transmit();
                to_server.insert(to_server.end(), out.begin(), out.end());
                bool closed = false;
                for (const auto &frame : take_frames(to_server)) {
                    const ksasl::server_connection::output o = server.handle_frame(frame, now);
                    to_client.insert(to_client.end(), o.out.begin(), o.out.end());
                    if (o.action == ksasl::server_action::authenticated) {
                        server_authenticated = true;
                    } else if (o.action == ksasl::server_action::fail_at ||
                               o.action == ksasl::server_action::close_now) {
                        closed = true;
                    } else if (o.action != ksasl::server_action::continue_) {
                        throw std::logic_error("unexpected broker action");
                    }
                }
                for (const auto &frame : take_frames(to_client)) {
                    if (client.handle_frame(frame, now).event == ksasl::client_event::authenticated) {
                        client_authenticated = true;
                    }
                }
                if (closed) {
                    client.closed(now); // throws what the client reports
                }
            }
        } catch (const ksasl::error &e) {
            client_error = e;
        }
        return *this;
    }

    // One token API request (with its length prefix) over the authenticated connection, as a
    // broker serves it: the gate lets it through, the authority answers as the connection's
    // principal, the client receives the answer as an application frame (returned, copied).
    std::vector<std::uint8_t> request(ksasl::token_authority &authority, ksasl::bytes_view req, std::int64_t now) {
        if (!client.before_request(now)) {
            throw std::logic_error("the client holds the request");
        }
        const ksasl::bytes_view frame = body(req);
        if (server.gate(be16(frame, 0), now) != ksasl::gate_verdict::process) {
            throw std::logic_error("the gate refuses the request");
        }
        const ksasl::bytes_view resp = authority.handle_request(frame, server, now);
        const ksasl::client_connection::frame_result r = client.handle_frame(body(resp), now);
        if (r.event != ksasl::client_event::application) {
            throw std::logic_error("the response is not an application frame");
        }
        return r.app_frame.to_vector();
    }
};

// Runs a ksasl::client_exchange against a ksasl::server_exchange; returns the server's outcome or throws.
ksasl::server_exchange::outcome_info exchange(const ksasl::mechanism_registry &clients, const ksasl::mechanism_registry &servers,
                                     std::string_view mechanism, std::int64_t now) {
    ksasl::client_exchange c(clients, mechanism);
    ksasl::server_exchange s(servers, mechanism);
    ksasl::client_exchange::step_result cr = c.start(now);
    for (int round = 0; round < 8; round++) {
        ksasl::server_exchange::step_result sr;
        try {
            sr = s.step(cr.out, now);
        } catch (const ksasl::error &) {
            c.server_failed(s.client_message());
        }
        cr = c.step(sr.out, now);
        if (sr.status == ksasl::server_step_kind::done) {
            return s.outcome();
        }
    }
    throw std::logic_error("the exchange did not finish");
}

/* ---- the checks -------------------------------------------------------------------------- */

void reference_vector() {
    std::printf("the reference HMAC\n");
    ksasl::token_authority a("secret");
    const std::vector<std::uint8_t> h = a.hmac(REF_ID).to_vector();
    expect(h.size() == 64, "token HMACs are HMAC-SHA512 (64 bytes)");
    const ksasl::delegation_token t(REF_ID, "User:alice", std::nullopt, h, T0, T0 + 1, T0 + 2);
    expect(t.hmac_base64() == REF_HMAC_B64, "the SCRAM password of the reference token is Kafka's");
    expect(t.id() == REF_ID && t.owner() == "User:alice" && t.requester() == "User:alice" && t.renewers().empty(),
           "id, owner and requester (the owner when not given)");
    expect(t.issue_ms() == T0 && t.expiry_ms() == T0 + 1 && t.max_ms() == T0 + 2 && same_bytes(t.hmac(), h),
           "timestamps and HMAC as given");
    expect(is_error(error_of([] { ksasl::token_authority empty(""); }), KSASL_INVALID_CONFIG,
                    "delegation.token.secret.key"),
           "an empty secret key is refused (constructor error)");
}

void authority_rules() {
    std::printf("the authority's rules\n");
    ksasl::token_authority a("k", 100000, 10000); // max lifetime 100 s, expiry time 10 s
    const ksasl::delegation_token t = a.create("User:alice", std::nullopt, {"User:bob"}, std::nullopt, T0);
    std::printf("    token %s of %s, expires at T0+%lld ms, at most T0+%lld ms\n", t.id().c_str(), t.owner().c_str(),
                static_cast<long long>(t.expiry_ms() - T0), static_cast<long long>(t.max_ms() - T0));
    expect(t.id().size() == 22 && t.hmac().size() == 64 && t.hmac_base64().size() == 88, "a new token's id and HMAC");
    expect(t.renewers() == std::vector<std::string>{"User:bob"} && t.issue_ms() == T0 && t.expiry_ms() == T0 + 10000 &&
               t.max_ms() == T0 + 100000,
           "renewers and timestamps");
    expect(same_bytes(a.hmac(t.id()), t.hmac()), "the HMAC is the authority's HMAC of the id");

    expect(a.renew(t, "User:bob", std::nullopt, T0 + 1) == T0 + 10001, "a renewer renews for the expiry time");
    expect(a.renew(t.hmac(), "User:alice", 5000, T0 + 3) == T0 + 5003, "the owner renews for a shorter period");
    expect(a.renew(t, "bob", std::nullopt, T0 + 5) == T0 + 10005, "a bare name is a user");
    const auto mismatch = error_of([&] { a.renew(t, "User:carol", std::nullopt, T0 + 5); });
    expect(is_error(mismatch, KSASL_DELEGATION_TOKEN_OWNER_MISMATCH, "User:carol") &&
               std::string(mismatch->kind()) == "credential",
           "anyone else: DELEGATION_TOKEN_OWNER_MISMATCH");
    const std::vector<std::uint8_t> zeros(64, 0);
    expect(is_error(error_of([&] { a.renew(zeros, "User:alice", std::nullopt, T0 + 5); }),
                    KSASL_DELEGATION_TOKEN_NOT_FOUND),
           "an unknown HMAC: DELEGATION_TOKEN_NOT_FOUND");
    expect(is_error(error_of([&] { a.create("Group:ops", T0); }), KSASL_INVALID_PRINCIPAL_TYPE),
           "only users own tokens: INVALID_PRINCIPAL_TYPE");
    expect(is_error(error_of([&] { a.create("User:", T0); }), KSASL_INVALID_ARGUMENT, "TYPE:NAME"),
           "a malformed principal");

    const ksasl::delegation_token other = a.create("alice", "admin", {"carol"}, 5000, T0);
    expect(other.owner() == "User:alice" && other.requester() == "User:admin" &&
               other.renewers() == std::vector<std::string>{"User:carol"},
           "created on someone's behalf, with bare names");
    expect(other.expiry_ms() == T0 + 5000 && other.max_ms() == T0 + 5000, "a shorter lifetime caps both timestamps");
    expect(a.expire(other, "User:alice", 1000, T0 + 100) == T0 + 1100, "expire with a period");
    expect(a.expire(other, "User:carol", -1, T0 + 300) == T0 + 300, "a renewer expires it now");
    expect(is_error(error_of([&] { a.expire(other, "User:alice", -1, T0 + 301); }), KSASL_DELEGATION_TOKEN_NOT_FOUND),
           "an expired token is gone");
    expect(is_error(error_of([&] { a.renew(t, "User:alice", std::nullopt, T0 + 50000); }),
                    KSASL_DELEGATION_TOKEN_EXPIRED, t.id()),
           "past its expiry a token cannot be renewed: DELEGATION_TOKEN_EXPIRED");
}

void describe_sweep_records() {
    std::printf("describe, sweep, shared handles and records\n");
    ksasl::token_authority a("k", 100000, 10000);
    ksasl::token_authority shared = a.share();
    const ksasl::delegation_token t1 = a.create("User:alice", std::nullopt, {}, 10, T0);
    const ksasl::delegation_token t2 = a.create("User:bob", T0);
    const ksasl::delegation_token t3 = shared.create("User:carol", "User:bob", {"User:alice"}, std::nullopt, T0);

    const ksasl::delegation_token_list all = a.describe();
    std::vector<std::string> ids;
    for (const ksasl::delegation_token_ref d : all) {
        ids.push_back(d.id());
        expect(same_bytes(d.hmac(), shared.hmac(d.id())), "described with its HMAC: " + d.owner());
    }
    expect(all.size() == 3 && std::is_sorted(ids.begin(), ids.end()), "every token, in id order, from either handle");
    expect(!all[3] && is_error(error_of([&] { all.at(3); }), KSASL_INVALID_ARGUMENT), "out of range");
    const ksasl::delegation_token_list bobs = shared.describe({"User:bob"});
    expect(bobs.size() == 1 && bobs[0].id() == t2.id(), "the tokens of one owner");
    expect(a.describe(std::vector<std::string>{}).empty(), "an empty owner list describes nothing");

    expect(a.next_sweep_ms() == 0, "the first sweep is due at once");
    expect(a.sweep(T0 + 10).empty() && a.next_sweep_ms() == T0 + 10 + KAFKA_EXPIRY_CHECK_INTERVAL_MS,
           "nothing expired yet; the next sweep an hour later");
    expect(a.sweep(T0 + 11) == std::vector<std::string>{t1.id()}, "the expired token is swept");
    expect(shared.describe().size() == 2, "the other handle sees it gone");

    // Records: no secret inside; another authority with the same key recomputes the HMACs.
    const std::string json = a.export_records();
    expect(contains(json, t3.id()) && !contains(json, t3.hmac_base64()), "exported records hold no secret");
    ksasl::token_authority b("k", 100000, 10000);
    expect(b.import_records(json) == 2, "imported on another authority");
    const ksasl::delegation_token_list carols = b.describe({"User:carol"});
    expect(carols.size() == 1 && carols[0].hmac_base64() == t3.hmac_base64() && carols[0].requester() == "User:bob" &&
               carols[0].renewers() == std::vector<std::string>{"User:alice"},
           "the same token, HMAC recomputed from the key");
    expect(b.renew(carols[0], "User:alice", std::nullopt, T0 + 8) == T0 + 10008, "and usable: its renewer renews it");
    expect(is_error(error_of([&] { b.import_records("[{}]"); }), KSASL_INVALID_CREDENTIAL_FORMAT,
                    "delegation token record"),
           "a malformed record is refused");
}

void logins() {
    std::printf("logins with a token (SCRAM, tokenauth)\n");
    ksasl::token_authority a("k", std::nullopt, 10000); // Kafka's maximum lifetime, expiry time 10 s
    ksasl::credential_store users;
    users.add_user("alice", "alice-secret");
    ksasl::mechanism_registry broker;
    broker.add_password_servers(users);
    broker.set_token_authority(a);
    const ksasl::server_config sc = ksasl::server_config_builder(broker).build();
    const ksasl::delegation_token t = a.create("User:alice", T0);

    ksasl::mechanism_registry with_token;
    with_token.add_token_clients(t.id(), t.hmac_base64());
    for (const char *mech : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
        const ksasl::client_config cc = ksasl::client_config_builder(with_token, mech).build();
        link l(cc, sc);
        l.authenticate(T0 + 1000);
        const ksasl::server_connection::session_info s = l.server.session();
        std::printf("    %s: %s, session of %lld ms\n", mech, s.principal.c_str(), static_cast<long long>(s.lifetime_ms));
        expect(l.client_authenticated && l.server_authenticated && s.principal == "User:alice",
               std::string("the token logs in as its owner over ") + mech);
        expect(s.lifetime_ms == 9000 && s.expiry_ms == T0 + 10000 && s.token_authenticated && s.mechanism == mech,
               "the session ends with the token; the broker knows it is a token login");
    }
    const ksasl::server_exchange::outcome_info o = exchange(with_token, broker, "SCRAM-SHA-512", T0);
    expect(o.principal == "User:alice" && o.token_authenticated && o.credential_expiry_ms == T0 + 10000,
           "the same through ksasl::client_exchange and ksasl::server_exchange");
    expect(o.session_lifetime_ms == 10000 && o.session_expiry_ms == T0 + 10000,
           "a single exchange reports the KIP-368 session the token allows");
    {
        ksasl::mechanism_registry alice;
        alice.add_password_clients("alice", "alice-secret");
        const ksasl::client_config cc = ksasl::client_config_builder(alice, "SCRAM-SHA-256").build();
        link l(cc, sc);
        l.authenticate(T0);
        expect(l.client_authenticated && !l.server.session().token_authenticated && !l.server.session().expiry_ms,
               "users still log in from the store on the same listener");
    }

    std::printf("a token kept in a refresher\n");
    ksasl::refresher r;
    r.set_delegation_token(t, T0);
    expect(r.generation() == 1, "the token is the refresher's credential");
    ksasl::mechanism_registry refreshing;
    refreshing.add_refreshing_password_clients(r);
    {
        const ksasl::client_config cc = ksasl::client_config_builder(refreshing, "SCRAM-SHA-512").build();
        link l(cc, sc);
        l.authenticate(T0);
        expect(l.client_authenticated && l.server.session().lifetime_ms == 10000, "logs in, session capped by the token");
    }
    const std::int64_t due = r.next_deadline().value_or(-1);
    std::printf("    a renewal is due at T0+%lld ms\n", static_cast<long long>(due - T0));
    expect(due > T0 && due < T0 + 10000 && r.poll(due), "the refresher wants the token renewed before it expires");
    const std::int64_t renewed_until = a.renew(t, "User:alice", std::nullopt, due);
    const ksasl::delegation_token renewed = t.renewed(renewed_until);
    expect(renewed.id() == t.id() && renewed.expiry_ms() == due + 10000 && t.expiry_ms() == T0 + 10000,
           "renewed(): the same token with the new expiry");
    r.set_delegation_token(renewed, due);
    expect(r.generation() == 2, "the renewed token is the next generation");
    {
        const ksasl::client_config cc = ksasl::client_config_builder(refreshing, "SCRAM-SHA-256").build();
        link l(cc, sc);
        l.authenticate(due);
        expect(l.client_authenticated && l.server.session().expiry_ms == due + 10000, "the next session lasts longer");
    }
    expect(is_error(error_of([&] { r.set_delegation_token(t, T0 + 10001); }), KSASL_INVALID_CREDENTIAL_EXPIRY),
           "an expired token is refused by the refresher");

    std::printf("an expired token\n");
    expect(a.expire(renewed, "User:alice", -1, due + 1) == due + 1, "the owner expires the token now");
    {
        const ksasl::client_config cc = ksasl::client_config_builder(with_token, "SCRAM-SHA-256").build();
        link l(cc, sc);
        l.authenticate(due + 2);
        expect(!l.server_authenticated && is_error(l.client_error, KSASL_SERVER_REJECTED_AUTHENTICATION),
               "it no longer logs in");
    }
}

// Serves a request frame (with its length prefix) directly; returns the response without its
// length prefix (copied), after checking the correlation id.
std::vector<std::uint8_t> serve(ksasl::token_authority &a, ksasl::bytes_view req, std::string_view principal,
                                bool token_authenticated, std::int64_t now) {
    const ksasl::bytes_view resp = a.handle_request(body(req), principal, token_authenticated, now);
    if (be32(resp, 0) != static_cast<std::int32_t>(resp.size() - 4) || be32(resp, 4) != be32(req, 8)) {
        throw std::logic_error("a response that does not match its request");
    }
    return body(resp).to_vector();
}

void codec() {
    std::printf("the token APIs: ksasl::delegation_token_codec and the authority\n");
    ksasl::token_authority a("k");
    ksasl::delegation_token_codec c;
    expect(c.kafka_error() == 0 && c.last_error().empty(), "a new codec");

    ksasl::bytes_view req = c.create_request(3, 5, "c-test", std::nullopt, {"User:bob"}, std::nullopt);
    expect(be32(req, 0) == static_cast<std::int32_t>(req.size() - 4) && be16(req, 4) == 38,
           "a CreateDelegationToken request frame, length prefix included");
    const ksasl::delegation_token t = c.parse_create_response(3, serve(a, req, "User:alice", false, T0));
    expect(t.owner() == "User:alice" && t.expiry_ms() == T0 + KAFKA_EXPIRY_TIME_MS &&
               same_bytes(t.hmac(), a.hmac(t.id())),
           "the token from the response is the authority's");

    req = c.renew_request(2, 6, std::nullopt, t.hmac(), 1000);
    expect(c.parse_expiry_response(2, serve(a, req, "User:bob", false, T0)) == T0 + 1000, "renewed by its renewer");
    req = c.renew_request(1, 7, std::nullopt, t.hmac(), std::nullopt);
    const std::vector<std::uint8_t> refused = serve(a, req, "User:carol", false, T0);
    expect(is_error(error_of([&] { c.parse_expiry_response(1, refused); }), KSASL_DELEGATION_TOKEN_OWNER_MISMATCH) &&
               c.kafka_error() == 63,
           "renewed by someone else: Kafka error 63");

    req = c.describe_request(3, 8, "c-test", {"User:alice"});
    const ksasl::delegation_token_list mine = c.parse_describe_response(3, serve(a, req, "User:alice", false, T0));
    expect(mine.size() == 1 && mine[0].id() == t.id() && mine[0].renewers() == std::vector<std::string>{"User:bob"},
           "described with its renewers");
    req = c.describe_request(0, 9, std::nullopt);
    expect(c.parse_describe_response(0, serve(a, req, "User:zed", false, T0)).size() == 1, "every token (v0)");

    req = c.create_request(1, 10, std::nullopt, std::nullopt, {}, std::nullopt);
    const std::vector<std::uint8_t> not_allowed = serve(a, req, "User:alice", true, T0);
    expect(is_error(error_of([&] { c.parse_create_response(1, not_allowed); }),
                    KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "64") &&
               c.kafka_error() == 64,
           "a token-authenticated caller may not ask: Kafka error 64");

    req = c.expire_request(1, 11, std::nullopt, t.hmac(), -1);
    const std::vector<std::uint8_t> expire_req = req.to_vector();
    expect(c.parse_expiry_response(1, serve(a, expire_req, "User:alice", false, T0 + 5)) == T0 + 5, "expired now");
    const std::vector<std::uint8_t> gone = serve(a, expire_req, "User:alice", false, T0 + 6);
    expect(is_error(error_of([&] { c.parse_expiry_response(1, gone); }), KSASL_DELEGATION_TOKEN_NOT_FOUND) &&
               c.kafka_error() == 62,
           "expired again: Kafka error 62");

    expect(is_error(error_of([&] { c.create_request(4, 1, std::nullopt, std::nullopt, {}, std::nullopt); }),
                    KSASL_UNSUPPORTED_VERSION),
           "an unsupported version");
    const std::vector<std::uint8_t> garbage = {0, 0, 0, 3, 1, 2, 3};
    expect(error_of([&] { a.handle_request(body(garbage), "User:alice", false, T0); }).has_value(),
           "a request the authority cannot parse throws (close the connection)");
}

// Whether a listener's ApiVersions (v0) response lists `api_key`.
bool advertises(const ksasl::server_config &sc, std::int16_t api_key) {
    static const std::vector<std::uint8_t> api_versions_v0 = {0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff};
    ksasl::server_connection conn(sc);
    const ksasl::bytes_view out = conn.handle_frame(api_versions_v0, T0).out; // [len][corr][error][n][entries]
    const std::int32_t n = out.size() >= 14 ? be32(out, 10) : 0;
    for (std::int32_t i = 0; i < n && 14 + 6 * static_cast<std::size_t>(i + 1) <= out.size(); i++) {
        if (be16(out, 14 + 6 * static_cast<std::size_t>(i)) == api_key) {
            return true;
        }
    }
    return false;
}

void over_connections() {
    std::printf("the token APIs over authenticated connections\n");
    ksasl::token_authority a("k", 100000, 10000);
    ksasl::credential_store users;
    users.add_user("alice", "alice-secret");
    ksasl::mechanism_registry broker;
    broker.add_password_servers(users);
    broker.set_token_authority(a);
    ksasl::server_config_builder listener(broker);
    const ksasl::server_config plain = listener.build();
    listener.add_token_api_versions(true); // what a Kafka 4 broker advertises
    const ksasl::server_config sc = listener.build();
    expect(advertises(sc, 38) && advertises(sc, 41), "add_token_api_versions lists the token APIs in ApiVersions");
    expect(!advertises(plain, 38), "a listener without them does not (a built configuration never changes)");
    ksasl::delegation_token_codec c;

    ksasl::mechanism_registry alice;
    alice.add_password_clients("alice", "alice-secret");
    const ksasl::client_config uc = ksasl::client_config_builder(alice, "SCRAM-SHA-256").build();
    link user(uc, sc);
    user.authenticate(T0);
    expect(user.client_authenticated && !user.server.session().token_authenticated, "alice logs in with her password");
    const std::vector<std::uint8_t> created =
        user.request(a, c.create_request(3, 100, "c-test", std::nullopt, {"User:bob"}, std::nullopt), T0);
    const ksasl::delegation_token t = c.parse_create_response(3, created);
    expect(t.owner() == "User:alice" && t.expiry_ms() == T0 + 10000, "she creates a token over her connection");

    ksasl::mechanism_registry with_token;
    with_token.add_token_clients(t.id(), t.hmac_base64());
    const ksasl::client_config tc = ksasl::client_config_builder(with_token, "SCRAM-SHA-512").build();
    link tok(tc, sc);
    tok.authenticate(T0 + 1000);
    expect(tok.client_authenticated && tok.server.session().token_authenticated &&
               tok.client.session().lifetime_ms == 9000,
           "and logs in with it on another connection");
    const std::vector<std::uint8_t> refused = tok.request(a, c.describe_request(3, 101, std::nullopt), T0 + 1000);
    expect(is_error(error_of([&] { c.parse_describe_response(3, refused); }),
                    KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED) &&
               c.kafka_error() == 64,
           "the token connection may not ask for tokens (64)");
    const std::vector<std::uint8_t> described = user.request(a, c.describe_request(3, 102, std::nullopt), T0 + 1000);
    expect(c.parse_describe_response(3, described).size() == 1, "the password connection may");
    expect(is_error(error_of([&] { listener.set_max_reauth_ms(-1).build(); }), KSASL_INVALID_CONFIG) &&
               listener.set_max_reauth_ms(0).build(),
           "a refused value fails build() and leaves the builder usable");
}

} // namespace

int main() {
    return check::run("delegation tokens", [] {
        reference_vector();
        authority_rules();
        describe_sweep_records();
        logins();
        codec();
        over_connections();
    });
}
