// The C++ side of the install check: the installed ksasl.hpp, through the same CMake target.
#include <ksasl.hpp>

#include <cstdio>
#include <string>

int main() {
    try {
        ksasl::credential_store users;
        users.add_user("alice", "alice-secret");
        ksasl::mechanism_registry reg;
        reg.add_password_servers(users);
        reg.add_password_clients("alice", "alice-secret");
        ksasl::client_exchange client(reg, "PLAIN");
        ksasl::server_exchange server(reg, "PLAIN");
        const ksasl::server_exchange::step_result s = server.step(client.start(1795000000000).out, 1795000000000);
        if (s.status != ksasl::server_step_kind::done || server.outcome().principal != "User:alice") {
            std::fprintf(stderr, "consumer (C++): unexpected outcome\n");
            return 1;
        }
        std::printf("ksasl %s via ksasl.hpp: authenticated %s\n", std::string(ksasl::version()).c_str(),
                    server.outcome().principal.c_str());
        return 0;
    } catch (const ksasl::error &e) {
        std::fprintf(stderr, "consumer (C++): %s\n", e.what());
        return 1;
    }
}
