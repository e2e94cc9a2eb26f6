// The C++ side of the install check: the installed ksasl.hpp, through the same CMake target.
#include <ksasl.hpp>

#include <cstdio>
#include <string>

int main() {
    try {
        ksasl::store users;
        users.add_user("alice", "alice-secret");
        ksasl::registry reg;
        reg.add_password_servers(users);
        reg.add_password_clients("alice", "alice-secret");
        ksasl::client client(reg, "PLAIN");
        ksasl::server server(reg, "PLAIN");
        const ksasl::server::step_result s = server.step(client.start(1795000000000).out, 1795000000000);
        if (s.status != ksasl::server_status::done || server.outcome().principal != "User:alice") {
            std::fprintf(stderr, "consumer (C++): unexpected outcome\n");
            return 1;
        }
        std::printf("ksasl %s via ksasl.hpp: authenticated %s\n", std::string(ksasl::version()).c_str(),
                    server.outcome().principal.c_str());
        return 0;
    } catch (const ksasl::error &e) {
        std::fprintf(stderr, "consumer (C++): %s: %s\n", e.name(), e.what());
        return 1;
    }
}
