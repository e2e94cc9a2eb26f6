/*
 * ksasl.hpp: a header-only C++17 wrapper over the ksasl C API (ksasl.h).
 *
 * - Every handle type of ksasl.h has an RAII class in namespace ksasl with the same name
 *   (ksasl::credential_store for ksasl_credential_store, ...). The classes are move-only; the
 *   destructor calls the matching ksasl_<object>_free. A moved-from object holds no handle;
 *   calling methods on it throws ksasl::error (NULL_ARGUMENT).
 * - Configurations are made by builders, as in the C API: client_config_builder,
 *   server_config_builder and refresher_config_builder take the settings and build() checks
 *   them all and makes an immutable configuration (a failed build() throws and leaves the
 *   builder usable). A configuration may be shared by any number of connections.
 * - Every call that fails throws ksasl::error: code() is the ksasl_result, name() its stable
 *   name (ksasl_result_name), what() the handle's detail message (ksasl_<object>_last_error,
 *   or ksasl_last_constructor_error() for constructors).
 * - Strings go in as std::string_view (copied to a NUL-terminated buffer; a string_view with
 *   an embedded NUL byte is refused with INVALID_ARGUMENT) and come out as std::string.
 *   std::optional<std::string_view> stands for the C arguments that may be NULL.
 * - Bytes go in as ksasl::bytes_view (from a std::vector<uint8_t>, a std::string, a
 *   std::string_view or a pointer and a size) and come out as ksasl::bytes_view, a
 *   (pointer, size) view borrowed from the handle: valid until the next call on that handle.
 *   Copy it with to_vector() to keep it.
 * - Times are int64_t milliseconds since the epoch supplied by the caller; std::optional
 *   replaces the C API's -1 ("none").
 * - Callbacks (credential lookup, token validation, token refresh, host mechanism factories)
 *   are std::function objects, kept in a heap object owned by the library (freed with the
 *   registry or refresher, through the C API's free_userdata hook). An exception thrown by a
 *   callback never reaches the C library: it counts as a failed lookup, a rejected token, a
 *   failed refresh (ksasl_refresher_set_token_failure with what()), or a failed mechanism step
 *   (ksasl_host_output_set_error with what(); KSASL_HOST_MECHANISM_FAILED).
 * - Host mechanisms (KIP-43 pluggability) are C++ classes deriving from
 *   ksasl::host_client_mechanism / ksasl::host_server_mechanism, made by a factory given to
 *   mechanism_registry::add_client_mechanism / add_server_mechanism. A mechanism may answer later
 *   (host_output::set_pending): the drivers then report `pending`, and the host continues with
 *   resume() and a ksasl::host_answer holding the late answer.
 * - Delegation tokens (KIP-48): ksasl::token_authority (the broker side: create, renew, expire,
 *   describe, sweep, records, Kafka's token APIs), ksasl::delegation_token and
 *   ksasl::delegation_token_list (owning) with ksasl::delegation_token_ref (borrowed from a
 *   list), and ksasl::delegation_token_codec (the client side of the token APIs).
 * - Configuration files: ksasl::config_check reports what the library reads from `.properties`
 *   text; ksasl::client_setup builds a client from it (Kafka's or librdkafka's names): its
 *   client_config, the refresher behind OAUTHBEARER tokens and what the host still has to do;
 *   ksasl::server_setup builds a broker listener from `server.properties`: its server_config,
 *   its JWKS endpoints, its token_authority and where it listens.
 *
 * Thread safety is the C API's: configuration objects may be shared once built, per-connection
 * objects are used by one thread at a time, and a credential callback may be called from any
 * thread that steps a server.
 */

#ifndef KSASL_HPP
#define KSASL_HPP

#include "ksasl.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ksasl {

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/// The stable name of a result code ("OK", "INVALID_CREDENTIALS", ...).
inline const char *result_name(std::uint32_t code) noexcept { return ksasl_result_name(code); }

/// The kind of a result code ("misuse", "protocol", "authentication", "credential", ...).
inline const char *result_kind(std::uint32_t code) noexcept { return ksasl_result_kind(code); }

/// A failed ksasl call: the result code, its name, and the detail message. what() is the
/// library's text, "NAME: message" (the code's name once); message() is the part after the
/// name, for displays that show the name (or code) themselves.
class error : public std::runtime_error {
public:
    error(std::uint32_t code, const std::string &detail)
        : std::runtime_error(detail.empty() ? std::string(ksasl_result_name(code)) : detail), code_(code) {
        const std::string_view name = ksasl_result_name(code), text = what();
        if (text == name) {
            message_len_ = 0;
        } else if (text.size() >= name.size() + 2 && text.substr(0, name.size()) == name &&
                   text.substr(name.size(), 2) == ": ") {
            message_len_ = text.size() - name.size() - 2;
        } else {
            message_len_ = text.size();
        }
    }

    /// The ksasl_result (a KSASL_* code, never KSASL_OK).
    std::uint32_t code() const noexcept { return code_; }
    /// The code's stable name, e.g. "INVALID_CREDENTIALS".
    const char *name() const noexcept { return ksasl_result_name(code_); }
    /// The code's kind, e.g. "authentication".
    const char *kind() const noexcept { return ksasl_result_kind(code_); }
    /// The detail message (the same text as what()).
    const char *detail() const noexcept { return what(); }
    /// The detail without the leading "NAME: " (empty when the library gave none).
    const char *message() const noexcept {
        const std::string_view text = what();
        return what() + (text.size() - message_len_);
    }

private:
    std::uint32_t code_;
    std::size_t message_len_ = 0;
};

/* ------------------------------------------------------------------------------------------ */
/* Views and enumerations                                                                     */
/* ------------------------------------------------------------------------------------------ */

/// A borrowed (pointer, size) view of contiguous values, like a read-only std::span.
template <typename T>
class view {
public:
    constexpr view() noexcept = default;
    constexpr view(const T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <typename Alloc>
    view(const std::vector<T, Alloc> &v) noexcept : data_(v.data()), size_(v.size()) {}

    constexpr const T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr const T *begin() const noexcept { return data_; }
    constexpr const T *end() const noexcept { return data_ + size_; }
    constexpr const T &operator[](std::size_t i) const noexcept { return data_[i]; }
    /// A copy that outlives the handle the view borrows from.
    std::vector<T> to_vector() const { return empty() ? std::vector<T>() : std::vector<T>(begin(), end()); }

private:
    const T *data_ = nullptr;
    std::size_t size_ = 0;
};

/// Bytes in (SASL messages, Kafka frames) or out (borrowed from a handle).
class bytes_view : public view<std::uint8_t> {
public:
    using view<std::uint8_t>::view;
    constexpr bytes_view() noexcept = default;
    bytes_view(view<std::uint8_t> v) noexcept : view<std::uint8_t>(v) {}
    bytes_view(std::string_view s) noexcept
        : view<std::uint8_t>(reinterpret_cast<const std::uint8_t *>(s.data()), s.size()) {}
    bytes_view(const std::string &s) noexcept : bytes_view(std::string_view(s)) {}

    /// The bytes as characters (no copy, no validation).
    std::string_view as_string_view() const noexcept {
        return empty() ? std::string_view() : std::string_view(reinterpret_cast<const char *>(data()), size());
    }
    /// A copy of the bytes as a std::string.
    std::string to_string() const { return std::string(as_string_view()); }
};

/// Connection ids (ksasl_tracker_poll), borrowed from the tracker.
using id_view = view<std::uint64_t>;

/// KSASL_REAUTH_*: when client connections re-authenticate.
enum class reauth_timing : ksasl_reauth_timing {
    kafka = KSASL_REAUTH_KAFKA,
    librdkafka = KSASL_REAUTH_LIBRDKAFKA,
    franz_go = KSASL_REAUTH_FRANZ_GO,
    disabled = KSASL_REAUTH_DISABLED,
};

/// KSASL_CLIENT_EVENT_*: what a frame received by a client connection meant.
enum class client_event : ksasl_client_event {
    continue_ = KSASL_CLIENT_EVENT_CONTINUE,
    application = KSASL_CLIENT_EVENT_APPLICATION,
    authenticated = KSASL_CLIENT_EVENT_AUTHENTICATED,
    reauthenticated = KSASL_CLIENT_EVENT_REAUTHENTICATED,
    reauth_failed = KSASL_CLIENT_EVENT_REAUTH_FAILED,
    pending = KSASL_CLIENT_EVENT_PENDING, ///< a host mechanism answers later: see client_connection::resume
};

/// KSASL_SERVER_ACTION_*: what the host does after a server connection frame.
enum class server_action : ksasl_server_action {
    continue_ = KSASL_SERVER_ACTION_CONTINUE,
    need_credential = KSASL_SERVER_ACTION_NEED_CREDENTIAL,
    authenticated = KSASL_SERVER_ACTION_AUTHENTICATED,
    reauthenticated = KSASL_SERVER_ACTION_REAUTHENTICATED,
    reauth_failed = KSASL_SERVER_ACTION_REAUTH_FAILED,
    fail_at = KSASL_SERVER_ACTION_FAIL_AT,
    close_now = KSASL_SERVER_ACTION_CLOSE_NOW,
    pending = KSASL_SERVER_ACTION_PENDING, ///< a host mechanism answers later: see server_connection::resume
};

/// KSASL_GATE_*: the per-request gate's verdicts.
enum class gate_verdict : ksasl_gate {
    process = KSASL_GATE_PROCESS,
    begin_reauth = KSASL_GATE_BEGIN_REAUTHENTICATION,
    close_expired = KSASL_GATE_CLOSE_EXPIRED,
    not_authenticated = KSASL_GATE_NOT_AUTHENTICATED,  ///< pass the frame to handle_frame
    close = KSASL_GATE_CLOSE,                          ///< failed: close without answering
};

/// KSASL_CLIENT_LOGIN_*: what the host still has to do for a client_setup.
enum class client_login : ksasl_client_login {
    ready = KSASL_CLIENT_LOGIN_READY,           ///< nothing (the refresher makes unsecured tokens itself)
    oidc = KSASL_CLIENT_LOGIN_OIDC,             ///< the refresher logs in at the identity provider
    host_token = KSASL_CLIENT_LOGIN_HOST_TOKEN, ///< the host answers the refresher (set_token)
    kerberos = KSASL_CLIENT_LOGIN_KERBEROS,     ///< the host adds a GSSAPI client: with_registry()
};

/// KSASL_SERVER_STEP_*: what a server exchange step produced.
enum class server_step_kind : ksasl_server_step_kind {
    challenge = KSASL_SERVER_STEP_CHALLENGE,
    need_credential = KSASL_SERVER_STEP_NEED_CREDENTIAL,
    done = KSASL_SERVER_STEP_DONE,
    pending = KSASL_SERVER_STEP_PENDING, ///< a host mechanism answers later: see server_exchange::resume
};

/// KSASL_CREDENTIAL_ANSWER_*: the kind of a credential answer.
enum class credential_answer_kind : ksasl_credential_answer_kind {
    password = KSASL_CREDENTIAL_ANSWER_PASSWORD,
    scram = KSASL_CREDENTIAL_ANSWER_SCRAM,
    unknown = KSASL_CREDENTIAL_ANSWER_UNKNOWN,
    unavailable = KSASL_CREDENTIAL_ANSWER_UNAVAILABLE,
    later = KSASL_CREDENTIAL_ANSWER_LATER, ///< callback answers only
};

/// A pending credential request of a server (the pull form).
struct pending_credential {
    std::string mechanism;
    std::string username;             ///< the token id for delegation-token logins
    bool token_authenticated = false; ///< a delegation-token login (tokenauth=true)
};

/* ------------------------------------------------------------------------------------------ */
/* Internals                                                                                  */
/* ------------------------------------------------------------------------------------------ */

namespace detail {

inline std::string str(const char *p) { return p ? std::string(p) : std::string(); }

inline std::optional<std::int64_t> opt_ms(std::int64_t v) {
    return v < 0 ? std::nullopt : std::optional<std::int64_t>(v);
}

/// Throws for a failed call without a handle to ask for details.
inline void check(ksasl_result rc, const char *function) {
    if (rc != KSASL_OK) {
        throw error(rc, std::string(ksasl_result_name(rc)) + ": " + function + " failed");
    }
}

/// Throws for a failed constructor, with ksasl_last_constructor_error().
inline void check_new(ksasl_result rc) {
    if (rc != KSASL_OK) {
        throw error(rc, str(ksasl_last_constructor_error()));
    }
}

/// Throws for a failed call on a handle, with its last error.
template <typename H>
inline void check(ksasl_result rc, const H *h, const char *(*last_error)(const H *)) {
    if (rc != KSASL_OK) {
        std::string d = h ? str(last_error(h)) : std::string();
        if (d.empty()) {
            d = std::string(ksasl_result_name(rc)) + (h ? "" : ": the handle is NULL (moved from?)");
        }
        throw error(rc, d);
    }
}

/// A NUL-terminated copy of a string argument.
class cstr {
public:
    cstr(std::string_view s, const char *what) : s_(s) {
        if (s_.find('\0') != std::string::npos) {
            throw error(KSASL_INVALID_ARGUMENT,
                        std::string("INVALID_ARGUMENT: ") + what + " contains a NUL byte");
        }
    }
    const char *c_str() const noexcept { return s_.c_str(); }

private:
    std::string s_;
};

/// A NUL-terminated copy of an optional string argument (NULL when absent).
class opt_cstr {
public:
    opt_cstr(const std::optional<std::string_view> &s, const char *what) {
        if (s) {
            s_.emplace(*s, what);
        }
    }
    const char *c_str() const noexcept { return s_ ? s_->c_str() : nullptr; }

private:
    std::optional<cstr> s_;
};

/// NUL-terminated copies of a list of strings and the array of pointers the C API takes (a
/// principal list). data() is never NULL, so an empty list reaches the C API as an empty
/// array, not as "no list". Neither copied nor moved: the pointers point into it.
class cstr_array {
public:
    cstr_array(const std::vector<std::string> &items, const char *what) {
        keep_.reserve(items.size());
        for (const std::string &item : items) {
            keep_.emplace_back(item, what);
        }
        // Taken once every copy is in place (no reallocation afterwards).
        ptrs_.reserve(keep_.size());
        for (const cstr &c : keep_) {
            ptrs_.push_back(c.c_str());
        }
    }
    cstr_array(const cstr_array &) = delete;
    cstr_array &operator=(const cstr_array &) = delete;

