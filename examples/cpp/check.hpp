// What the C++ examples share as programs that double as tests: an [ok]/[FAILED] line per
// expectation, the ksasl::error a call throws, and a main() body that reports unexpected
// exceptions and turns the failures into the exit status.

#ifndef KSASL_EXAMPLES_CHECK_HPP
#define KSASL_EXAMPLES_CHECK_HPP

#include "ksasl.hpp"

#include <cstddef>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

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

} // namespace check

#endif
