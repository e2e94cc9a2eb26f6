// The C++ wrapper's callbacks and error paths: a std::function credential callback (and one
// that throws), the pull form of credential lookup, a std::function token validator (and one
// that throws), a refresh callback that throws, errors from constructors, moved-from handles
// and strings with NUL bytes. The callbacks' heap objects are freed with their owners.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::int64_t NOW = 1795000000000;

using check::expect;

// Runs an exchange; returns the principal, or throws the client's view of a refusal.
std::string run(ksasl::client_exchange &client, ksasl::server_exchange &server) {
    ksasl::client_exchange::step_result c = client.start(NOW);
    std::vector<std::uint8_t> msg = c.out.to_vector();
    for (int round = 0; round < 8; round++) {
        ksasl::server_exchange::step_result s;
        try {
            s = server.step(msg, NOW);
        } catch (const ksasl::error &e) {
            std::printf("    server: %s\n", e.what());
            client.server_failed(server.client_message());
        }
        if (s.status == ksasl::server_step_kind::done) {
            return server.outcome().principal;
        }
        if (s.status != ksasl::server_step_kind::challenge) {
            throw std::runtime_error("unexpected server status");
        }
        c = client.step(s.out, NOW);
        msg = c.out.to_vector();
    }
    throw std::runtime_error("the exchange did not finish");
}

// Calls f, expecting a ksasl::error with `code`; prints it.
template <typename F>
bool throws(std::uint32_t code, F &&f) {
    try {
        f();
    } catch (const ksasl::error &e) {
        std::printf("    -> %s (%u): %s\n", e.name(), static_cast<unsigned>(e.code()), e.message());
        return e.code() == code;
    }
    std::printf("    -> no exception\n");
    return false;
}

void credential_callback() {
    std::printf("credential callback (std::function)\n");
    auto alive = std::make_shared<int>(0); // the callback's captured state
    std::weak_ptr<int> watch = alive;
    {
        ksasl::mechanism_registry broker;
        broker.add_password_servers();
        broker.set_credential_callback([alive](const ksasl::credential_request &req, ksasl::credential_answer &ans) {
            ++*alive;
            if (req.username() == "alice") {
                ans.password("alice-secret");
            } else if (req.username() == "boom") {
                throw std::runtime_error("the credential database is down");
            } else {
                ans.unknown();
            }
        });
        alive.reset();

        ksasl::mechanism_registry alice, boom;
        alice.add_password_clients("alice", "alice-secret");
        boom.add_password_clients("boom", "whatever");
        for (const char *mech : {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}) {
            ksasl::client_exchange c(alice, mech);
            ksasl::server_exchange s(broker, mech);
            const std::string who = run(c, s);
            std::printf("    %s: %s\n", mech, who.c_str());
            expect(who == "User:alice", "alice logs in through the callback");
        }
        ksasl::client_exchange c(boom, "PLAIN");
        ksasl::server_exchange s(broker, "PLAIN");
        expect(throws(KSASL_SERVER_REJECTED_AUTHENTICATION, [&] { run(c, s); }),
               "a throwing callback fails the login, not the process");
        expect(!watch.expired() && *watch.lock() == 4, "the callback ran for each lookup");
    }
    expect(watch.expired(), "the callback was freed with the registry");
}

void pull_form() {
    std::printf("credential lookup, pull form\n");
    ksasl::mechanism_registry broker;
    broker.add_password_servers(); // no store, no callback
    ksasl::mechanism_registry alice;
    alice.add_password_clients("alice", "alice-secret");
    ksasl::client_exchange c(alice, "SCRAM-SHA-256");
    ksasl::server_exchange s(broker, "SCRAM-SHA-256");
    ksasl::server_exchange::step_result st = s.step(c.start(NOW).out, NOW);
    expect(st.status == ksasl::server_step_kind::need_credential, "the server asks for a credential");
    const ksasl::pending_credential req = s.credential_request();
    std::printf("    request: %s for %s (token auth %d)\n", req.mechanism.c_str(), req.username.c_str(),
                req.token_authenticated ? 1 : 0);
    expect(req.mechanism == "SCRAM-SHA-256" && req.username == "alice" && !req.token_authenticated, "the request is alice's");
    st = s.provide_credential(ksasl::credential_answer_kind::password, "alice-secret", std::nullopt, std::nullopt, NOW);
    expect(st.status == ksasl::server_step_kind::challenge, "the exchange continues");
    ksasl::client_exchange::step_result cs = c.step(st.out, NOW);
    st = s.step(cs.out, NOW);
    expect(st.status == ksasl::server_step_kind::done, "the exchange completes");
    cs = c.step(st.out, NOW);
    expect(cs.done && s.outcome().principal == "User:alice", "alice is authenticated");
    expect(throws(KSASL_WRONG_STATE, [&] { s.credential_request(); }), "no request is pending any more");
}