    const char *const *data() const noexcept { return ptrs_.empty() ? &none_ : ptrs_.data(); }
    std::size_t size() const noexcept { return ptrs_.size(); }

private:
    std::vector<cstr> keep_;
    std::vector<const char *> ptrs_;
    const char *none_ = nullptr;
};

/// Owns a C handle and frees it with Free (which accepts NULL).
template <typename T, void (*Free)(T *)>
class handle {
public:
    handle() noexcept = default;
    explicit handle(T *p) noexcept : p_(p) {}
    ~handle() { Free(p_); }
    handle(const handle &) = delete;
    handle &operator=(const handle &) = delete;
    handle(handle &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    handle &operator=(handle &&o) noexcept {
        if (this != &o) {
            Free(p_);
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    T *get() const noexcept { return p_; }
    T *release() noexcept { return std::exchange(p_, nullptr); }

private:
    T *p_ = nullptr;
};

template <typename Box>
inline void delete_box(void *userdata) noexcept {
    delete static_cast<Box *>(userdata);
}

} // namespace detail

/// Tag for constructors that adopt an existing C handle (taking ownership of it).
struct adopt_t {
    explicit adopt_t() = default;
};
inline constexpr adopt_t adopt{};

/// The library version, e.g. "0.1.0".
inline std::string_view version() noexcept { return ksasl_version(); }

/// Panics inside the library on purpose and returns what the C boundary made of it
/// (KSASL_PANIC); a check that no panic unwinds into the host. Does not throw.
inline std::uint32_t check_panic_boundary() noexcept { return ksasl_check_panic_boundary(); }

#define KSASL_HPP_HANDLE_BOILERPLATE(cls, ctype)                                               \
public:                                                                                        \
    cls(adopt_t, ctype *p) noexcept : h_(p) {}                                                 \
    cls(cls &&) noexcept = default;                                                            \
    cls &operator=(cls &&) noexcept = default;                                                 \
    cls(const cls &) = delete;                                                                 \
    cls &operator=(const cls &) = delete;                                                      \
    ~cls() = default;                                                                          \
    /** The C handle (still owned by this object). */                                          \
    ctype *get() const noexcept { return h_.get(); }                                           \
    /** Gives up ownership of the C handle (free it with ksasl_*_free). */                     \
    ctype *release() noexcept { return h_.release(); }                                         \
    explicit operator bool() const noexcept { return h_.get() != nullptr; }                    \
                                                                                               \
private:                                                                                       \
    detail::handle<ctype, &ctype##_free> h_;                                                   \
                                                                                               \
public:

/* ------------------------------------------------------------------------------------------ */
/* Credential store                                                                           */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_credential_store: an in-memory credential store (users and delegation tokens). Thread-safe.
class credential_store {
    KSASL_HPP_HANDLE_BOILERPLATE(credential_store, ksasl_credential_store)

    /// ksasl_credential_store_new: an empty store.
    credential_store() {
        ksasl_credential_store *p = nullptr;
        detail::check_new(ksasl_credential_store_new(&p));
        h_ = detail::handle<ksasl_credential_store, &ksasl_credential_store_free>(p);
    }

    /// The detail of the store's last failure.
    std::string last_error() const { return detail::str(ksasl_credential_store_last_error(get())); }

    /// Adds or replaces a user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM credentials
    /// derived with random salts and `iterations`, at least 4096).
    void add_user(std::string_view username, std::string_view password, std::uint32_t iterations = 4096) {
        detail::cstr u(username, "username"), p(password, "password");
        check(ksasl_credential_store_add_user(get(), u.c_str(), p.c_str(), iterations));
    }

    /// Sets a user's SCRAM credential from Kafka's text form for `mechanism`.
    void set_scram(std::string_view username, std::string_view mechanism, std::string_view credential) {
        detail::cstr u(username, "username"), m(mechanism, "mechanism"), c(credential, "credential");
        check(ksasl_credential_store_set_scram(get(), u.c_str(), m.c_str(), c.c_str()));
    }

    /// Sets (a value) or clears (nullopt) an absolute expiry on a user's credentials.
    void set_user_expiry(std::string_view username, std::optional<std::int64_t> expiry_ms) {
        detail::cstr u(username, "username");
        check(ksasl_credential_store_set_user_expiry(get(), u.c_str(), expiry_ms.value_or(-1)));
    }

    /// Removes a user; returns whether it was there.
    bool remove_user(std::string_view username) {
        detail::cstr u(username, "username");
        int existed = 0;
        check(ksasl_credential_store_remove_user(get(), u.c_str(), &existed));
        return existed != 0;
    }

    /// Adds a delegation token's SCRAM credential (Kafka text form) for `mechanism`, owned by
    /// `owner`, expiring at `expiry_ms` (nullopt: no expiry).
    void set_token(std::string_view token_id, std::string_view mechanism, std::string_view credential,
                   std::string_view owner, std::optional<std::int64_t> expiry_ms = std::nullopt) {
        detail::cstr t(token_id, "token_id"), m(mechanism, "mechanism"), c(credential, "credential"),
            o(owner, "owner");
        check(ksasl_credential_store_set_token(get(), t.c_str(), m.c_str(), c.c_str(), o.c_str(), expiry_ms.value_or(-1)));
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_credential_store_last_error); }
};

/* ------------------------------------------------------------------------------------------ */
/* Delegation tokens (KIP-48)                                                                 */
/* ------------------------------------------------------------------------------------------ */

class delegation_token;
class server_connection;

/// A non-owning reference to a ksasl_delegation_token: a token borrowed from a
/// delegation_token_list (valid while the list lives), or a ksasl::delegation_token seen
/// through its base. Tokens are immutable; every accessor reads the token.
class delegation_token_ref {
public:
    delegation_token_ref() noexcept = default;
    explicit delegation_token_ref(const ksasl_delegation_token *t) noexcept : t_(t) {}

    /// The C handle (not owned).
    const ksasl_delegation_token *get() const noexcept { return t_; }
    explicit operator bool() const noexcept { return t_ != nullptr; }

    /// The token id (the SCRAM user name of a `tokenauth` login).
    std::string id() const { return detail::str(ksasl_delegation_token_id(t_)); }

    /// The HMAC (64 bytes from an authority; a secret), borrowed from the token.
    bytes_view hmac() const {
        const std::uint8_t *h = nullptr;
        std::size_t n = 0;
        detail::check(ksasl_delegation_token_hmac(t_, &h, &n), "ksasl_delegation_token_hmac");
        return bytes_view(h, n);
    }

    /// The SCRAM password of a `tokenauth` login: the HMAC in standard base64 (a secret: do not
    /// log it). Borrowed from the token rather than copied, so no stray copy of the secret is
    /// left on the heap.
    std::string_view hmac_base64() const noexcept {
        const char *b = ksasl_delegation_token_hmac_base64(t_);
        return b ? std::string_view(b) : std::string_view();
    }

    /// The owner ("User:alice"): whom a login with the token authenticates as.
    std::string owner() const { return detail::str(ksasl_delegation_token_owner(t_)); }
    /// Who asked for the token (the owner unless it was created on someone's behalf).
    std::string requester() const { return detail::str(ksasl_delegation_token_requester(t_)); }

    /// The principals that may renew the token (none for a token read from a
    /// CreateDelegationToken response, which does not carry them).
    std::vector<std::string> renewers() const {
        std::vector<std::string> r;
        const std::size_t n = ksasl_delegation_token_renewer_count(t_);
        r.reserve(n);
        for (std::size_t i = 0; i < n; i++) {
            r.push_back(detail::str(ksasl_delegation_token_renewer(t_, i)));
        }
        return r;
    }

    /// When the token was issued (ms since the epoch; -1 for a NULL reference).
    std::int64_t issue_ms() const noexcept { return ksasl_delegation_token_issue_ms(t_); }
    /// When the token expires unless renewed (-1 for a NULL reference).
    std::int64_t expiry_ms() const noexcept { return ksasl_delegation_token_expiry_ms(t_); }
    /// The latest expiry a renewal can reach (-1 for a NULL reference).
    std::int64_t max_ms() const noexcept { return ksasl_delegation_token_max_ms(t_); }

    /// ksasl_delegation_token_renewed: the same token with the expiry a renewal returned, as a
    /// new token (for refresher::set_delegation_token).
    delegation_token renewed(std::int64_t new_expiry_ms) const;

protected:
    const ksasl_delegation_token *t_ = nullptr;
};

/// ksasl_delegation_token: an owned delegation token (from an authority, a codec, or made from
/// its parts). Move-only; its methods are those of delegation_token_ref.
class delegation_token : public delegation_token_ref {
public:
    /// ksasl_delegation_token_new: a token from its parts (for example one a client
    /// persisted): id, owner ("TYPE:NAME" or a bare user name), requester (nullopt: the owner),
    /// HMAC bytes and timestamps. Renewers are not needed to log in and are left empty.
    delegation_token(std::string_view token_id, std::string_view token_owner,
                     std::optional<std::string_view> token_requester, bytes_view token_hmac,
                     std::int64_t issued_ms, std::int64_t expires_ms, std::int64_t maximum_ms) {
        detail::cstr i(token_id, "token_id"), o(token_owner, "owner");
        detail::opt_cstr r(token_requester, "requester");
        ksasl_delegation_token *p = nullptr;
        detail::check_new(ksasl_delegation_token_new(i.c_str(), o.c_str(), r.c_str(), token_hmac.data(),
                                                     token_hmac.size(), issued_ms, expires_ms, maximum_ms, &p));
        t_ = p;
    }
    delegation_token(adopt_t, ksasl_delegation_token *p) noexcept : delegation_token_ref(p) {}
    ~delegation_token() { ksasl_delegation_token_free(owned()); }
    delegation_token(delegation_token &&o) noexcept : delegation_token_ref(std::exchange(o.t_, nullptr)) {}
    delegation_token &operator=(delegation_token &&o) noexcept {
        if (this != &o) {
            ksasl_delegation_token_free(owned());
            t_ = std::exchange(o.t_, nullptr);
        }
        return *this;
    }
    delegation_token(const delegation_token &) = delete;
    delegation_token &operator=(const delegation_token &) = delete;

    /// The C handle (still owned by this object).
    ksasl_delegation_token *get() const noexcept { return owned(); }
    /// A non-owning reference (valid while this object holds the token).
    delegation_token_ref ref() const noexcept { return delegation_token_ref(t_); }
    /// Gives up ownership of the C handle (free it with ksasl_delegation_token_free).
    ksasl_delegation_token *release() noexcept { return const_cast<ksasl_delegation_token *>(std::exchange(t_, nullptr)); }

private:
    // The token was made by this object's constructor (or adopted) as a mutable object; the
    // base only keeps it as const because borrowed tokens are.
    ksasl_delegation_token *owned() const noexcept { return const_cast<ksasl_delegation_token *>(t_); }
};

inline delegation_token delegation_token_ref::renewed(std::int64_t new_expiry_ms) const {
    ksasl_delegation_token *p = nullptr;
    detail::check_new(ksasl_delegation_token_renewed(t_, new_expiry_ms, &p));
    return delegation_token(adopt, p);
}

/// ksasl_delegation_token_list: tokens from token_authority::describe or a
/// DescribeDelegationToken response. The tokens are borrowed from the list (valid while it
/// lives). Iterable: `for (ksasl::delegation_token_ref t : list)`.
class delegation_token_list {
    KSASL_HPP_HANDLE_BOILERPLATE(delegation_token_list, ksasl_delegation_token_list)

    std::size_t size() const noexcept { return ksasl_delegation_token_list_count(get()); }
    bool empty() const noexcept { return size() == 0; }

    /// Token `index` (a NULL reference when out of range).
    delegation_token_ref operator[](std::size_t index) const noexcept {
        return delegation_token_ref(ksasl_delegation_token_list_get(get(), index));
    }
    /// Token `index`; throws INVALID_ARGUMENT when out of range.
    delegation_token_ref at(std::size_t index) const {
        if (index >= size()) {
            throw error(KSASL_INVALID_ARGUMENT, "INVALID_ARGUMENT: delegation token index out of range");
        }
        return (*this)[index];
    }

    /// An input iterator over the tokens (yields delegation_token_ref by value).
    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = delegation_token_ref;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = delegation_token_ref;

        iterator(const ksasl_delegation_token_list *list, std::size_t index) noexcept : l_(list), i_(index) {}
        delegation_token_ref operator*() const noexcept {
            return delegation_token_ref(ksasl_delegation_token_list_get(l_, i_));
        }
        iterator &operator++() noexcept {
            ++i_;
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator before = *this;
            ++i_;
            return before;
        }
        bool operator==(const iterator &o) const noexcept { return l_ == o.l_ && i_ == o.i_; }
        bool operator!=(const iterator &o) const noexcept { return !(*this == o); }

    private:
        const ksasl_delegation_token_list *l_;
        std::size_t i_;
    };

    iterator begin() const noexcept { return iterator(get(), 0); }
    iterator end() const noexcept { return iterator(get(), size()); }
};

/// ksasl_token_authority: creates, renews, expires, describes and sweeps delegation tokens by
/// Kafka's rules, serves Kafka's token APIs (api keys 38-41) and answers `tokenauth` logins
/// (mechanism_registry::set_token_authority). The authority itself is shared and
/// thread-safe, but a handle's outputs (borrowed views) and last error belong to the handle:
/// threads using one authority at the same time each take their own handle with share().
class token_authority {
    KSASL_HPP_HANDLE_BOILERPLATE(token_authority, ksasl_token_authority)

    /// ksasl_token_authority_new: `secret_key` is `delegation.token.secret.key` (the same on
    /// every broker; not empty), then `delegation.token.max.lifetime.ms`,
    /// `delegation.token.expiry.time.ms` and `delegation.token.expiry.check.interval.ms`
    /// (each at least 1; nullopt: Kafka's default, 7 days, 1 day, 1 hour). INVALID_CONFIG
    /// otherwise.
    explicit token_authority(std::string_view secret_key,
                             std::optional<std::int64_t> max_lifetime_ms = std::nullopt,
                             std::optional<std::int64_t> expiry_time_ms = std::nullopt,
                             std::optional<std::int64_t> expiry_check_interval_ms = std::nullopt) {
        detail::cstr k(secret_key, "secret_key");
        ksasl_token_authority *p = nullptr;
        detail::check_new(ksasl_token_authority_new(k.c_str(), max_lifetime_ms.value_or(-1),
                                                    expiry_time_ms.value_or(-1),
                                                    expiry_check_interval_ms.value_or(-1), &p));
        h_ = detail::handle<ksasl_token_authority, &ksasl_token_authority_free>(p);
    }

    /// ksasl_token_authority_share: another handle on the same authority (the same tokens),
    /// with its own outputs and last error. The authority lives while any handle or registry
    /// uses it.
    token_authority share() const {
        ksasl_token_authority *p = nullptr;
        detail::check_new(ksasl_token_authority_share(get(), &p));
        return token_authority(adopt, p);
    }

    std::string last_error() const { return detail::str(ksasl_token_authority_last_error(get())); }

    /// Creates a token for `owner` ("TYPE:NAME", or a bare name for User:<name>; only User
    /// principals may own or renew tokens: INVALID_PRINCIPAL_TYPE), requested by `requester`
    /// (nullopt: the owner), renewable by `renewers`; `max_lifetime_ms` shortens the
    /// authority's maximum lifetime (nullopt: the authority's).
    delegation_token create(std::string_view owner, std::optional<std::string_view> requester,
                            const std::vector<std::string> &renewers, std::optional<std::int64_t> max_lifetime_ms,
                            std::int64_t now_ms) {
        detail::cstr o(owner, "owner");
        detail::opt_cstr r(requester, "requester");
        detail::cstr_array rs(renewers, "renewer");
        ksasl_delegation_token *t = nullptr;
        check(ksasl_token_authority_create(get(), o.c_str(), r.c_str(), rs.data(), rs.size(),
                                           max_lifetime_ms.value_or(-1), now_ms, &t));
        return delegation_token(adopt, t);
    }

    /// Creates a token for `owner`, requested by the owner, without renewers.
    delegation_token create(std::string_view owner, std::int64_t now_ms) {
        return create(owner, std::nullopt, std::vector<std::string>(), std::nullopt, now_ms);
    }

    /// Renews the token whose HMAC is `hmac` for `caller` (its owner or a renewer): returns the
    /// new expiry, now + the period (`period_ms` when given and smaller than
    /// `delegation.token.expiry.time.ms`), capped by the token's maximum. Throws
    /// DELEGATION_TOKEN_NOT_FOUND, _OWNER_MISMATCH or _EXPIRED.
    std::int64_t renew(bytes_view hmac, std::string_view caller, std::optional<std::int64_t> period_ms,
                       std::int64_t now_ms) {
        detail::cstr c(caller, "caller");
        std::int64_t expiry = 0;
        check(ksasl_token_authority_renew(get(), hmac.data(), hmac.size(), c.c_str(), period_ms.value_or(-1), now_ms,
                                          &expiry));
        return expiry;
    }
    /// Renews `token` (by its HMAC) for `caller`.
    std::int64_t renew(const delegation_token_ref &token, std::string_view caller,
                       std::optional<std::int64_t> period_ms, std::int64_t now_ms) {
        return renew(token.hmac(), caller, period_ms, now_ms);
    }

    /// Expires the token whose HMAC is `hmac` for `caller`: a negative `period_ms` removes it
    /// now (and returns `now_ms`); otherwise its expiry becomes now + `period_ms`, capped by its
    /// maximum, and is returned. Errors as renew().
    std::int64_t expire(bytes_view hmac, std::string_view caller, std::int64_t period_ms, std::int64_t now_ms) {
        detail::cstr c(caller, "caller");
        std::int64_t expiry = 0;
        check(ksasl_token_authority_expire(get(), hmac.data(), hmac.size(), c.c_str(), period_ms, now_ms, &expiry));
        return expiry;
    }
    /// Expires `token` (by its HMAC) for `caller`.
    std::int64_t expire(const delegation_token_ref &token, std::string_view caller, std::int64_t period_ms,
                        std::int64_t now_ms) {
        return expire(token.hmac(), caller, period_ms, now_ms);
    }

    /// Every token, with its HMAC, in token-id order. Who may see what is the host's decision.
    delegation_token_list describe() {
        ksasl_delegation_token_list *l = nullptr;
        check(ksasl_token_authority_describe(get(), nullptr, 0, &l));
        return delegation_token_list(adopt, l);
    }
    /// The tokens owned by one of `owners` (an empty list describes nothing).
    delegation_token_list describe(const std::vector<std::string> &owners) {
        detail::cstr_array os(owners, "owner");
        ksasl_delegation_token_list *l = nullptr;
        check(ksasl_token_authority_describe(get(), os.data(), os.size(), &l));
        return delegation_token_list(adopt, l);
    }

