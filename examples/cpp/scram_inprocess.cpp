// A ksasl::client_exchange and a ksasl::server_exchange authenticate in one process with SCRAM-SHA-256, printing
// every message with its secrets redacted; then a client with a wrong password is refused and
// the failure is shown as the exceptions' code names.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "ksasl.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::int64_t NOW = 1795000000000; // the host supplies time; ksasl never reads a clock
constexpr const char *MECH = "SCRAM-SHA-256";

// A SCRAM message with the salt, the proof and the server signature replaced.
std::string redact_scram(ksasl::bytes_view msg) {
    if (msg.empty()) {
        return "(empty)";
    }
    std::string out;
    std::string_view s = msg.as_string_view();
    while (!s.empty()) {
        const std::size_t comma = s.find(',');
        std::string_view attr = s.substr(0, comma);
        if (attr.size() >= 2 && attr[1] == '=' && (attr[0] == 's' || attr[0] == 'p' || attr[0] == 'v')) {
            out += std::string(attr.substr(0, 2)) + "<redacted>";
        } else {
            out += std::string(attr);
        }
        if (comma == std::string_view::npos) {
            break;
        }
        out += ',';
        s.remove_prefix(comma + 1);
    }
    return out;
}

void show(bool from_client, ksasl::bytes_view msg) {
    std::printf("  %s  %s\n", from_client ? "client -> server" : "server -> client", redact_scram(msg).c_str());
}

// Runs one exchange to the end; returns the server's outcome. Failures throw ksasl::error.
ksasl::server_exchange::outcome_info authenticate(ksasl::client_exchange &client, ksasl::server_exchange &server) {
    ksasl::client_exchange::step_result c = client.start(NOW);
    std::vector<std::uint8_t> msg = c.out.to_vector();
    bool client_done = c.done;
    for (int round = 0; round < 8; round++) {
        show(true, msg);
        ksasl::server_exchange::step_result s;
        try {
            s = server.step(msg, NOW);
        } catch (const ksasl::error &e) {
            // What a Kafka broker would tell the client, and what the client makes of it.
            const std::string told = server.client_message();
            std::printf("  server refused: %s\n", e.what());
            std::printf("  server -> client  error: \"%s\"\n", told.c_str());
            client.server_failed(told); // always throws the client's view of the failure
        }
        switch (s.status) {
        case ksasl::server_step_kind::challenge: {
            show(false, s.out);
            c = client.step(s.out, NOW);
            msg = c.out.to_vector();
            client_done = c.done;
            break;
        }
        case ksasl::server_step_kind::done: {
            if (!s.out.empty()) {
                show(false, s.out);
                c = client.step(s.out, NOW); // verifies the server signature
                client_done = c.done;
            }
            if (!client_done) {
                throw ksasl::error(KSASL_WRONG_STATE, "WRONG_STATE: the client did not finish");
            }
            return server.outcome();
        }
        case ksasl::server_step_kind::pending:
        case ksasl::server_step_kind::need_credential:
            throw ksasl::error(KSASL_WRONG_STATE, "WRONG_STATE: unexpected credential request or pending step (the store and the built-ins answer at once)");
        }
    }
    throw ksasl::error(KSASL_WRONG_STATE, "WRONG_STATE: the exchange did not finish");
}

} // namespace

int main() {
    try {
        std::printf("ksasl %s (C++ wrapper): %s in one process, secrets redacted\n\n",
                    std::string(ksasl::version()).c_str(), MECH);

        // The broker side: a store with one user, and the password mechanisms looking it up.
        ksasl::credential_store users;
        users.add_user("alice", "alice-secret", 4096);
        ksasl::mechanism_registry broker;
        broker.add_password_servers(users);
        std::printf("server mechanisms: %zu\n", broker.mechanism_count(true));

        // The client side: alice with her password.
        ksasl::mechanism_registry alice;
        alice.add_password_clients("alice", "alice-secret");

        std::printf("\n== %s, right password ==\n", MECH);
        {
            ksasl::client_exchange client(alice, MECH);
            ksasl::server_exchange server(broker, MECH);
            const ksasl::server_exchange::outcome_info o = authenticate(client, server);
            std::printf("  => authenticated %s (name %s) with %s\n", o.principal.c_str(), o.principal_name.c_str(),
                        o.mechanism.c_str());
            if (o.principal != "User:alice" || o.mechanism != MECH || o.token_authenticated) {
                std::fprintf(stderr, "unexpected outcome\n");
                return 1;
            }
        }

        std::printf("\n== %s, wrong password ==\n", MECH);
        ksasl::mechanism_registry mallory;
        mallory.add_password_clients("alice", "not-the-password");
        ksasl::client_exchange client(mallory, MECH);
        ksasl::server_exchange server(broker, MECH);
        try {
            authenticate(client, server);
            std::fprintf(stderr, "the wrong password was accepted\n");
            return 1;
        } catch (const ksasl::error &e) {
            std::printf("  client sees: %s (%u, %s): %s\n", e.name(), static_cast<unsigned>(e.code()), e.kind(),
                        e.message());
            if (e.code() != KSASL_SERVER_REJECTED_AUTHENTICATION ||
                std::string(e.what()) != std::string(e.name()) + ": " + e.message() ||
                std::string_view(e.message()).find(e.name()) != std::string_view::npos) {
                std::fprintf(stderr, "expected SERVER_REJECTED_AUTHENTICATION named once, got %s\n", e.what());
                return 1;
            }
        }
        // The server's own record of why it failed.
        std::printf("  server detail: %s\n", server.last_error().c_str());
        if (server.last_error().rfind("INVALID_CREDENTIALS", 0) != 0) {
            std::fprintf(stderr, "expected the server to report INVALID_CREDENTIALS\n");
            return 1;
        }
        // A finished (failed) exchange refuses further steps.
        try {
            server.step(ksasl::bytes_view(std::string_view("n,,n=alice,r=x")), NOW);
            std::fprintf(stderr, "a failed exchange accepted another step\n");
            return 1;
        } catch (const ksasl::error &e) {
            std::printf("  stepping it again: %s\n", e.name());
        }
        std::printf("\nok\n");
        return 0;
    } catch (const ksasl::error &e) {
        std::fprintf(stderr, "unexpected ksasl error %s (%u): %s\n", e.name(), static_cast<unsigned>(e.code()),
                     e.message());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    }
    return 1;
}