void token_validator() {
    std::printf("token validator callback (std::function)\n");
    auto alive = std::make_shared<int>(0);
    std::weak_ptr<int> watch = alive;
    {
        ksasl::mechanism_registry broker;
        broker.add_oauthbearer_callback_server(
            [alive](std::string_view token, std::int64_t now, ksasl::oauth_verdict &verdict) {
                ++*alive;
                if (token == "opaque-token-for-bob") {
                    verdict.accept("bob", now + 600000);
                } else if (token == "opaque-token-that-throws") {
                    throw std::runtime_error("the introspection endpoint is down");
                } else {
                    verdict.reject("unknown token");
                }
            });
        alive.reset();

        for (const char *t : {"opaque-token-for-bob", "opaque-token-that-throws", "opaque-token-unknown"}) {
            ksasl::refresher r;
            r.set_token(t, NOW + 3600000, "bob", NOW);
            ksasl::mechanism_registry client_side;
            client_side.add_oauthbearer_client(r);
            ksasl::client_exchange c(client_side, "OAUTHBEARER");
            ksasl::server_exchange s(broker, "OAUTHBEARER");
            if (std::string_view(t) == "opaque-token-for-bob") {
                const std::string who = run(c, s);
                std::printf("    accepted: %s\n", who.c_str());
                expect(who == "User:bob", "the validator's principal is used");
            } else {
                expect(throws(KSASL_SERVER_REJECTED_AUTHENTICATION, [&] { run(c, s); }),
                       "a rejected (or throwing) validation refuses the token");
            }
        }
        expect(!watch.expired() && *watch.lock() == 3, "the validator ran for each token");
    }
    expect(watch.expired(), "the validator was freed with the registry");
}

void throwing_refresh() {
    std::printf("refresh callback that throws\n");
    ksasl::refresher r;
    int calls = 0;
    r.set_refresh_callback([&](ksasl::refresher_ref ref, std::int64_t now) {
        if (++calls == 1) {
            throw std::runtime_error("the identity provider is unavailable");
        }
        const ksasl::oauth_token t = ksasl::oauth_token::new_unsecured("carol", 3600, std::nullopt, now);
        ref.set_token(t.value(), t.expiry_ms(), "carol", now);
    });
    expect(r.run_due(NOW), "the callback ran");
    expect(r.generation() == 0, "no token after the exception");
    const std::optional<std::int64_t> retry = r.next_deadline();
    std::printf("    retry after %lld ms\n", retry ? static_cast<long long>(*retry - NOW) : -1LL);
    expect(retry && *retry == NOW + 10000, "the exception was reported as a failure (retry in 10 s)");
    expect(!r.run_due(NOW + 9999), "nothing due before the retry");
    expect(r.run_due(NOW + 10000) && r.generation() == 1, "the retry installed a token");

    ksasl::tracker tr(r, 10000);
    tr.authenticated(7, r.generation(), 60000, NOW + 60000, NOW + 70000);
    const ksasl::tracker::poll_result p = tr.poll(NOW + 10000);
    std::printf("    tracker: refresh=%d, %zu connection(s) to re-authenticate\n", p.refresh ? 1 : 0, p.ids.size());
    tr.forget(7);
}

void errors() {
    std::printf("errors\n");
    ksasl::refresher_config_builder rb;
    rb.set_window_factor(2.0);
    expect(throws(KSASL_INVALID_CONFIG, [&] { rb.build(); }) && !rb.last_error().empty(),
           "a failed build carries the builder's detail");
    ksasl::refresher built(rb.set_window_factor(0.9).build());
    expect(built.poll(NOW), "the builder stays usable: a corrected value builds");
    expect(throws(KSASL_UNKNOWN_MECHANISM,
                  [] {
                      ksasl::mechanism_registry reg;
                      ksasl::client_exchange c(reg, "GSSAPI");
                  }),
           "an unknown mechanism is refused (a constructor failure carries ksasl_last_constructor_error())");
    ksasl::credential_store s;
    expect(throws(KSASL_INVALID_ARGUMENT, [&] { s.add_user(std::string_view("a\0b", 3), "pw"); }),
           "a string with a NUL byte is refused");
    expect(throws(KSASL_CREDENTIAL_ITERATIONS_TOO_LOW, [&] { s.add_user("alice", "pw", 1000); }),
           "too few SCRAM iterations are refused with the store's detail");
    ksasl::credential_store moved = std::move(s);
    expect(!s && moved, "moving transfers the handle");
    expect(throws(KSASL_NULL_ARGUMENT, [&] { s.add_user("alice", "pw"); }), "a moved-from handle throws");
    moved.add_user("alice", "pw");
    expect(moved.remove_user("alice") && !moved.remove_user("alice"), "remove_user reports whether it existed");
    ksasl::jwks_validator v("https://issuer.example", "kafka");
    expect(throws(KSASL_INVALID_CONFIG, [&] { v.set_jwks("{not json", NOW); }) && !v.last_error().empty(),
           "a bad JWKS is refused with the validator's detail");
    expect(std::string(ksasl::result_name(KSASL_TOKEN_EXPIRED)) == "TOKEN_EXPIRED", "result names");
}

} // namespace

int main() {
    return check::run("callbacks and errors", [] {
        credential_callback();
        pull_form();
        token_validator();
        throwing_refresh();
        errors();
    });
}