    /// Removes every token expired at `now_ms`; returns their ids. Call at next_sweep_ms().
    std::vector<std::string> sweep(std::int64_t now_ms) {
        const char *const *ids = nullptr;
        std::size_t n = 0;
        check(ksasl_token_authority_sweep(get(), now_ms, &ids, &n));
        std::vector<std::string> removed;
        removed.reserve(n);
        for (std::size_t i = 0; i < n && ids != nullptr; i++) {
            removed.push_back(detail::str(ids[i]));
        }
        return removed;
    }

    /// When the next sweep is due (ms; 0: now, as before the first sweep).
    std::int64_t next_sweep_ms() const noexcept { return ksasl_token_authority_next_sweep_ms(get()); }

    /// The HMAC of `token_id` under the secret key (HMAC-SHA512; a secret), borrowed until the
    /// next call on this handle.
    bytes_view hmac(std::string_view token_id) {
        detail::cstr i(token_id, "token_id");
        const std::uint8_t *h = nullptr;
        std::size_t n = 0;
        check(ksasl_token_authority_hmac(get(), i.c_str(), &h, &n));
        return bytes_view(h, n);
    }

    /// Every token as a JSON array of records, for the host to persist (no secret inside).
    std::string export_records() {
        const char *json = nullptr;
        check(ksasl_token_authority_export_records(get(), &json));
        return detail::str(json);
    }

    /// Loads records written by export_records() (replacing tokens with the same id); returns
    /// how many. Nothing is loaded if a record is malformed (INVALID_CREDENTIAL_FORMAT).
    std::size_t import_records(std::string_view json) {
        detail::cstr j(json, "json");
        std::size_t loaded = 0;
        check(ksasl_token_authority_import_records(get(), j.c_str(), &loaded));
        return loaded;
    }

    /// Serves one delegation-token request (api key 38-41; `frame` without its length prefix)
    /// of a connection authenticated as `principal` ("TYPE:NAME" or a bare user name);
    /// `token_authenticated` when that connection logged in with a token (it then gets Kafka
    /// error 64). Returns the response frame, length prefix included (borrowed until the next
    /// call on this handle); failed operations are Kafka error codes inside it. A request that
    /// cannot be parsed throws (close the connection, as Kafka does).
    bytes_view handle_request(bytes_view frame, std::string_view principal, bool token_authenticated,
                              std::int64_t now_ms) {
        detail::cstr p(principal, "principal");
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_token_authority_handle_request(get(), frame.data(), frame.size(), p.c_str(),
                                                   token_authenticated ? 1 : 0, now_ms, &out, &len));
        return bytes_view(out, len);
    }

    /// handle_request() for a request received on `conn`: its session's principal, and whether
    /// it logged in with a token (server_connection::session()).
    bytes_view handle_request(bytes_view frame, const server_connection &conn, std::int64_t now_ms);

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_token_authority_last_error); }
};

/// ksasl_delegation_token_codec: builds delegation-token request frames and reads their responses (the
/// client side of api keys 38-41). Request frames include their length prefix; responses are
/// read without it (as client_connection::handle_frame returns application frames). Request frames
/// are borrowed until the next call on the codec. A response carrying a Kafka error throws the
/// matching ksasl code; kafka_error() then has Kafka's own code.
class delegation_token_codec {
    KSASL_HPP_HANDLE_BOILERPLATE(delegation_token_codec, ksasl_delegation_token_codec)

    /// ksasl_delegation_token_codec_new.
    delegation_token_codec() {
        ksasl_delegation_token_codec *p = nullptr;
        detail::check_new(ksasl_delegation_token_codec_new(&p));
        h_ = detail::handle<ksasl_delegation_token_codec, &ksasl_delegation_token_codec_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_delegation_token_codec_last_error(get())); }

    /// The Kafka error code of the last response parsed (0: none; e.g. 64 for
    /// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), for codes that share a ksasl result code.
    std::int16_t kafka_error() const noexcept { return ksasl_delegation_token_codec_kafka_error(get()); }

    /// A CreateDelegationToken request (`version` 0-3): `owner` ("TYPE:NAME", v3+; nullopt:
    /// the requester), the renewers, `max_lifetime_ms` (nullopt: the broker's default).
    bytes_view create_request(std::int16_t version, std::int32_t correlation_id,
                              std::optional<std::string_view> client_id, std::optional<std::string_view> owner,
                              const std::vector<std::string> &renewers,
                              std::optional<std::int64_t> max_lifetime_ms) {
        detail::opt_cstr c(client_id, "client_id"), o(owner, "owner");
        detail::cstr_array rs(renewers, "renewer");
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_delegation_token_codec_create_request(get(), version, correlation_id, c.c_str(), o.c_str(), rs.data(),
                                               rs.size(), max_lifetime_ms.value_or(-1), &out, &len));
        return bytes_view(out, len);
    }

    /// A RenewDelegationToken request (`version` 0-2) for the token with this HMAC;
    /// `renew_period_ms` nullopt asks for the broker's default period.
    bytes_view renew_request(std::int16_t version, std::int32_t correlation_id,
                             std::optional<std::string_view> client_id, bytes_view hmac,
                             std::optional<std::int64_t> renew_period_ms) {
        detail::opt_cstr c(client_id, "client_id");
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_delegation_token_codec_renew_request(get(), version, correlation_id, c.c_str(), hmac.data(), hmac.size(),
                                              renew_period_ms.value_or(-1), &out, &len));
        return bytes_view(out, len);
    }

    /// An ExpireDelegationToken request (`version` 0-2) for the token with this HMAC; a
    /// negative `expiry_period_ms` expires it at once.
    bytes_view expire_request(std::int16_t version, std::int32_t correlation_id,
                              std::optional<std::string_view> client_id, bytes_view hmac,
                              std::int64_t expiry_period_ms) {
        detail::opt_cstr c(client_id, "client_id");
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_delegation_token_codec_expire_request(get(), version, correlation_id, c.c_str(), hmac.data(), hmac.size(),
                                               expiry_period_ms, &out, &len));
        return bytes_view(out, len);
    }

    /// A DescribeDelegationToken request (`version` 0-3) for every token the caller may see.
    bytes_view describe_request(std::int16_t version, std::int32_t correlation_id,
                                std::optional<std::string_view> client_id) {
        detail::opt_cstr c(client_id, "client_id");
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_delegation_token_codec_describe_request(get(), version, correlation_id, c.c_str(), nullptr, 0, &out, &len));
        return bytes_view(out, len);
    }
    /// A DescribeDelegationToken request for the tokens of `owners` (an empty list asks for none).
    bytes_view describe_request(std::int16_t version, std::int32_t correlation_id,
                                std::optional<std::string_view> client_id, const std::vector<std::string> &owners) {
        detail::opt_cstr c(client_id, "client_id");
        detail::cstr_array os(owners, "owner");
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_delegation_token_codec_describe_request(get(), version, correlation_id, c.c_str(), os.data(), os.size(),
                                                 &out, &len));
        return bytes_view(out, len);
    }

    /// Reads a CreateDelegationToken response (`version` 0-3, without its length prefix).
    delegation_token parse_create_response(std::int16_t version, bytes_view frame) {
        ksasl_delegation_token *t = nullptr;
        check(ksasl_delegation_token_codec_parse_create_response(get(), version, frame.data(), frame.size(), &t));
        return delegation_token(adopt, t);
    }

    /// Reads a RenewDelegationToken or ExpireDelegationToken response (`version` 0-2): the
    /// token's new expiry.
    std::int64_t parse_expiry_response(std::int16_t version, bytes_view frame) {
        std::int64_t expiry = 0;
        check(ksasl_delegation_token_codec_parse_expiry_response(get(), version, frame.data(), frame.size(), &expiry));
        return expiry;
    }

    /// Reads a DescribeDelegationToken response (`version` 0-3).
    delegation_token_list parse_describe_response(std::int16_t version, bytes_view frame) {
        ksasl_delegation_token_list *l = nullptr;
        check(ksasl_delegation_token_codec_parse_describe_response(get(), version, frame.data(), frame.size(), &l));
        return delegation_token_list(adopt, l);
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_delegation_token_codec_last_error); }
};

/* ------------------------------------------------------------------------------------------ */
/* Callback arguments                                                                         */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_credential_request: what a credential callback is asked (valid during the callback).
class credential_request {
public:
    explicit credential_request(const ksasl_credential_request *r) noexcept : r_(r) {}
    /// The mechanism asking ("SCRAM-SHA-256", ...).
    std::string mechanism() const { return detail::str(ksasl_credential_request_mechanism(r_)); }
    /// The username (the token id for delegation-token logins).
    std::string username() const { return detail::str(ksasl_credential_request_username(r_)); }
    /// True for a delegation-token login (tokenauth=true).
    bool token_authenticated() const noexcept { return ksasl_credential_request_token_authenticated(r_) != 0; }
    const ksasl_credential_request *get() const noexcept { return r_; }

private:
    const ksasl_credential_request *r_;
};

/// ksasl_credential_answer: where a credential callback answers (valid during the callback).
class credential_answer {
public:
    explicit credential_answer(ksasl_credential_answer *a) noexcept : a_(a) {}

    /// ksasl_credential_answer_set: `value` is the password, the Kafka SCRAM string or the
    /// reason; `token_owner` marks a delegation token.
    void set(credential_answer_kind kind, std::optional<std::string_view> value,
             std::optional<std::int64_t> expiry_ms = std::nullopt,
             std::optional<std::string_view> token_owner = std::nullopt) {
        detail::opt_cstr v(value, "value"), o(token_owner, "token_owner");
        detail::check(ksasl_credential_answer_set(a_, static_cast<ksasl_credential_answer_kind>(kind), v.c_str(),
                                                  expiry_ms.value_or(-1), o.c_str()),
                      "ksasl_credential_answer_set");
    }
    /// The user's clear-text password.
    void password(std::string_view password, std::optional<std::int64_t> expiry_ms = std::nullopt) {
        set(credential_answer_kind::password, password, expiry_ms);
    }
    /// A SCRAM credential in Kafka's text form (`token_owner` for delegation tokens).
    void scram(std::string_view credential, std::optional<std::int64_t> expiry_ms = std::nullopt,
               std::optional<std::string_view> token_owner = std::nullopt) {
        set(credential_answer_kind::scram, credential, expiry_ms, token_owner);
    }
    /// No such user.
    void unknown() { set(credential_answer_kind::unknown, std::nullopt); }
    /// The store could not answer (the reason is kept from the client).
    void unavailable(std::string_view reason) { set(credential_answer_kind::unavailable, reason); }
    /// The answer will come later through the server's pull form (provide_credential).
    void later() { set(credential_answer_kind::later, std::nullopt); }

    ksasl_credential_answer *get() const noexcept { return a_; }

private:
    ksasl_credential_answer *a_;
};

/// A credential callback: look the request up and answer it. Throwing counts as a failed
/// lookup (the login fails as "credentials could not be verified").
using credential_callback = std::function<void(const credential_request &, credential_answer &)>;

/// ksasl_oauth_verdict: where a token-validation callback answers (valid during the callback).
class oauth_verdict {
public:
    explicit oauth_verdict(ksasl_oauth_verdict *v) noexcept : v_(v) {}
    /// Accepts the token: its principal and absolute expiry (ms).
    void accept(std::string_view principal, std::int64_t expiry_ms) {
        detail::cstr p(principal, "principal");
        detail::check(ksasl_oauth_verdict_accept(v_, p.c_str(), expiry_ms), "ksasl_oauth_verdict_accept");
    }
    /// Rejects the token; the reason stays on the server side.
    void reject(std::optional<std::string_view> reason = std::nullopt) {
        detail::opt_cstr r(reason, "reason");
        detail::check(ksasl_oauth_verdict_reject(v_, r.c_str()), "ksasl_oauth_verdict_reject");
    }
    ksasl_oauth_verdict *get() const noexcept { return v_; }

private:
    ksasl_oauth_verdict *v_;
};

/// A token-validation callback: judge `token` at `now_ms` with verdict.accept() or
/// verdict.reject(). Throwing (or giving no verdict) rejects the token.
using oauth_validator = std::function<void(std::string_view token, std::int64_t now_ms, oauth_verdict &verdict)>;

namespace detail {

struct credential_box {
    credential_callback fn;
};

inline int credential_trampoline(void *userdata, const ksasl_credential_request *request,
                                 ksasl_credential_answer *answer) noexcept {
    try {
        const credential_request r(request);
        credential_answer a(answer);
        static_cast<credential_box *>(userdata)->fn(r, a);
        return 0;
    } catch (...) {
        return 1;
    }
}

struct validator_box {
    oauth_validator fn;
};

inline int validator_trampoline(void *userdata, const char *token, std::int64_t now_ms,
                                ksasl_oauth_verdict *verdict) noexcept {
    try {
        oauth_verdict v(verdict);
        static_cast<validator_box *>(userdata)->fn(token ? std::string_view(token) : std::string_view(), now_ms, v);
        return 0;
    } catch (...) {
        return 1;
    }
}

} // namespace detail

/* ------------------------------------------------------------------------------------------ */
/* Tokens, validators, refresher, tracker                                                     */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_oauth_token: an OAUTHBEARER token.
class oauth_token {
    KSASL_HPP_HANDLE_BOILERPLATE(oauth_token, ksasl_oauth_token)

    /// ksasl_oauth_token_new_unsecured: an unsecured (alg: none) token as Kafka's development login
    /// builds it: claim `sub` = principal, `lifetime_seconds`, optional space-separated scope.
    static oauth_token new_unsecured(std::string_view principal, std::int64_t lifetime_seconds,
                               std::optional<std::string_view> scope, std::int64_t now_ms) {
        detail::cstr p(principal, "principal");
        detail::opt_cstr s(scope, "scope");
        ksasl_oauth_token *t = nullptr;
        detail::check_new(ksasl_oauth_token_new_unsecured(p.c_str(), lifetime_seconds, s.c_str(), now_ms, &t));
        return oauth_token(adopt, t);
    }

    /// The token text (a secret: do not log it), borrowed from the token (valid while it lives).
    std::string_view value() const noexcept {
        const char *v = ksasl_oauth_token_value(get());
        return v ? std::string_view(v) : std::string_view();
    }
    /// The token's absolute expiry (ms).
    std::int64_t expiry_ms() const noexcept { return ksasl_oauth_token_expiry_ms(get()); }
};

/// ksasl_aws_credentials: AWS credentials for AWS_MSK_IAM (an access key, its secret, and
/// for temporary credentials a session token and an expiry). The secret and the token are
/// wiped when the object is destroyed.
class aws_credentials {
    KSASL_HPP_HANDLE_BOILERPLATE(aws_credentials, ksasl_aws_credentials)

    /// ksasl_aws_credentials_new: `session_token` and `expires_at_ms` for temporary credentials.
    aws_credentials(std::string_view access_key_id, std::string_view secret_access_key,
                    std::optional<std::string_view> session_token = std::nullopt,
                    std::optional<std::int64_t> expires_at_ms = std::nullopt) {
        detail::cstr a(access_key_id, "access_key_id"), k(secret_access_key, "secret_access_key");
        detail::opt_cstr t(session_token, "session_token");
        ksasl_aws_credentials *p = nullptr;
        detail::check_new(ksasl_aws_credentials_new(a.c_str(), k.c_str(), t.c_str(), expires_at_ms.value_or(-1), &p));
        h_ = detail::handle<ksasl_aws_credentials, &ksasl_aws_credentials_free>(p);
    }
};

/// ksasl_aws_key_store: the access keys an AWS_MSK_IAM verifying server accepts, each with the
/// principal it authenticates as. Thread-safe; registries keep it alive.
class aws_key_store {
    KSASL_HPP_HANDLE_BOILERPLATE(aws_key_store, ksasl_aws_key_store)

    /// ksasl_aws_key_store_new: no keys.
    aws_key_store() {
        ksasl_aws_key_store *p = nullptr;
        detail::check_new(ksasl_aws_key_store_new(&p));
        h_ = detail::handle<ksasl_aws_key_store, &ksasl_aws_key_store_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_aws_key_store_last_error(get())); }

    /// Adds (or replaces) `credentials`, authenticating as `User:<principal>`.
    void add(const aws_credentials &credentials, std::string_view principal) {
        detail::cstr p(principal, "principal");
        check(ksasl_aws_key_store_add(get(), credentials.get(), p.c_str()));
    }

    /// Removes an access key; returns whether it was there.
    bool remove(std::string_view access_key_id) {
        detail::cstr a(access_key_id, "access_key_id");
        std::int32_t removed = 0;
        check(ksasl_aws_key_store_remove(get(), a.c_str(), &removed));
        return removed != 0;
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_aws_key_store_last_error); }
};

/// ksasl_jwks_validator: a signed-JWT validator (KIP-768) whose JWKS the host supplies.
class jwks_validator {
    KSASL_HPP_HANDLE_BOILERPLATE(jwks_validator, ksasl_jwks_validator)

