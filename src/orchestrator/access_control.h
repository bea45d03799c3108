#pragma once

// Who may call the operator API, and the audit trail of what they did.
//
// Operators present a token (gRPC metadata `authorization: Bearer TOKEN`,
// apollo-cli --token or $APOLLO_TOKEN). The store keeps only the token's
// SHA-256 with a name and a role; roles are ordered, each includes the one
// below it:
//   viewer   - reads (tasks, nodes, events, alerts, dead letters, bus status,
//              reconcile --dry-run);
//   operator - submit, cancel, retry, watch;
//   admin    - tokens, the audit trail, dead-letter replay/drop, reconcile
//              repair, node sync.
// With the ACL off (no --acl, no TLS, or `acl.enabled: false`) every caller
// is an anonymous admin. `acl bootstrap` needs no token and works once: it
// makes the first admin token while no token exists.
//
// No or bad token -> UNAUTHENTICATED; a role too low -> PERMISSION_DENIED;
// each message is one line that says what to do.
//
// Every mutating call (allowed or refused) becomes an audit row: who (token
// name), what, on what, a digest of the request, from where, the outcome.
// A failure to write the audit row is logged; it never changes the call's
// own outcome (the call has already happened).
//
// Thread-safety: const methods and Audit may be called from any thread; the
// store is thread-safe.

#include <grpcpp/grpcpp.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"
#include "store/state_store.h"

namespace google::protobuf {
class Message;
}

namespace apollo::orchestrator {

enum class Role { kViewer = 1, kOperator = 2, kAdmin = 3 };

std::string_view RoleName(Role role);
// "viewer", "operator", "admin"; nullopt otherwise.
std::optional<Role> ParseRole(std::string_view name);

// The metadata key the token travels in, and its scheme.
inline constexpr char kAuthorizationKey[] = "authorization";
inline constexpr std::string_view kBearer = "Bearer ";
// The HTTP server (src/orchestrator/http/) calls the API over an in-process
// channel and names its own client ("http:ADDR:PORT") in this key; it is
// believed only for in-process calls (a network peer is ipv4:/ipv6:/unix:).
inline constexpr char kHttpClientKey[] = "apollo-http-client";

// A new random token (192 bits), "apollo-" + 48 hex digits.
std::string NewToken();
// The hex SHA-256 of `token`: what the store keeps.
std::string TokenHash(std::string_view token);
// The hex SHA-256 of a request's deterministic serialization.
std::string RequestDigest(const google::protobuf::Message& request);

// The caller of one RPC, as far as it is known.
struct Caller {
  std::string who;  // token name; empty: anonymous (ACL off, or no valid token)
  Role role = Role::kViewer;
  std::string peer;  // "ipv4:127.0.0.1:51234"
};

// The verdict on one call: `status` OK to proceed.
struct Decision {
  Caller caller;
  Status status;
};

class AccessControl {
 public:
  using Log = std::function<void(const std::string&)>;
  AccessControl(store::StateStore& store, const Clock& clock, bool enabled, Log log = nullptr)
      : store_(store), clock_(clock), enabled_(enabled), log_(std::move(log)) {}

  bool enabled() const { return enabled_; }

  // May the caller of `ctx` do `action` (which needs `needed`)? Reads the
  // token from the call's metadata and looks its hash up in the store.
  Decision Check(const grpc::ServerContextBase& ctx, Role needed, std::string_view action) const;
  // The same decision for a caller known by its bearer token (empty: none)
  // and address, e.g. an HTTP request (src/orchestrator/http/).
  Decision Check(std::string_view token, std::string peer, Role needed,
                 std::string_view action) const;

  // The audit row of a mutating call (target cut to 512 bytes, the
  // request as its digest).
  store::AuditRow AuditRowOf(const Caller& caller, std::string_view action, std::string_view target,
                             const google::protobuf::Message& request, const Status& outcome) const;
  // Appends the audit row of a mutating call.
  void Audit(const Caller& caller, std::string_view action, std::string_view target,
             const google::protobuf::Message& request, const Status& outcome) const;

 private:
  store::StateStore& store_;
  const Clock& clock_;
  const bool enabled_;
  Log log_;
};

}  // namespace apollo::orchestrator