    /// ksasl_jwks_validator_new, with Kafka's defaults (30 s skew, asymmetric algorithms only).
    explicit jwks_validator(std::optional<std::string_view> expected_issuer = std::nullopt,
                            std::optional<std::string_view> expected_audience = std::nullopt) {
        detail::opt_cstr i(expected_issuer, "expected_issuer"), a(expected_audience, "expected_audience");
        ksasl_jwks_validator *p = nullptr;
        detail::check_new(ksasl_jwks_validator_new(i.c_str(), a.c_str(), &p));
        h_ = detail::handle<ksasl_jwks_validator, &ksasl_jwks_validator_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_jwks_validator_last_error(get())); }

    /// Replaces the key set with a JWKS document fetched at `now_ms`.
    void set_jwks(std::string_view jwks_json, std::int64_t now_ms) {
        detail::cstr j(jwks_json, "jwks_json");
        detail::check(ksasl_jwks_validator_set_jwks(get(), j.c_str(), now_ms), get(),
                      &ksasl_jwks_validator_last_error);
    }

    /// When the JWKS should be fetched next (ms; INT64_MIN when none is loaded).
    std::int64_t next_refresh_ms() const noexcept { return ksasl_jwks_validator_next_refresh_ms(get()); }
};

/// ksasl_oidc_settings: the settings of a token login or a JWKS endpoint, by Kafka's property
/// names (sasl.oauthbearer.*, sasl.login.*, ssl.truststore.*, JAAS clientId/clientSecret/scope).
class oidc_settings {
    KSASL_HPP_HANDLE_BOILERPLATE(oidc_settings, ksasl_oidc_settings)

    /// ksasl_oidc_settings_new: nothing set.
    oidc_settings() {
        ksasl_oidc_settings *p = nullptr;
        detail::check_new(ksasl_oidc_settings_new(&p));
        h_ = detail::handle<ksasl_oidc_settings, &ksasl_oidc_settings_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_oidc_settings_last_error(get())); }

    /// ksasl_oidc_settings_set: one value by its name. An unknown name or a malformed value
    /// throws (KSASL_INVALID_CONFIG, naming the key, never quoting a secret) and changes nothing.
    oidc_settings &set(std::string_view name, std::string_view value) {
        detail::cstr n(name, "name"), v(value, "value");
        detail::check(ksasl_oidc_settings_set(get(), n.c_str(), v.c_str()), get(), &ksasl_oidc_settings_last_error);
        return *this;
    }
};

class refresher_ref;

/// ksasl_oidc_login: a token login at an identity provider's token endpoint, over HTTPS with
/// Kafka's retry plan. Thread-safe; fetch() and refresh() block while the provider answers.
class oidc_login {
    KSASL_HPP_HANDLE_BOILERPLATE(oidc_login, ksasl_oidc_login)

    /// ksasl_oidc_login_new: the settings are checked now (URL, client id, secret or key, CA).
    explicit oidc_login(const oidc_settings &settings) {
        ksasl_oidc_login *p = nullptr;
        detail::check_new(ksasl_oidc_login_new(settings.get(), &p));
        h_ = detail::handle<ksasl_oidc_login, &ksasl_oidc_login_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_oidc_login_last_error(get())); }

    /// ksasl_oidc_login_fetch: a token now. Throws KSASL_OIDC_REQUEST_REFUSED (with the
    /// provider's error_description), KSASL_OIDC_PROVIDER_UNAVAILABLE after the retries,
    /// KSASL_TLS_CERTIFICATE_REFUSED, KSASL_OIDC_BAD_RESPONSE.
    oauth_token fetch(std::int64_t now_ms) {
        ksasl_oauth_token *t = nullptr;
        check(ksasl_oidc_login_fetch(get(), now_ms, &t));
        return oauth_token(adopt, t);
    }

    /// ksasl_oidc_login_refresh: fetches and installs the token in `refresher`; call it when the
    /// refresher's poll() says a refresh is due. A failure is recorded in the refresher first
    /// (its current token stays in use while valid, a retry is planned), then thrown.
    inline void refresh(const refresher_ref &refresher, std::int64_t now_ms);

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_oidc_login_last_error); }
};

/// ksasl_jwks_endpoint: an identity provider's JWKS endpoint
/// (sasl.oauthbearer.jwks.endpoint.url) keeping a jwks_validator's keys fresh. Given to
/// mechanism_registry::add_oauthbearer_jwks_endpoint_server, it holds a token signed by a key it
/// does not know yet for one fetch instead of refusing it. Thread-safe.
class jwks_endpoint {
    KSASL_HPP_HANDLE_BOILERPLATE(jwks_endpoint, ksasl_jwks_endpoint)

    /// ksasl_jwks_endpoint_new: `settings` gives the HTTPS settings (ssl.truststore.*,
    /// sasl.login.*.timeout.ms); none: Mozilla's roots and ksasl's default timeouts.
    jwks_endpoint(std::string_view url, const jwks_validator &validator, const oidc_settings *settings = nullptr) {
        detail::cstr u(url, "url");
        ksasl_jwks_endpoint *p = nullptr;
        detail::check_new(ksasl_jwks_endpoint_new(u.c_str(), validator.get(), settings ? settings->get() : nullptr, &p));
        h_ = detail::handle<ksasl_jwks_endpoint, &ksasl_jwks_endpoint_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_jwks_endpoint_last_error(get())); }

    /// ksasl_jwks_endpoint_fetch: fetches now (blocking); returns the number of usable keys.
    std::size_t fetch(std::int64_t now_ms) {
        std::size_t keys = 0;
        detail::check(ksasl_jwks_endpoint_fetch(get(), now_ms, &keys), get(), &ksasl_jwks_endpoint_last_error);
        return keys;
    }

    /// ksasl_jwks_endpoint_poll: fetches if a fetch is due (blocking then); returns when to
    /// poll next (ms since the epoch). Call it from the host's refresh thread.
    std::int64_t poll(std::int64_t now_ms) const noexcept { return ksasl_jwks_endpoint_poll(get(), now_ms); }
};

/// The refresh callback: fetch a token and answer with refresher.set_token() or
/// refresher.set_token_failure() (now, or later from any thread while the refresher lives).
/// Throwing reports ksasl_refresher_set_token_failure with the exception's what().
using refresh_callback = std::function<void(refresher_ref refresher, std::int64_t now_ms)>;

/// A non-owning reference to a ksasl_refresher (what the refresh callback receives). Every
/// method of ksasl::refresher except ownership is here.
class refresher_ref {
public:
    explicit refresher_ref(ksasl_refresher *p) noexcept : p_(p) {}
    ksasl_refresher *get() const noexcept { return p_; }

    std::string last_error() const { return detail::str(ksasl_refresher_last_error(p_)); }

    /// Sets the refresh callback used by run_due() (replacing the previous one).
    void set_refresh_callback(refresh_callback cb);

    /// Runs the callback if a refresh is due; returns whether it ran.
    bool run_due(std::int64_t now_ms) {
        int ran = 0;
        check(ksasl_refresher_run_due(p_, now_ms, &ran));
        return ran != 0;
    }

    /// Pull form: true when the host must fetch a credential now (the request is then
    /// outstanding until answered).
    bool poll(std::int64_t now_ms) noexcept { return ksasl_refresher_poll(p_, now_ms) != 0; }

    /// Runs the refresh callback for a request already claimed by poll() or reported by
    /// tracker::poll() (without a callback the request fails).
    void invoke_callback(std::int64_t now_ms) { check(ksasl_refresher_invoke_callback(p_, now_ms)); }

    /// Installs AWS credentials (with their expiry) for AWS_MSK_IAM clients signing with this
    /// refresher; returns the new generation.
    std::uint64_t set_aws_credentials(const aws_credentials &credentials, std::string_view principal,
                                      std::int64_t now_ms) {
        detail::cstr p(principal, "principal");
        std::uint64_t generation = 0;
        check(ksasl_refresher_set_aws_credentials(p_, credentials.get(), p.c_str(), now_ms, &generation));
        return generation;
    }

    /// Installs a token: text, absolute expiry (ms), principal and SASL extensions.
    void set_token(std::string_view token, std::int64_t expiry_ms, std::string_view principal,
                   const std::vector<std::pair<std::string, std::string>> &extensions, std::int64_t now_ms) {
        detail::cstr t(token, "token"), p(principal, "principal");
        std::vector<detail::cstr> keep;
        keep.reserve(2 * extensions.size());
        std::vector<const char *> names, values;
        names.reserve(extensions.size());
        values.reserve(extensions.size());
        for (const auto &e : extensions) {
            keep.emplace_back(e.first, "extension name");
            names.push_back(keep.back().c_str());
            keep.emplace_back(e.second, "extension value");
            values.push_back(keep.back().c_str());
        }
        check(ksasl_refresher_set_token(p_, t.c_str(), expiry_ms, p.c_str(), names.empty() ? nullptr : names.data(),
                                        values.empty() ? nullptr : values.data(), extensions.size(), now_ms));
    }

    /// Installs a token without SASL extensions.
    void set_token(std::string_view token, std::int64_t expiry_ms, std::string_view principal, std::int64_t now_ms) {
        set_token(token, expiry_ms, principal, {}, now_ms);
    }

    /// Reports a failed refresh (the next attempt is due after the retry backoff).
    void set_token_failure(std::optional<std::string_view> reason, std::int64_t now_ms) {
        detail::opt_cstr r(reason, "reason");
        check(ksasl_refresher_set_token_failure(p_, r.c_str(), now_ms));
    }

    /// When a refresh is next due (ms; 0: now), or nullopt if none is scheduled (stopped, or
    /// a request is outstanding).
    std::optional<std::int64_t> next_deadline() const noexcept {
        return detail::opt_ms(ksasl_refresher_next_deadline(p_));
    }

    /// The generation of the current credential (0: none yet).
    std::uint64_t generation() const noexcept { return ksasl_refresher_generation(p_); }

    /// Installs a delegation token as the credential (for
    /// mechanism_registry::add_refreshing_password_clients):
    /// refreshed on Kafka's schedule before its expiry, never past its maximum; answer each
    /// refresh with a renewed token (delegation_token_ref::renewed) or a new one. Throws
    /// INVALID_CREDENTIAL_EXPIRY for a token whose expiry is not after `now_ms`.
    void set_delegation_token(const delegation_token_ref &token, std::int64_t now_ms) {
        check(ksasl_refresher_set_delegation_token(p_, token.get(), now_ms));
    }

protected:
    void check(ksasl_result rc) const { detail::check(rc, p_, &ksasl_refresher_last_error); }

    ksasl_refresher *p_ = nullptr;
};

namespace detail {

struct refresh_box {
    refresh_callback fn;
};

inline void refresh_trampoline(void *userdata, ksasl_refresher *refresher, std::int64_t now_ms) noexcept {
    const char *failure = nullptr;
    try {
        static_cast<refresh_box *>(userdata)->fn(refresher_ref(refresher), now_ms);
        return;
    } catch (const std::exception &e) {
        // Report with the message while the exception object is alive.
        (void)ksasl_refresher_set_token_failure(refresher, e.what(), now_ms);
        return;
    } catch (...) {
        failure = "the refresh callback threw an exception";
    }
    (void)ksasl_refresher_set_token_failure(refresher, failure, now_ms);
}

} // namespace detail

inline void refresher_ref::set_refresh_callback(refresh_callback cb) {
    if (!cb) {
        check(ksasl_refresher_set_refresh_callback(p_, nullptr, nullptr, nullptr));
        return;
    }
    auto box = std::make_unique<detail::refresh_box>(detail::refresh_box{std::move(cb)});
    // The library owns the box from here on, even when the call fails.
    check(ksasl_refresher_set_refresh_callback(p_, &detail::refresh_trampoline, box.release(),
                                               &detail::delete_box<detail::refresh_box>));
}

inline void oidc_login::refresh(const refresher_ref &refresher, std::int64_t now_ms) {
    check(ksasl_oidc_login_refresh(get(), refresher.get(), now_ms));
}

/// ksasl_refresher_config: the `sasl.login.refresh.*` and `sasl.login.retry.backoff.*` values of
/// refreshers, made by refresher_config_builder. Immutable; it may be shared.
class refresher_config {
    KSASL_HPP_HANDLE_BOILERPLATE(refresher_config, ksasl_refresher_config)
};

/// ksasl_refresher_config_builder: collects refresher settings (defaults are Kafka's); build()
/// checks them.
class refresher_config_builder {
    KSASL_HPP_HANDLE_BOILERPLATE(refresher_config_builder, ksasl_refresher_config_builder)

    /// ksasl_refresher_config_builder_new: Kafka's defaults.
    refresher_config_builder() {
        ksasl_refresher_config_builder *p = nullptr;
        detail::check_new(ksasl_refresher_config_builder_new(&p));
        h_ = detail::handle<ksasl_refresher_config_builder, &ksasl_refresher_config_builder_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_refresher_config_builder_last_error(get())); }

    /// sasl.login.refresh.window.factor (0.8, in [0.5, 1.0]).
    refresher_config_builder &set_window_factor(double v) {
        check(ksasl_refresher_config_builder_set_window_factor(get(), v));
        return *this;
    }
    /// sasl.login.refresh.window.jitter (0.05, in [0.0, 0.25]).
    refresher_config_builder &set_window_jitter(double v) {
        check(ksasl_refresher_config_builder_set_window_jitter(get(), v));
        return *this;
    }
    /// sasl.login.refresh.min.period.seconds (60, in [0, 900]).
    refresher_config_builder &set_min_period_seconds(std::int64_t v) {
        check(ksasl_refresher_config_builder_set_min_period_seconds(get(), v));
        return *this;
    }
    /// sasl.login.refresh.buffer.seconds (300, in [0, 3600]).
    refresher_config_builder &set_buffer_seconds(std::int64_t v) {
        check(ksasl_refresher_config_builder_set_buffer_seconds(get(), v));
        return *this;
    }
    /// sasl.login.retry.backoff.ms (10 000): the wait after a failed refresh.
    refresher_config_builder &set_retry_backoff_ms(std::int64_t v) {
        check(ksasl_refresher_config_builder_set_retry_backoff_ms(get(), v));
        return *this;
    }
    /// sasl.login.retry.backoff.max.ms (10 000): the wait doubles per failure up to it.
    refresher_config_builder &set_retry_backoff_max_ms(std::int64_t v) {
        check(ksasl_refresher_config_builder_set_retry_backoff_max_ms(get(), v));
        return *this;
    }

    /// ksasl_refresher_config_builder_build: checks every value (INVALID_CONFIG) and makes the
    /// configuration; the builder stays usable.
    refresher_config build() const {
        ksasl_refresher_config *c = nullptr;
        check(ksasl_refresher_config_builder_build(get(), &c));
        return refresher_config(adopt, c);
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_refresher_config_builder_last_error); }
};

/// ksasl_refresher: refreshes expiring credentials on Kafka's schedule (librdkafka's shape).
/// Thread-safe. Owns its handle; its methods are those of refresher_ref.
class refresher : public refresher_ref {
public:
    /// ksasl_refresher_new with Kafka's defaults.
    refresher() : refresher_ref(nullptr) { detail::check_new(ksasl_refresher_new(nullptr, &p_)); }
    /// ksasl_refresher_new with a configuration (which the refresher copies).
    explicit refresher(const refresher_config &config) : refresher_ref(nullptr) {
        detail::check_new(ksasl_refresher_new(config.get(), &p_));
    }
    refresher(adopt_t, ksasl_refresher *p) noexcept : refresher_ref(p) {}
    ~refresher() { ksasl_refresher_free(p_); }
    refresher(refresher &&o) noexcept : refresher_ref(std::exchange(o.p_, nullptr)) {}
    refresher &operator=(refresher &&o) noexcept {
        if (this != &o) {
            ksasl_refresher_free(p_);
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    refresher(const refresher &) = delete;
    refresher &operator=(const refresher &) = delete;

    /// A non-owning reference (valid while this object holds the handle).
    refresher_ref ref() const noexcept { return refresher_ref(p_); }
    /// Gives up ownership of the C handle (free it with ksasl_refresher_free).
    ksasl_refresher *release() noexcept { return std::exchange(p_, nullptr); }
    explicit operator bool() const noexcept { return p_ != nullptr; }
};

/// ksasl_tracker: tracks which connections use which credential generation.
class tracker {
    KSASL_HPP_HANDLE_BOILERPLATE(tracker, ksasl_tracker)

    /// ksasl_tracker_new: after a refresh, connections on the old credential are asked to
    /// re-authenticate spread over `spread_window_ms`.
    tracker(const refresher_ref &refresher, std::int64_t spread_window_ms) {
        ksasl_tracker *p = nullptr;
        detail::check_new(ksasl_tracker_new(refresher.get(), spread_window_ms, &p));
        h_ = detail::handle<ksasl_tracker, &ksasl_tracker_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_tracker_last_error(get())); }

    /// Records that connection `id` (re-)authenticated with credential `generation`, with the
    /// session of client_connection::session().
    void authenticated(std::uint64_t id, std::uint64_t generation, std::int64_t lifetime_ms,
                       std::optional<std::int64_t> reauth_at_ms, std::optional<std::int64_t> expiry_ms) {
        check(ksasl_tracker_authenticated(get(), id, generation, lifetime_ms, reauth_at_ms.value_or(-1),
                                          expiry_ms.value_or(-1)));
    }

    /// Forgets a closed connection.
    void forget(std::uint64_t id) { check(ksasl_tracker_forget(get(), id)); }

    /// The next instant to call poll() (0: now), or nullopt if none.
    std::optional<std::int64_t> next_deadline() const noexcept {
        return detail::opt_ms(ksasl_tracker_next_deadline(get()));
    }

    struct poll_result {
        bool refresh = false; ///< a credential must be fetched (answer the refresher)
        id_view ids;          ///< connections to re-authenticate (borrowed from the tracker)
    };

    /// What is due at `now_ms`.
    poll_result poll(std::int64_t now_ms) {
        int refresh = 0;
        const std::uint64_t *ids = nullptr;
        std::size_t n = 0;
        check(ksasl_tracker_poll(get(), now_ms, &refresh, &ids, &n));
        return poll_result{refresh != 0, id_view(ids, n)};
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_tracker_last_error); }
};

/* ------------------------------------------------------------------------------------------ */
/* Kerberos (GSSAPI)                                                                          */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_gssapi_available: whether the system's GSS-API library (MIT Kerberos,
/// libgssapi_krb5.so.2) loads; without it every GSSAPI call throws GSSAPI_UNAVAILABLE.
inline bool gssapi_available() noexcept { return ksasl_gssapi_available() != 0; }

/// ksasl_kerberos_login: the ticket-granting ticket GSSAPI clients use, from a keytab (a new
/// ticket at every login, no kinit) or from a credential cache (renewed in the cache at the
/// KDC at each later login), logged in again on Kafka's sasl.kerberos.ticket.renew.* schedule.
/// Thread-safe; registries using it keep it alive.
class kerberos_login {
    KSASL_HPP_HANDLE_BOILERPLATE(kerberos_login, ksasl_kerberos_login)

    /// ksasl_kerberos_login_new: with `keytab`, `principal` is required; without, the ticket in
    /// `ccache` (nullopt: the default cache). The schedule values (nullopt: Kafka's defaults
    /// 0.80, 0.05 and 60,000 ms) are checked here. Nothing is read until login() or poll().
    kerberos_login(std::optional<std::string_view> principal, std::optional<std::string_view> keytab,
                   std::optional<std::string_view> ccache = std::nullopt,
                   std::optional<double> window_factor = std::nullopt, std::optional<double> jitter = std::nullopt,
                   std::optional<std::int64_t> min_time_before_relogin_ms = std::nullopt) {
        detail::opt_cstr p(principal, "principal"), k(keytab, "keytab"), c(ccache, "ccache");
        ksasl_kerberos_login *h = nullptr;
        detail::check_new(ksasl_kerberos_login_new(p.c_str(), k.c_str(), c.c_str(), window_factor.value_or(-1.0),
                                                   jitter.value_or(-1.0), min_time_before_relogin_ms.value_or(-1),
                                                   &h));
        h_ = detail::handle<ksasl_kerberos_login, &ksasl_kerberos_login_free>(h);
    }

    std::string last_error() const { return detail::str(ksasl_kerberos_login_last_error(get())); }

    /// Logs in now (reads the keytab or cache, asks the KDC). On failure (KERBEROS_LOGIN_FAILED,
    /// GSSAPI_UNAVAILABLE) the previous ticket, if any, stays in use and a retry is planned.
    void login(std::int64_t now_ms) { check(ksasl_kerberos_login_login(get(), now_ms)); }

    /// Logs in if the schedule says so at `now_ms`; returns whether it did.
    bool poll(std::int64_t now_ms) {
        int logged_in = 0;
        check(ksasl_kerberos_login_poll(get(), now_ms, &logged_in));
        return logged_in != 0;
    }

    /// When the next login is due.
    std::optional<std::int64_t> next_login_ms() const noexcept {
        return detail::opt_ms(ksasl_kerberos_login_next_login_ms(get()));
    }
    /// When the current ticket-granting ticket ends (nullopt before a login).
    std::optional<std::int64_t> ticket_end_ms() const noexcept {
        return detail::opt_ms(ksasl_kerberos_login_ticket_end_ms(get()));
    }
    /// Successful logins so far.
    std::uint64_t count() const noexcept { return ksasl_kerberos_login_count(get()); }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_kerberos_login_last_error); }
};

/* ------------------------------------------------------------------------------------------ */
/* Host mechanisms (KIP-43 pluggability)                                                      */
/* ------------------------------------------------------------------------------------------ */

/// Thrown by a host_output setter that the library refused: a second message, an answer after
/// set_done / set_authenticated / set_pending, the other side's setter, an empty authorization
/// id... The library records the misuse in the output itself, so when this exception leaves a
/// mechanism's start() or step() the step fails (KSASL_HOST_MECHANISM_FAILED) with the
/// library's own description of what was wrong.
class host_output_error : public error {
public:
    host_output_error(std::uint32_t code, const std::string &detail, const ksasl_host_output *output)
        : error(code, detail), output_(output) {}
    /// The output whose setter refused the call.
    const ksasl_host_output *output() const noexcept { return output_; }

private:
    const ksasl_host_output *output_;
};

/// ksasl_host_output: where a host mechanism answers, borrowed (valid during the call that
/// received it). A client sets a message and/or set_done(); a server sets a challenge, or
/// set_authenticated() after an optional last message. The message, if any, comes first;
/// nothing may be set after the answer is complete. set_pending() replaces the answer: it
/// comes later, through a ksasl::host_answer given to the driver's resume().
///
/// A mechanism fails a step by throwing (what() becomes the error text) or by calling
/// set_error() and returning; the failure is reported as KSASL_HOST_MECHANISM_FAILED.
class host_output {
public:
    explicit host_output(ksasl_host_output *out) noexcept : o_(out) {}
    ksasl_host_output *get() const noexcept { return o_; }

    /// The message to send: the client's next message, or the server's challenge (or its last
    /// message, before set_authenticated()). May be empty. Once per answer.
    void set_message(bytes_view message) {
        check(ksasl_host_output_set_message(o_, message.data(), message.size()), "ksasl_host_output_set_message");
    }

    /// Client mechanisms only: the client side is complete (after the message, if any); the
    /// server's verdict is still to come.
    void set_done() { check(ksasl_host_output_set_done(o_), "ksasl_host_output_set_done"); }

    /// Server mechanisms only: the client is authenticated as `authorization_id` (UTF-8, not
    /// empty; the principal is User:<authorization_id>). `credential_expiry_ms`, the absolute
    /// expiry of the credential used, bounds the KIP-368 session (nullopt: none).
    void set_authenticated(std::string_view authorization_id,
                           std::optional<std::int64_t> credential_expiry_ms = std::nullopt) {
        detail::cstr a(authorization_id, "authorization_id");
        check(ksasl_host_output_set_authenticated(o_, a.c_str(), credential_expiry_ms.value_or(-1)),
              "ksasl_host_output_set_authenticated");
    }

    /// The answer comes later (work started outside the call: a signer, a worker thread...).
    /// `work` is the host's own pointer, given back by the driver's pending_work(). Nothing
    /// else may be set in the same answer.
    void set_pending(void *work = nullptr) {
        check(ksasl_host_output_set_pending(o_, work), "ksasl_host_output_set_pending");
    }

    /// Fails the step with `message` (kept on the host's side: a Kafka client is only sent
    /// Kafka's generic sentence), as HOST_MECHANISM_FAILED. The first failure is kept.
    void set_error(std::string_view message) { set_error(0, message); }

    /// As `set_error`, failing with one of the library's codes (for example
    /// `KSASL_UNKNOWN_USER` or `KSASL_INVALID_CREDENTIALS`; 0: HOST_MECHANISM_FAILED).
    void set_error(std::uint32_t code, std::string_view message) {
        detail::cstr m(message, "message");
        check(ksasl_host_output_set_error(o_, code, m.c_str()), "ksasl_host_output_set_error");
    }

protected:
    void check(ksasl_result rc, const char *function) const {
        if (rc != KSASL_OK) {
            throw host_output_error(rc,
                                    std::string(ksasl_result_name(rc)) + ": " + function +
                                        (o_ ? " refused the call (the step fails with the reason)"
                                            : ": the output is NULL (moved from?)"),
                                    o_);
        }
    }

    ksasl_host_output *o_ = nullptr;
};

/// An owned ksasl_host_output (ksasl_host_output_new / _free) for a late answer: after a
/// mechanism said set_pending(), the host writes the answer here, from any thread, with the
/// host_output setters (or by passing it as the host_output of a mechanism's start/step), and
/// hands it to the driver's resume(), which takes its content and leaves it empty for reuse.
/// A late failure is reported with set_error(). Move-only.
class host_answer : public host_output {
public:
    /// An answer for a client mechanism (client_connection::resume, client_exchange::resume).
    static host_answer for_client() { return host_answer(0); }
    /// An answer for a server mechanism (server_connection::resume, server_exchange::resume).
    static host_answer for_server() { return host_answer(1); }

    host_answer(adopt_t, ksasl_host_output *p) noexcept : host_output(p) {}
    ~host_answer() { ksasl_host_output_free(o_); }
    host_answer(host_answer &&o) noexcept : host_output(std::exchange(o.o_, nullptr)) {}
    host_answer &operator=(host_answer &&o) noexcept {
        if (this != &o) {
            ksasl_host_output_free(o_);
            o_ = std::exchange(o.o_, nullptr);
        }
        return *this;
    }
    host_answer(const host_answer &) = delete;
    host_answer &operator=(const host_answer &) = delete;

    /// Gives up ownership of the C handle (free it with ksasl_host_output_free).
    ksasl_host_output *release() noexcept { return std::exchange(o_, nullptr); }
    explicit operator bool() const noexcept { return o_ != nullptr; }

private:
    explicit host_answer(int server_side) : host_output(nullptr) {
        detail::check_new(ksasl_host_output_new(server_side, &o_));
    }
};

/// A client mechanism written in C++: one object per exchange, made by the factory given to
/// mechanism_registry::add_client_mechanism and destroyed when the exchange is freed. start() produces
/// the first message (Kafka always starts with one; it may be empty), step() answers a
/// challenge (borrowed for the call). A client that is not done must set a message.
///
/// An exchange is used by one thread at a time, but different exchanges (and the factory) may
/// run on different threads. A mechanism must not call into the connection or exchange that
/// is calling it. Exceptions fail the step (see host_output).
class host_client_mechanism {
public:
    virtual ~host_client_mechanism() = default;
    virtual void start(std::int64_t now_ms, host_output &out) = 0;
    virtual void step(bytes_view challenge, std::int64_t now_ms, host_output &out) = 0;

protected:
    host_client_mechanism() = default;
    host_client_mechanism(const host_client_mechanism &) = default;
    host_client_mechanism(host_client_mechanism &&) = default;
    host_client_mechanism &operator=(const host_client_mechanism &) = default;
    host_client_mechanism &operator=(host_client_mechanism &&) = default;
};

/// A server mechanism written in C++: one object per exchange (made when a client selects the
/// mechanism, or by ksasl::server_exchange), destroyed with the exchange. step() evaluates one client
/// message (borrowed for the call) and sets a challenge or authenticates the client. The host
/// looks credentials up itself: the registry's store or credential callback is not consulted.
/// Threads and exceptions as for host_client_mechanism.
class host_server_mechanism {
public:
    virtual ~host_server_mechanism() = default;
    virtual void step(bytes_view response, std::int64_t now_ms, host_output &out) = 0;

protected:
    host_server_mechanism() = default;
    host_server_mechanism(const host_server_mechanism &) = default;
    host_server_mechanism(host_server_mechanism &&) = default;
    host_server_mechanism &operator=(const host_server_mechanism &) = default;
    host_server_mechanism &operator=(host_server_mechanism &&) = default;
};

/// Makes the state of one client exchange. It may be called from several threads at once.
/// Returning nullptr or throwing fails the exchange (the library reports that the mechanism's
/// new_exchange callback returned NULL; the exception's text does not reach it).
using host_client_factory = std::function<std::unique_ptr<host_client_mechanism>()>;
/// Makes the state of one server exchange; as host_client_factory.
using host_server_factory = std::function<std::unique_ptr<host_server_mechanism>()>;

namespace detail {

struct host_client_box {
    host_client_factory factory;
};

struct host_server_box {
    host_server_factory factory;
};

/// Runs one mechanism call, turning every exception into the C contract: an error message in
/// the output and a non-zero return.
template <typename Call>
inline int host_call(ksasl_host_output *out, Call &&call) noexcept {
    try {
        host_output o(out);
        call(o);
        return 0;
    } catch (const host_output_error &e) {
        if (e.output() == out) {
            // The library recorded the misuse in this output: returning 0 lets it fail the step
            // with its own, precise description.
            return 0;
        }
        (void)ksasl_host_output_set_error(out, 0, e.what());
        return 1;
    } catch (const std::exception &e) {
        (void)ksasl_host_output_set_error(out, 0, e.what());
        return 1;
    } catch (...) {
        (void)ksasl_host_output_set_error(out, 0, "the mechanism threw an exception that is not a std::exception");
        return 1;
    }
}

inline void *host_client_new_exchange(void *userdata) noexcept {
    try {
        return static_cast<host_client_box *>(userdata)->factory().release();
    } catch (...) {
        return nullptr;
    }
}

inline int host_client_start(void *exchange, std::int64_t now_ms, ksasl_host_output *out) noexcept {
    host_client_mechanism *m = static_cast<host_client_mechanism *>(exchange);
    return host_call(out, [m, now_ms](host_output &o) { m->start(now_ms, o); });
}

inline int host_client_step(void *exchange, const std::uint8_t *challenge, std::size_t challenge_len,
                            std::int64_t now_ms, ksasl_host_output *out) noexcept {
    host_client_mechanism *m = static_cast<host_client_mechanism *>(exchange);
    return host_call(out, [m, challenge, challenge_len, now_ms](host_output &o) {
        m->step(bytes_view(challenge, challenge_len), now_ms, o);
    });
}

inline void host_client_dispose(void *exchange) noexcept {
    try {
        delete static_cast<host_client_mechanism *>(exchange);
    } catch (...) {
        // A throwing destructor: the memory is released all the same.
    }
}

inline void *host_server_new_exchange(void *userdata) noexcept {
    try {
        return static_cast<host_server_box *>(userdata)->factory().release();
    } catch (...) {
        return nullptr;
    }
}

inline int host_server_step(void *exchange, const std::uint8_t *response, std::size_t response_len,
                            std::int64_t now_ms, ksasl_host_output *out) noexcept {
    host_server_mechanism *m = static_cast<host_server_mechanism *>(exchange);
    return host_call(out, [m, response, response_len, now_ms](host_output &o) {
        m->step(bytes_view(response, response_len), now_ms, o);
    });
}

inline void host_server_dispose(void *exchange) noexcept {
    try {
        delete static_cast<host_server_mechanism *>(exchange);
    } catch (...) {
        // As host_client_dispose.
    }
}

} // namespace detail

/* ------------------------------------------------------------------------------------------ */
/* Registry                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_mechanism_registry: a set of client and server mechanisms by name, with their credentials.
class mechanism_registry {
    KSASL_HPP_HANDLE_BOILERPLATE(mechanism_registry, ksasl_mechanism_registry)

    /// ksasl_mechanism_registry_new: an empty registry.
    mechanism_registry() {
        ksasl_mechanism_registry *p = nullptr;
        detail::check_new(ksasl_mechanism_registry_new(&p));
        h_ = detail::handle<ksasl_mechanism_registry, &ksasl_mechanism_registry_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_mechanism_registry_last_error(get())); }

    /// Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers looking credentials up in
    /// `credentials` (the registry keeps the store alive).
    void add_password_servers(const credential_store &credentials) {
        check(ksasl_mechanism_registry_add_password_servers(get(), credentials.get()));
    }
    /// Adds the password servers without a store: they use the credential callback if one is
    /// set, and otherwise stop with a credential request (the pull form).
    void add_password_servers() { check(ksasl_mechanism_registry_add_password_servers(get(), nullptr)); }

    /// Sets a credential callback consulted by every server exchange of this registry
    /// (replacing a store given to add_password_servers).
    void set_credential_callback(credential_callback cb) {
        if (!cb) {
            check(ksasl_mechanism_registry_set_credential_callback(get(), nullptr, nullptr, nullptr));
            return;
        }
        auto box = std::make_unique<detail::credential_box>(detail::credential_box{std::move(cb)});
        // The library owns the box from here on, even when the call fails.
        check(ksasl_mechanism_registry_set_credential_callback(get(), &detail::credential_trampoline, box.release(),
                                                     &detail::delete_box<detail::credential_box>));
    }

    /// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password.
    void add_password_clients(std::string_view username, std::string_view password) {
        detail::cstr u(username, "username"), p(password, "password");
        check(ksasl_mechanism_registry_add_password_clients(get(), u.c_str(), p.c_str()));
    }

    /// Adds SCRAM clients that log in with a delegation token (id and base64 HMAC).
    void add_token_clients(std::string_view token_id, std::string_view token_hmac) {
        detail::cstr i(token_id, "token_id"), h(token_hmac, "token_hmac");
        check(ksasl_mechanism_registry_add_token_clients(get(), i.c_str(), h.c_str()));
    }

    /// Adds a GSSAPI client for the service `service_name`@`host` (sasl.kerberos.service.name
    /// and the broker's host name as its principal spells it) on `login`'s current ticket at
    /// every (re-)authentication; `mutual` also asks the broker to prove itself.
    void add_gssapi_client(const kerberos_login &login, std::string_view service_name, std::string_view host,
                           bool mutual = false) {
        detail::cstr s(service_name, "service_name"), h(host, "host");
        check(ksasl_mechanism_registry_add_gssapi_client(get(), login.get(), s.c_str(), h.c_str(), mutual ? 1 : 0));
    }

    /// Adds a GSSAPI server with the broker's `keytab` (nullopt: the default keytab) and
    /// `principal` (nullopt: any key of the keytab), `service_name` (nullopt: the principal's
    /// first part), sasl.kerberos.principal.to.local.rules as Kafka's list value (nullopt:
    /// DEFAULT), each session ending with the client's service ticket when
    /// `cap_session_at_ticket`. The keytab is read now.
    void add_gssapi_server(std::optional<std::string_view> keytab, std::optional<std::string_view> principal,
                           std::optional<std::string_view> service_name = std::nullopt,
                           std::optional<std::string_view> rules = std::nullopt, bool cap_session_at_ticket = true) {
        detail::opt_cstr k(keytab, "keytab"), p(principal, "principal"), s(service_name, "service_name"),
            r(rules, "rules");
        check(ksasl_mechanism_registry_add_gssapi_server(get(), k.c_str(), p.c_str(), s.c_str(), r.c_str(),
                                                         cap_session_at_ticket ? 1 : 0));
    }

    /// The number of client (`server` false) or server (`server` true) mechanisms.
    std::size_t mechanism_count(bool server) const noexcept {
        return ksasl_mechanism_registry_mechanism_count(get(), server ? 1 : 0);
    }

    /// Adds an OAUTHBEARER server with Kafka's unsecured validator (`required_scope`
    /// space-separated; `clock_skew_ms` >= 0).
    void add_oauthbearer_unsecured_server(std::optional<std::string_view> required_scope = std::nullopt,
                                          std::int64_t clock_skew_ms = 0) {
        detail::opt_cstr s(required_scope, "required_scope");
        check(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(get(), s.c_str(), clock_skew_ms));
    }

    /// Adds an OAUTHBEARER server validating signed JWTs with the keys of an identity
    /// provider's JWKS endpoint (the registry keeps it alive); a token of a key the endpoint
    /// does not know yet waits for one fetch.
    void add_oauthbearer_jwks_endpoint_server(const jwks_endpoint &endpoint) {
        check(ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server(get(), endpoint.get()));
    }
    /// Adds an OAUTHBEARER server validating signed JWTs with `validator`.
    void add_oauthbearer_jwks_server(const jwks_validator &validator) {
        check(ksasl_mechanism_registry_add_oauthbearer_jwks_server(get(), validator.get()));
    }

    /// Adds an OAUTHBEARER server whose tokens `validator` judges.
    void add_oauthbearer_callback_server(oauth_validator validator) {
        if (!validator) {
            check(ksasl_mechanism_registry_add_oauthbearer_callback_server(get(), nullptr, nullptr, nullptr));
            return;
        }
        auto box = std::make_unique<detail::validator_box>(detail::validator_box{std::move(validator)});
        // The library owns the box from here on, even when the call fails.
        check(ksasl_mechanism_registry_add_oauthbearer_callback_server(get(), &detail::validator_trampoline, box.release(),
                                                             &detail::delete_box<detail::validator_box>));
    }

    /// Adds an AWS_MSK_IAM client signing for the broker `host` in `region` with fixed
    /// `credentials`; `user_agent` nullopt: ksasl's; `key_order` "java" (the default,
    /// aws-msk-iam-auth's) or "kafka-python".
    void add_aws_msk_iam_client(std::string_view host, std::string_view region, const aws_credentials &credentials,
                                std::optional<std::string_view> user_agent = std::nullopt,
                                std::optional<std::string_view> key_order = std::nullopt) {
        detail::cstr h(host, "host"), r(region, "region");
        detail::opt_cstr u(user_agent, "user_agent"), k(key_order, "key_order");
        check(ksasl_mechanism_registry_add_aws_msk_iam_client(get(), h.c_str(), r.c_str(), credentials.get(), nullptr,
                                                              u.c_str(), k.c_str()));
    }
    /// The same, signing with what `refresher` holds at each (re-)authentication.
    void add_aws_msk_iam_client(std::string_view host, std::string_view region, const refresher_ref &refresher,
                                std::optional<std::string_view> user_agent = std::nullopt,
                                std::optional<std::string_view> key_order = std::nullopt) {
        detail::cstr h(host, "host"), r(region, "region");
        detail::opt_cstr u(user_agent, "user_agent"), k(key_order, "key_order");
        check(ksasl_mechanism_registry_add_aws_msk_iam_client(get(), h.c_str(), r.c_str(), nullptr, refresher.get(),
                                                              u.c_str(), k.c_str()));
    }
    /// Adds an AWS_MSK_IAM verifying server for `region`, for the listed host names (none: any).
    void add_aws_msk_iam_server(const aws_key_store &keys, std::string_view region,
                                const std::vector<std::string> &hosts = {}) {
        detail::cstr r(region, "region");
        std::vector<detail::cstr> keep;
        keep.reserve(hosts.size());
        std::vector<const char *> ptrs;
        for (const auto &h : hosts) {
            keep.emplace_back(h, "host");
            ptrs.push_back(keep.back().c_str());
        }
        check(ksasl_mechanism_registry_add_aws_msk_iam_server(get(), keys.get(), r.c_str(),
                                                              ptrs.empty() ? nullptr : ptrs.data(), ptrs.size()));
    }
    /// Adds an OAUTHBEARER client presenting MSK's presigned tokens for `region`.
    void add_msk_oauthbearer_client(std::string_view region, const aws_credentials &credentials,
                                    std::optional<std::string_view> user_agent = std::nullopt) {
        detail::cstr r(region, "region");
        detail::opt_cstr u(user_agent, "user_agent");
        check(ksasl_mechanism_registry_add_msk_oauthbearer_client(get(), r.c_str(), credentials.get(), nullptr,
                                                                  u.c_str()));
    }
    /// The same, signing with what `refresher` holds.
    void add_msk_oauthbearer_client(std::string_view region, const refresher_ref &refresher,
                                    std::optional<std::string_view> user_agent = std::nullopt) {
        detail::cstr r(region, "region");
        detail::opt_cstr u(user_agent, "user_agent");
        check(ksasl_mechanism_registry_add_msk_oauthbearer_client(get(), r.c_str(), nullptr, refresher.get(),
                                                                  u.c_str()));
    }
    /// Adds an OAUTHBEARER server accepting MSK's presigned tokens for `region`.
    void add_msk_oauthbearer_server(const aws_key_store &keys, std::string_view region) {
        detail::cstr r(region, "region");
        check(ksasl_mechanism_registry_add_msk_oauthbearer_server(get(), keys.get(), r.c_str()));
    }

    /// Adds an OAUTHBEARER client presenting the refresher's current token.
    void add_oauthbearer_client(const refresher_ref &refresher) {
        check(ksasl_mechanism_registry_add_oauthbearer_client(get(), refresher.get()));
    }

    /// Answers the delegation-token logins (`tokenauth=true`) of the password servers from
    /// `authority` (the registry keeps it alive); user logins still go to the store, the
    /// credential callback or the host (the pull form).
    void set_token_authority(const token_authority &authority) {
        check(ksasl_mechanism_registry_set_token_authority(get(), authority.get()));
    }
    /// Answers delegation-token logins as user logins again.
    void clear_token_authority() { check(ksasl_mechanism_registry_set_token_authority(get(), nullptr)); }

    /// Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients logging in with the refresher's
    /// current password credential, taken at every (re-)authentication: a delegation token
    /// installed with refresher_ref::set_delegation_token (SCRAM only).
    void add_refreshing_password_clients(const refresher_ref &refresher) {
        check(ksasl_mechanism_registry_add_refreshing_password_clients(get(), refresher.get()));
    }

    /// Registers (or replaces) a client mechanism written in C++ under `name` (1 to 20 of
    /// A-Z 0-9 - _): `factory` makes one host_client_mechanism per exchange. The library owns
    /// the factory from here on (also when the call fails) and destroys it once the registry,
    /// every configuration and connection made from it and every exchange are gone.
    void add_client_mechanism(std::string_view name, host_client_factory factory) {
        detail::cstr n(name, "name");
        if (!factory) {
            throw error(KSASL_NULL_ARGUMENT, "NULL_ARGUMENT: the mechanism factory is empty");
        }
        auto box = std::make_unique<detail::host_client_box>(detail::host_client_box{std::move(factory)});
        ksasl_client_mechanism_vtable vt{};
        vt.new_exchange = &detail::host_client_new_exchange;
        vt.start = &detail::host_client_start;
        vt.step = &detail::host_client_step;
        vt.dispose = &detail::host_client_dispose;
        // The library copies the table, and owns the box from here on, even when the call fails.
        check(ksasl_mechanism_registry_add_client_mechanism(get(), n.c_str(), &vt, box.release(),
                                                  &detail::delete_box<detail::host_client_box>));
    }

    /// Registers (or replaces) a server mechanism written in C++ under `name`; a server
    /// configuration made from the registry afterwards offers it next to the other mechanisms.
    /// Ownership of `factory` as for add_client_mechanism.
    void add_server_mechanism(std::string_view name, host_server_factory factory) {
        detail::cstr n(name, "name");
        if (!factory) {
            throw error(KSASL_NULL_ARGUMENT, "NULL_ARGUMENT: the mechanism factory is empty");
        }
        auto box = std::make_unique<detail::host_server_box>(detail::host_server_box{std::move(factory)});
        ksasl_server_mechanism_vtable vt{};
        vt.new_exchange = &detail::host_server_new_exchange;
        vt.step = &detail::host_server_step;
        vt.dispose = &detail::host_server_dispose;
        check(ksasl_mechanism_registry_add_server_mechanism(get(), n.c_str(), &vt, box.release(),
                                                  &detail::delete_box<detail::host_server_box>));
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_mechanism_registry_last_error); }
};

/* ------------------------------------------------------------------------------------------ */
/* One SASL exchange (no Kafka framing)                                                       */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_client_exchange: a client exchange for one mechanism.
class client_exchange {
    KSASL_HPP_HANDLE_BOILERPLATE(client_exchange, ksasl_client_exchange)

    /// ksasl_client_exchange_new: a client exchange for `mechanism` from the registry's clients.
    client_exchange(const mechanism_registry &reg, std::string_view mechanism) {
        detail::cstr m(mechanism, "mechanism");
        ksasl_client_exchange *p = nullptr;
        detail::check_new(ksasl_client_exchange_new(reg.get(), m.c_str(), &p));
        h_ = detail::handle<ksasl_client_exchange, &ksasl_client_exchange_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_client_exchange_last_error(get())); }

    struct step_result {
        bytes_view out;       ///< the bytes to send (borrowed; empty when none)
        bool done = false;    ///< the client side is complete (the server's verdict may follow)
        bool pending = false; ///< a host mechanism answers later: see pending_work(), resume()
    };

    /// Produces the first message.
    step_result start(std::int64_t now_ms) {
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        int done = 0;
        check(ksasl_client_exchange_start(get(), now_ms, &out, &len, &done));
        return make_result(out, len, done);
    }

    /// Evaluates a server challenge.
    step_result step(bytes_view challenge, std::int64_t now_ms) {
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        int done = 0;
        check(ksasl_client_exchange_step(get(), challenge.data(), challenge.size(), now_ms, &out, &len, &done));
        return make_result(out, len, done);
    }

    /// After a pending start or step: the work pointer the mechanism gave
    /// host_output::set_pending (nullptr when nothing is pending, or if it gave nullptr).
    void *pending_work() const noexcept { return ksasl_client_exchange_pending_work(get()); }

    /// Continues a pending start or step with the mechanism's late answer (made with
    /// host_answer::for_client(); its content is taken, a set_error() fails the exchange);
    /// outputs as start(). Throws WRONG_STATE when nothing is pending.
    step_result resume(host_answer &answer) {
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        int done = 0;
        check(ksasl_client_exchange_resume(get(), answer.get(), 0, &out, &len, &done));
        return make_result(out, len, done);
    }

    /// Reports that the server failed the exchange (with its message, or nullopt): always
    /// throws the resulting ksasl::error (what the client makes of the failure).
    [[noreturn]] void server_failed(std::optional<std::string_view> server_message) {
        detail::opt_cstr m(server_message, "server_message");
        const ksasl_result rc = ksasl_client_exchange_server_failed(get(), m.c_str());
        check(rc);
        throw error(KSASL_INTERNAL, "INTERNAL: ksasl_client_exchange_server_failed returned OK");
    }

private:
    static step_result make_result(const std::uint8_t *out, std::size_t len, int done) {
        // No message and not done: the mechanism answers later.
        return step_result{bytes_view(out, len), done != 0, out == nullptr && done == 0};
    }

    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_client_exchange_last_error); }
};

/// ksasl_server_exchange: a server exchange for one mechanism.
class server_exchange {
    KSASL_HPP_HANDLE_BOILERPLATE(server_exchange, ksasl_server_exchange)

    /// ksasl_server_exchange_new: a server exchange for `mechanism` (with the registry's store or
    /// credential callback).
    server_exchange(const mechanism_registry &reg, std::string_view mechanism) {
        detail::cstr m(mechanism, "mechanism");
        ksasl_server_exchange *p = nullptr;
        detail::check_new(ksasl_server_exchange_new(reg.get(), m.c_str(), &p));
        h_ = detail::handle<ksasl_server_exchange, &ksasl_server_exchange_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_server_exchange_last_error(get())); }

    /// After a failed step: the text a Kafka broker sends the client.
    std::string client_message() const { return detail::str(ksasl_server_exchange_client_message(get())); }

    /// connections.max.reauth.ms for the session the exchange grants (default 0: bounded by
    /// the credential's expiry only); see outcome().
    void set_max_reauth_ms(std::int64_t ms) { check(ksasl_server_exchange_set_max_reauth_ms(get(), ms)); }

    struct step_result {
        server_step_kind status = server_step_kind::challenge;
        bytes_view out; ///< the bytes to send (borrowed; empty when none)
    };

    /// Evaluates one client message. A failed authentication throws (see client_message()).
    step_result step(bytes_view response, std::int64_t now_ms) {
        ksasl_server_step_kind status = 0;
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_server_exchange_step(get(), response.data(), response.size(), now_ms, &status, &out, &len));
        return step_result{static_cast<server_step_kind>(status), bytes_view(out, len)};
    }

    /// After server_step_kind::pending: the work pointer the mechanism gave
    /// host_output::set_pending (nullptr when nothing is pending, or if it gave nullptr).
    void *pending_work() const noexcept { return ksasl_server_exchange_pending_work(get()); }

    /// Continues after server_step_kind::pending with the mechanism's late answer (made with
    /// host_answer::for_server(); its content is taken); outputs as step(). A late answer with
    /// set_error() fails the exchange (throws HOST_MECHANISM_FAILED; see client_message()).
    step_result resume(host_answer &answer, std::int64_t now_ms) {
        ksasl_server_step_kind status = 0;
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_server_exchange_resume(get(), answer.get(), 0, now_ms, &status, &out, &len));
        return step_result{static_cast<server_step_kind>(status), bytes_view(out, len)};
    }

    /// The pending credential request (after server_step_kind::need_credential).
    pending_credential credential_request() {
        const char *m = nullptr;
        const char *u = nullptr;
        int token = 0;
        check(ksasl_server_exchange_credential_request(get(), &m, &u, &token));
        return pending_credential{detail::str(m), detail::str(u), token != 0};
    }

    /// Answers the pending credential request (password, scram, unknown or unavailable) and
    /// continues; outputs as step().
    step_result provide_credential(credential_answer_kind kind, std::optional<std::string_view> value,
                                   std::optional<std::int64_t> expiry_ms,
                                   std::optional<std::string_view> token_owner, std::int64_t now_ms) {
        detail::opt_cstr v(value, "value"), o(token_owner, "token_owner");
        ksasl_server_step_kind status = 0;
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_server_exchange_provide_credential(get(), static_cast<ksasl_credential_answer_kind>(kind), v.c_str(),
                                              expiry_ms.value_or(-1), o.c_str(), now_ms, &status, &out, &len));
        return step_result{static_cast<server_step_kind>(status), bytes_view(out, len)};
    }

    struct outcome_info {
        std::string principal;      ///< "User:alice"
        std::string principal_name; ///< "alice"
        std::string mechanism;
        std::optional<std::int64_t> credential_expiry_ms;
        bool token_authenticated = false; ///< a delegation token was used
        std::int64_t session_lifetime_ms = 0; ///< the KIP-368 session granted (0: none)
        std::optional<std::int64_t> session_expiry_ms; ///< nullopt: never
    };

    /// After server_step_kind::done: who authenticated, how, and the session Kafka grants.
    outcome_info outcome() const {
        const char *p = nullptr;
        const char *n = nullptr;
        const char *m = nullptr;
        std::int64_t expiry = -1, lifetime = 0, session_expiry = -1;
        int token = 0;
        check(ksasl_server_exchange_outcome(get(), &p, &n, &m, &expiry, &token, &lifetime, &session_expiry));
        return outcome_info{detail::str(p),         detail::str(n), detail::str(m),
                            detail::opt_ms(expiry), token != 0,     lifetime,
                            detail::opt_ms(session_expiry)};
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_server_exchange_last_error); }
};

/* ------------------------------------------------------------------------------------------ */
/* Kafka connection drivers                                                                   */
/* ------------------------------------------------------------------------------------------ */

/// ksasl_client_config: an immutable configuration shared by client connections (made by
/// client_config_builder::build).
class client_config {
    KSASL_HPP_HANDLE_BOILERPLATE(client_config, ksasl_client_config)

    /// A metric over every connection of this configuration, by Kafka's name
    /// ("successful-reauthentication-total", "reauthentication-latency-avg", ...).
    double metric(std::string_view name, std::int64_t now_ms) const {
        detail::cstr n(name, "name");
        double v = 0;
        detail::check_new(ksasl_client_config_metric(get(), n.c_str(), now_ms, &v));
        return v;
    }
};

/// ksasl_client_config_builder: the settings of client connections; build() checks them and
/// makes a client_config. Setters return the builder, so they chain.
class client_config_builder {
    KSASL_HPP_HANDLE_BOILERPLATE(client_config_builder, ksasl_client_config_builder)

    /// ksasl_client_config_builder_new: connections using `mechanism` from the registry's
    /// clients (checked by build()).
    client_config_builder(const mechanism_registry &reg, std::string_view mechanism) {
        detail::cstr m(mechanism, "mechanism");
        ksasl_client_config_builder *p = nullptr;
        detail::check_new(ksasl_client_config_builder_new(reg.get(), m.c_str(), &p));
        h_ = detail::handle<ksasl_client_config_builder, &ksasl_client_config_builder_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_client_config_builder_last_error(get())); }

    /// client.id (nullopt: none, the default).
    client_config_builder &set_client_id(std::optional<std::string_view> client_id) {
        detail::opt_cstr c(client_id, "client_id");
        check(ksasl_client_config_builder_set_client_id(get(), c.c_str()));
        return *this;
    }

    /// The ApiVersions version sent first (0 like Kafka's Java client, to 5; librdkafka sends 3).
    client_config_builder &set_api_versions_version(std::int64_t version) {
        check(ksasl_client_config_builder_set_api_versions_version(get(), version));
        return *this;
    }

    /// Skips ApiVersions with the broker's known SaslHandshake version (0-1) and
    /// SaslAuthenticate version (0-2; nullopt: legacy framing, which SaslHandshake 0 needs).
    client_config_builder &set_known_versions(std::int64_t handshake, std::optional<std::int64_t> authenticate) {
        check(ksasl_client_config_builder_set_known_versions(get(), handshake, authenticate.value_or(-1)));
        return *this;
    }

    /// The software name and version sent in ApiVersions v3+ (default "ksasl" and its version).
    client_config_builder &set_software(std::string_view name, std::string_view version) {
        detail::cstr n(name, "name"), v(version, "version");
        check(ksasl_client_config_builder_set_software(get(), n.c_str(), v.c_str()));
        return *this;
    }

    /// When connections re-authenticate (default: as Kafka's client).
    client_config_builder &set_reauth_timing(reauth_timing timing) {
        check(ksasl_client_config_builder_set_reauth_timing(get(), static_cast<ksasl_reauth_timing>(timing)));
        return *this;
    }

    /// The smallest delay between an authentication and the next re-authentication (1000 ms).
    client_config_builder &set_reauth_min_delay_ms(std::int64_t ms) {
        check(ksasl_client_config_builder_set_reauth_min_delay_ms(get(), ms));
        return *this;
    }

    /// After a failed re-authentication: 0 (Kafka) fails the connection; a positive delay keeps
    /// the old session and retries after it, then twice it, then four times it.
    client_config_builder &set_reauth_retry_ms(std::int64_t ms) {
        check(ksasl_client_config_builder_set_reauth_retry_ms(get(), ms));
        return *this;
    }

    /// The largest SASL response accepted (512 KiB).
    client_config_builder &set_max_receive_size(std::int64_t bytes) {
        check(ksasl_client_config_builder_set_max_receive_size(get(), bytes));
        return *this;
    }

    /// ksasl_client_config_builder_build: checks every value (UNKNOWN_MECHANISM for a mechanism
    /// the registry lacks, INVALID_CONFIG otherwise) and makes the configuration; the builder
    /// stays usable.
    client_config build() const {
        ksasl_client_config *c = nullptr;
        check(ksasl_client_config_builder_build(get(), &c));
        return client_config(adopt, c);
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_client_config_builder_last_error); }
};

/// ksasl_client_connection: a client connection's SASL state (one thread at a time).
class client_connection {
    KSASL_HPP_HANDLE_BOILERPLATE(client_connection, ksasl_client_connection)

    /// ksasl_client_connection_new.
    explicit client_connection(const client_config &config) {
        ksasl_client_connection *p = nullptr;
        detail::check_new(ksasl_client_connection_new(config.get(), &p));
        h_ = detail::handle<ksasl_client_connection, &ksasl_client_connection_free>(p);
    }

    /// The detail of the last failure (also of a reauth_failed event).
    std::string last_error() const { return detail::str(ksasl_client_connection_last_error(get())); }

    /// Starts the initial authentication.
    void start(std::int64_t now_ms) { check(ksasl_client_connection_start(get(), now_ms)); }

    /// The bytes to write to the socket (length-prefixed frames; borrowed; empty if none).
    bytes_view transmit() {
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        check(ksasl_client_connection_transmit(get(), &out, &len));
        return bytes_view(out, len);
    }

    struct frame_result {
        client_event event = client_event::continue_;
        bytes_view app_frame; ///< for client_event::application (borrowed)
    };

    /// Handles one received frame (without its length prefix). A fatal authentication failure
    /// throws (close the connection).
    frame_result handle_frame(bytes_view frame, std::int64_t now_ms) {
        ksasl_client_event ev = 0;
        const std::uint8_t *app = nullptr;
        std::size_t app_len = 0;
        check(ksasl_client_connection_handle_frame(get(), frame.data(), frame.size(), now_ms, &ev, &app, &app_len));
        frame_result r;
        r.event = static_cast<client_event>(ev);
        if (r.event == client_event::application) {
            r.app_frame = bytes_view(app, app_len);
        }
        return r;
    }

    /// After client_event::pending: the work pointer the mechanism gave
    /// host_output::set_pending (nullptr when nothing is pending, or if it gave nullptr).
    void *pending_work() const noexcept { return ksasl_client_connection_pending_work(get()); }

    /// Continues after client_event::pending with the mechanism's late answer (made with
    /// host_answer::for_client(); its content is taken); results and errors as handle_frame().
    /// Write transmit() afterwards. Throws WRONG_STATE (nothing changes) when nothing is pending.
    frame_result resume(host_answer &answer, std::int64_t now_ms) {
        ksasl_client_event ev = 0;
        const std::uint8_t *app = nullptr;
        std::size_t app_len = 0;
        check(ksasl_client_connection_resume(get(), answer.get(), 0, now_ms, &ev, &app, &app_len));
        frame_result r;
        r.event = static_cast<client_event>(ev);
        if (r.event == client_event::application) {
            r.app_frame = bytes_view(app, app_len);
        }
        return r;
    }

    /// Reports that the broker closed the connection: always throws the error to report.
    [[noreturn]] void closed(std::int64_t now_ms) {
        check(ksasl_client_connection_closed(get(), now_ms));
        throw error(KSASL_INTERNAL, "INTERNAL: ksasl_client_connection_closed returned OK");
    }

    /// The next instant to call handle_timeout(), or nullopt.
    std::optional<std::int64_t> next_deadline() const noexcept {
        return detail::opt_ms(ksasl_client_connection_next_deadline(get()));
    }

    /// Starts a re-authentication if one is due; returns whether it did.
    bool handle_timeout(std::int64_t now_ms) {
        int started = 0;
        check(ksasl_client_connection_handle_timeout(get(), now_ms, &started));
        return started != 0;
    }

    /// Starts a re-authentication now (for example when a tracker asks for one after a
    /// credential refresh); the connection must be authenticated and idle. Returns false when
    /// it was deferred (brokers refuse one less than a second after the previous one): it is
    /// then scheduled for 1.1 s after the previous start (see next_deadline()).
    bool start_reauthentication(std::int64_t now_ms) {
        int started = 0;
        check(ksasl_client_connection_start_reauthentication(get(), now_ms, &started));
        return started != 0;
    }

    /// True if a re-authentication is due at `now_ms` (for synchronous clients).
    bool reauth_pending(std::int64_t now_ms) const noexcept {
        return ksasl_client_connection_reauth_pending(get(), now_ms) != 0;
    }

    /// Call before sending an application request: true to send it now, false to hold it
    /// until re-authentication completes (a due re-authentication starts here).
    bool before_request(std::int64_t now_ms) {
        int send_now = 0;
        check(ksasl_client_connection_before_request(get(), now_ms, &send_now));
        return send_now != 0;
    }

    struct session_info {
        std::int64_t lifetime_ms = 0;             ///< granted by the broker (0: none)
        std::optional<std::int64_t> reauth_at_ms; ///< when the client re-authenticates
        std::optional<std::int64_t> expiry_ms;    ///< when the session expires
    };

    /// The session (throws WRONG_STATE before authentication).
    session_info session() const {
        std::int64_t lifetime = 0, reauth = -1, expiry = -1;
        check(ksasl_client_connection_session(get(), &lifetime, &reauth, &expiry));
        return session_info{lifetime, detail::opt_ms(reauth), detail::opt_ms(expiry)};
    }

    /// True while a re-authentication is in progress.
    bool is_reauthenticating() const noexcept { return ksasl_client_connection_is_reauthenticating(get()) != 0; }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_client_connection_last_error); }
};

/// ksasl_server_config: an immutable configuration of server connections (one listener; made
/// by server_config_builder::build).
class server_config {
    KSASL_HPP_HANDLE_BOILERPLATE(server_config, ksasl_server_config)

    /// A metric over every connection of this configuration, by Kafka's name, as of `now_ms`.
    double metric(std::string_view name, std::int64_t now_ms) const {
        detail::cstr n(name, "name");
        double v = 0;
        detail::check_new(ksasl_server_config_metric(get(), n.c_str(), now_ms, &v));
        return v;
    }
};

/// ksasl_server_config_builder: the settings of a listener's connections; build() checks them
/// and makes a server_config. Setters return the builder, so they chain.
class server_config_builder {
    KSASL_HPP_HANDLE_BOILERPLATE(server_config_builder, ksasl_server_config_builder)

    /// ksasl_server_config_builder_new: enables every server mechanism the registry has now.
    explicit server_config_builder(const mechanism_registry &reg) {
        ksasl_server_config_builder *p = nullptr;
        detail::check_new(ksasl_server_config_builder_new(reg.get(), &p));
        h_ = detail::handle<ksasl_server_config_builder, &ksasl_server_config_builder_free>(p);
    }

    std::string last_error() const { return detail::str(ksasl_server_config_builder_last_error(get())); }

    /// sasl.enabled.mechanisms: the mechanisms offered, in this order.
    server_config_builder &set_enabled_mechanisms(const std::vector<std::string> &mechanisms) {
        detail::cstr_array ms(mechanisms, "mechanism");
        check(ksasl_server_config_builder_set_enabled_mechanisms(get(), ms.data(), ms.size()));
        return *this;
    }

    /// connections.max.reauth.ms for every mechanism (default 0: none).
    server_config_builder &set_max_reauth_ms(std::int64_t ms) {
        check(ksasl_server_config_builder_set_max_reauth_ms(get(), nullptr, ms));
        return *this;
    }
    /// connections.max.reauth.ms for one mechanism (listener.name.*.<mechanism>.*).
    server_config_builder &set_max_reauth_ms(std::string_view mechanism, std::int64_t ms) {
        detail::cstr m(mechanism, "mechanism");
        check(ksasl_server_config_builder_set_max_reauth_ms(get(), m.c_str(), ms));
        return *this;
    }

    /// Accepts a raw GSS-API token as a connection's first packet (pre-0.10 clients, KIP-43;
    /// off by default, as in Kafka 4.x).
    server_config_builder &set_legacy_gssapi(bool on) {
        check(ksasl_server_config_builder_set_legacy_gssapi(get(), on ? 1 : 0));
        return *this;
    }

    /// sasl.server.max.receive.size (512 KiB): the largest authentication frame accepted.
    server_config_builder &set_max_receive_size(std::int64_t bytes) {
        check(ksasl_server_config_builder_set_max_receive_size(get(), bytes));
        return *this;
    }

    /// connection.failed.authentication.delay.ms (100).
    server_config_builder &set_failed_authentication_delay_ms(std::int64_t ms) {
        check(ksasl_server_config_builder_set_failed_authentication_delay_ms(get(), ms));
        return *this;
    }

    /// After a failed re-authentication: 0 (Kafka) closes; a positive delay keeps the session.
    server_config_builder &set_reauth_retry_ms(std::int64_t ms) {
        check(ksasl_server_config_builder_set_reauth_retry_ms(get(), ms));
        return *this;
    }

    /// Adds (or replaces) an API of the ApiVersions response.
    server_config_builder &set_api_version(std::int64_t api_key, std::int64_t min_version, std::int64_t max_version) {
        check(ksasl_server_config_builder_set_api_version(get(), api_key, min_version, max_version));
        return *this;
    }

    /// Adds the delegation-token APIs (38-41) to the ApiVersions response, for a listener that
    /// serves them with token_authority::handle_request: every version the codec speaks, or
    /// (`kafka4`) what an Apache Kafka 4 broker advertises.
    server_config_builder &add_token_api_versions(bool kafka4 = false) {
        check(ksasl_server_config_builder_add_token_api_versions(get(), kafka4 ? 1 : 0));
        return *this;
    }

    /// ksasl_server_config_builder_build: checks every value (INVALID_CONFIG, naming the value)
    /// and makes the configuration; the builder stays usable.
    server_config build() const {
        ksasl_server_config *c = nullptr;
        check(ksasl_server_config_builder_build(get(), &c));
        return server_config(adopt, c);
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_server_config_builder_last_error); }
};

/// ksasl_server_connection: a server connection's SASL state (one thread at a time).
class server_connection {
    KSASL_HPP_HANDLE_BOILERPLATE(server_connection, ksasl_server_connection)

    /// ksasl_server_connection_new.
    explicit server_connection(const server_config &config) {
        ksasl_server_connection *p = nullptr;
        detail::check_new(ksasl_server_connection_new(config.get(), &p));
        h_ = detail::handle<ksasl_server_connection, &ksasl_server_connection_free>(p);
    }

    /// The detail of the last failure (also set for fail_at and close_now; see reason()).
    std::string last_error() const { return detail::str(ksasl_server_connection_last_error(get())); }

    struct output {
        server_action action = server_action::continue_;
        bytes_view out;                          ///< frames to write (borrowed)
        std::optional<std::int64_t> deadline_ms; ///< for server_action::fail_at
    };

    /// Handles one authentication frame (without its length prefix).
    output handle_frame(bytes_view frame, std::int64_t now_ms) {
        ksasl_server_action action = 0;
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        std::int64_t deadline = -1;
        check(ksasl_server_connection_handle_frame(get(), frame.data(), frame.size(), now_ms, &action, &out, &len,
                                             &deadline));
        return make_output(action, out, len, deadline);
    }

    /// After server_action::pending: the work pointer the mechanism gave
    /// host_output::set_pending (nullptr when nothing is pending, or if it gave nullptr).
    void *pending_work() const noexcept { return ksasl_server_connection_pending_work(get()); }

    /// Continues after server_action::pending with the mechanism's late answer (made with
    /// host_answer::for_server(); its content is taken); outputs as handle_frame(). A late
    /// answer with set_error() fails the exchange as a failed step does (server_action::fail_at
    /// with Kafka's response). Throws WRONG_STATE (nothing changes) when nothing is pending.
    output resume(host_answer &answer, std::int64_t now_ms) {
        ksasl_server_action action = 0;
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        std::int64_t deadline = -1;
        check(ksasl_server_connection_resume(get(), answer.get(), 0, now_ms, &action, &out, &len, &deadline));
        return make_output(action, out, len, deadline);
    }

    /// The pending credential request (after server_action::need_credential).
    pending_credential credential_request() {
        const char *m = nullptr;
        const char *u = nullptr;
        int token = 0;
        check(ksasl_server_connection_credential_request(get(), &m, &u, &token));
        return pending_credential{detail::str(m), detail::str(u), token != 0};
    }

    /// Answers the pending credential request and continues; outputs as handle_frame().
    output provide_credential(credential_answer_kind kind, std::optional<std::string_view> value,
                              std::optional<std::int64_t> expiry_ms, std::optional<std::string_view> token_owner,
                              std::int64_t now_ms) {
        detail::opt_cstr v(value, "value"), o(token_owner, "token_owner");
        ksasl_server_action action = 0;
        const std::uint8_t *out = nullptr;
        std::size_t len = 0;
        std::int64_t deadline = -1;
        check(ksasl_server_connection_provide_credential(get(), static_cast<ksasl_credential_answer_kind>(kind), v.c_str(),
                                                   expiry_ms.value_or(-1), o.c_str(), now_ms, &action, &out, &len,
                                                   &deadline));
        return make_output(action, out, len, deadline);
    }

    /// The per-request gate of an authenticated connection. Allocation-free.
    gate_verdict gate(std::int16_t api_key, std::int64_t now_ms) const noexcept {
        return static_cast<gate_verdict>(ksasl_server_connection_gate(get(), api_key, now_ms));
    }

    /// True when authenticated and no exchange is in progress.
    bool is_ready() const noexcept { return ksasl_server_connection_is_ready(get()) != 0; }

    struct session_info {
        std::string principal;                 ///< "User:alice"
        std::string mechanism;                 ///< the mechanism it logged in with
        bool token_authenticated = false;      ///< with a delegation token (`tokenauth`)
        std::int64_t lifetime_ms = 0;          ///< sent to the client
        std::optional<std::int64_t> expiry_ms; ///< nullopt: never
    };

    /// The authenticated session (throws WRONG_STATE before authentication).
    session_info session() const {
        const char *p = nullptr;
        const char *m = nullptr;
        int token = 0;
        std::int64_t lifetime = 0, expiry = -1;
        check(ksasl_server_connection_session(get(), &p, &m, &token, &lifetime, &expiry));
        return session_info{detail::str(p), detail::str(m), token != 0, lifetime, detail::opt_ms(expiry)};
    }

    struct reason_info {
        std::uint32_t code = KSASL_OK; ///< a KSASL_* code (KSASL_OK: none)
        std::string message;           ///< the detail kept on the broker's side
        std::string client_text;       ///< the text Kafka sent the client ("" when none)
    };

    /// Why the last action ends or fails something (server_action::fail_at, close_now,
    /// reauth_failed); code KSASL_OK when it had no reason. Does not throw for the reason.
    reason_info reason() const {
        const char *m = nullptr;
        const char *t = nullptr;
        if (get() == nullptr) {
            check(KSASL_NULL_ARGUMENT);
        }
        const ksasl_result rc = ksasl_server_connection_error(get(), &m, &t);
        return reason_info{rc, detail::str(m), detail::str(t)};
    }

private:
    static output make_output(ksasl_server_action action, const std::uint8_t *out, std::size_t len,
                              std::int64_t deadline) {
        output o;
        o.action = static_cast<server_action>(action);
        o.out = bytes_view(out, len);
        if (o.action == server_action::fail_at) {
            o.deadline_ms = deadline;
        }
        return o;
    }

    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_server_connection_last_error); }
};

inline bytes_view token_authority::handle_request(bytes_view frame, const server_connection &conn,
                                                  std::int64_t now_ms) {
    const server_connection::session_info session = conn.session();
    return handle_request(frame, session.principal, session.token_authenticated, now_ms);
}

/// ksasl_client_setup: a client built from its `.properties` (Kafka's or librdkafka's names):
/// its configuration, the refresher behind OAUTHBEARER tokens and what the host still has to
/// do. An invalid configuration throws ksasl::error (INVALID_CONFIG, naming the key, never a
/// secret).
class client_setup {
    KSASL_HPP_HANDLE_BOILERPLATE(client_setup, ksasl_client_setup)

    /// ksasl_client_setup_new: from the text (or bytes) of a `.properties` file.
    static client_setup from_properties(std::string_view text) {
        ksasl_client_setup *p = nullptr;
        detail::check_new(ksasl_client_setup_new(text.data(), text.size(), &p));
        return client_setup(adopt, p);
    }

    /// ksasl_client_setup_new_from_pairs: from property names and values, in order.
    static client_setup from_pairs(const std::vector<std::pair<std::string, std::string>> &pairs) {
        std::vector<std::string> keys, values;
        keys.reserve(pairs.size());
        values.reserve(pairs.size());
        for (const auto &kv : pairs) {
            keys.push_back(kv.first);
            values.push_back(kv.second);
        }
        detail::cstr_array k(keys, "key"), v(values, "value");
        ksasl_client_setup *p = nullptr;
        detail::check_new(ksasl_client_setup_new_from_pairs(k.data(), v.data(), k.size(), &p));
        return client_setup(adopt, p);
    }

    std::string last_error() const { return detail::str(ksasl_client_setup_last_error(get())); }

    /// The connection configuration (shared with the setup), or nullopt (GSSAPI until
    /// with_registry()).
    std::optional<client_config> config() const {
        ksasl_client_config *c = nullptr;
        check(ksasl_client_setup_config(get(), &c));
        return c ? std::optional<client_config>(client_config(adopt, c)) : std::nullopt;
    }

    /// For OAUTHBEARER: the refresher whose token the configuration's client presents (the
    /// same refresher, owned jointly), or nullopt. Run it (refresher_ref::run_due at
    /// next_deadline()), or for client_login::host_token answer it with set_token().
    std::optional<ksasl::refresher> refresher() const {
        ksasl_refresher *r = nullptr;
        check(ksasl_client_setup_refresher(get(), &r));
        return r ? std::optional<ksasl::refresher>(std::in_place, adopt, r) : std::nullopt;
    }

    /// What the host still has to do.
    client_login login() const {
        const ksasl_client_login l = ksasl_client_setup_login(get());
        if (l == 0) {
            throw error(KSASL_NULL_ARGUMENT, "NULL_ARGUMENT: the handle is NULL (moved from?)");
        }
        return static_cast<client_login>(l);
    }

    /// sasl.mechanism (librdkafka: sasl.mechanisms), e.g. "SCRAM-SHA-256".
    std::string mechanism() const { return detail::str(ksasl_client_setup_mechanism(get())); }
    /// security.protocol: "SASL_PLAINTEXT" or "SASL_SSL".
    std::string security_protocol() const { return detail::str(ksasl_client_setup_security_protocol(get())); }

    /// For client_login::kerberos: the broker's service name (nullopt otherwise).
    std::optional<std::string> kerberos_service_name() const {
        return opt(ksasl_client_setup_kerberos_service_name(get()));
    }
    /// For client_login::kerberos: the client principal, if configured.
    std::optional<std::string> kerberos_principal() const { return opt(ksasl_client_setup_kerberos_principal(get())); }
    /// For client_login::kerberos: the keytab, if configured.
    std::optional<std::string> kerberos_keytab() const { return opt(ksasl_client_setup_kerberos_keytab(get())); }

    /// The `sasl.*` and `ksasl.*` names the library does not know (for the host to log).
    std::vector<std::string> unknown() const {
        std::vector<std::string> out(ksasl_client_setup_unknown_count(get()));
        for (std::size_t i = 0; i < out.size(); i++) {
            out[i] = detail::str(ksasl_client_setup_unknown(get(), i));
        }
        return out;
    }

    /// The settings that have no effect as configured, one sentence each.
    std::vector<std::string> warnings() const {
        std::vector<std::string> out(ksasl_client_setup_warning_count(get()));
        for (std::size_t i = 0; i < out.size(); i++) {
            out[i] = detail::str(ksasl_client_setup_warning(get(), i));
        }
        return out;
    }

    /// ksasl_client_setup_with_registry: builds the configuration again for the setup's
    /// mechanism from the registry's client mechanisms (for GSSAPI, once a GSSAPI client is
    /// added). Throws (UNKNOWN_MECHANISM when the registry lacks it) and changes nothing then.
    void with_registry(const mechanism_registry &registry) {
        check(ksasl_client_setup_with_registry(get(), registry.get()));
    }

private:
    static std::optional<std::string> opt(const char *p) { return p ? std::optional<std::string>(p) : std::nullopt; }
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_client_setup_last_error); }
};

/// ksasl_server_setup: a broker listener built from `server.properties` (Kafka's names): its
/// server_config (mechanisms, users, session lifetimes and limits as the file says), the JWKS
/// endpoints that configuration validates OAUTHBEARER tokens with, the token_authority of its
/// delegation tokens (with `delegation.token.secret.key`), and where it listens. Everything it
/// hands out is shared with it and outlives it. An invalid configuration throws ksasl::error
/// (INVALID_CONFIG, naming the key, never a secret); a GSSAPI listener's keytab is read when
/// the setup is built (a missing one throws, naming the listener).
class server_setup {
    KSASL_HPP_HANDLE_BOILERPLATE(server_setup, ksasl_server_setup)

    /// One API of the host's (listed in the listener's ApiVersions answer).
    struct api_version {
        std::int64_t api_key = 0;
        std::int64_t min_version = 0;
        std::int64_t max_version = 0;
    };

    /// ksasl_server_setup_new: the listener `listener` of a `server.properties` text or bytes
    /// (Kafka's names ignore case; nullopt: the file's only SASL listener). SCRAM users come
    /// from `scram_store` (nullptr: none; users added later can log in); `apis` are the host's
    /// own APIs, listed in ApiVersions beside the SASL ones.
    static server_setup from_properties(std::string_view text, std::optional<std::string_view> listener,
                                        const credential_store *scram_store = nullptr,
                                        const std::vector<api_version> &apis = {}) {
        detail::opt_cstr l(listener, "listener");
        std::vector<std::int64_t> flat;
        flat.reserve(apis.size() * 3);
        for (const api_version &a : apis) {
            flat.push_back(a.api_key);
            flat.push_back(a.min_version);
            flat.push_back(a.max_version);
        }
        ksasl_server_setup *p = nullptr;
        detail::check_new(ksasl_server_setup_new(reinterpret_cast<const std::uint8_t *>(text.data()), text.size(),
                                                 l.c_str(), scram_store ? scram_store->get() : nullptr,
                                                 flat.data(), apis.size(), &p));
        return server_setup(adopt, p);
    }

    std::string last_error() const { return detail::str(ksasl_server_setup_last_error(get())); }

    /// The listener's configuration (shared with the setup): give it to each server_connection.
    server_config config() const {
        ksasl_server_config *c = nullptr;
        check(ksasl_server_setup_config(get(), &c));
        return server_config(adopt, c);
    }

    /// The JWKS endpoints the configuration validates tokens with, with their URLs (empty
    /// without JWKS validation). They hold no key until the host fetches them
    /// (jwks_endpoint::fetch, then jwks_endpoint::poll from its refresh thread).
    std::vector<std::pair<std::string, jwks_endpoint>> jwks() const {
        std::vector<std::pair<std::string, jwks_endpoint>> out;
        const std::size_t n = ksasl_server_setup_jwks_count(get());
        out.reserve(n);
        for (std::size_t i = 0; i < n; i++) {
            ksasl_jwks_endpoint *e = nullptr;
            check(ksasl_server_setup_jwks_endpoint(get(), i, &e));
            out.emplace_back(detail::str(ksasl_server_setup_jwks_url(get(), i)), jwks_endpoint(adopt, e));
        }
        return out;
    }

    /// With `delegation.token.secret.key`: the listener's token authority (shared with the
    /// setup), or nullopt. The host serves the token APIs (token_authority::handle_request)
    /// and sweeps expired tokens.
    std::optional<token_authority> tokens() const {
        ksasl_token_authority *a = nullptr;
        check(ksasl_server_setup_tokens(get(), &a));
        return a ? std::optional<token_authority>(std::in_place, adopt, a) : std::nullopt;
    }

    /// The listener's name (as requested, or the file's only SASL listener).
    std::string listener() const {
        const char *l = ksasl_server_setup_listener(get());
        if (!l) {
            throw error(KSASL_NULL_ARGUMENT, "NULL_ARGUMENT: the handle is NULL (moved from?)");
        }
        return l;
    }

    /// The host of the listener's `listeners` entry ("" for every interface; an IPv6 address
    /// without brackets), or nullopt when the file has none.
    std::optional<std::string> host() const {
        const char *h = ksasl_server_setup_host(get());
        return h ? std::optional<std::string>(h) : std::nullopt;
    }

    /// The port of the listener's `listeners` entry, or nullopt when the file has none.
    std::optional<std::uint16_t> port() const {
        const std::int32_t p = ksasl_server_setup_port(get());
        return p < 0 ? std::nullopt : std::optional<std::uint16_t>(static_cast<std::uint16_t>(p));
    }

private:
    void check(ksasl_result rc) const { detail::check(rc, get(), &ksasl_server_setup_last_error); }
};

/// ksasl_msk_token_new: MSK's presigned OAUTHBEARER token for `region` at `now_ms`, signed with
/// `credentials` (for a host with its own OAUTHBEARER client, such as librdkafka's token
/// refresh callback: value(), expiry_ms()).
inline oauth_token msk_token(std::string_view region, const aws_credentials &credentials, std::int64_t now_ms,
                             std::optional<std::string_view> user_agent = std::nullopt) {
    detail::cstr r(region, "region");
    detail::opt_cstr u(user_agent, "user_agent");
    ksasl_oauth_token *t = nullptr;
    detail::check_new(ksasl_msk_token_new(r.c_str(), credentials.get(), nullptr, u.c_str(), now_ms, &t));
    return oauth_token(adopt, t);
}
/// The same, signed with what `refresher` holds at `now_ms`.
inline oauth_token msk_token(std::string_view region, const refresher_ref &refresher, std::int64_t now_ms,
                             std::optional<std::string_view> user_agent = std::nullopt) {
    detail::cstr r(region, "region");
    detail::opt_cstr u(user_agent, "user_agent");
    ksasl_oauth_token *t = nullptr;
    detail::check_new(ksasl_msk_token_new(r.c_str(), nullptr, refresher.get(), u.c_str(), now_ms, &t));
    return oauth_token(adopt, t);
}

/// ksasl_config_check: reads `.properties` text as the library would (a client configuration
/// by Kafka's or librdkafka's names, or the SASL listeners of a broker's; with `listener`,
/// that listener) and returns the report: `[client]` or `[listener NAME]`, `name=value`
/// effective settings (secrets hidden), `unknown NAME` and `warning TEXT` lines. Throws
/// ksasl::error (INVALID_CONFIG, naming the key, the expected form and Kafka's default).
inline std::string config_check(std::string_view text, const char *listener = nullptr) {
    ksasl_config_report *r = nullptr;
    detail::check_new(ksasl_config_check(reinterpret_cast<const std::uint8_t *>(text.data()), text.size(),
                                         listener, &r));
    detail::handle<ksasl_config_report, &ksasl_config_report_free> owned(r);
    return detail::str(ksasl_config_report_text(r));
}

#undef KSASL_HPP_HANDLE_BOILERPLATE

} // namespace ksasl

#endif /* KSASL_HPP */
