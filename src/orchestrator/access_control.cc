#include "orchestrator/access_control.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>

#include "core/event.h"

namespace apollo::orchestrator {
namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
    return std::string();  // OpenSSL failed: matches no stored hash
  }
  return Hex(md.data(), len);
}

// The token of the call, from `authorization: Bearer TOKEN`; empty if none.
std::string TokenOf(const grpc::ServerContextBase& ctx) {
  const auto& md = ctx.client_metadata();
  auto it = md.find(kAuthorizationKey);
  if (it == md.end()) return std::string();
  std::string_view v(it->second.data(), it->second.size());
  if (!v.starts_with(kBearer)) return std::string();
  v.remove_prefix(kBearer.size());
  return std::string(v);
}

constexpr std::string_view kGetToken =
    "pass --token or set APOLLO_TOKEN (an admin makes one with apollo-cli token create; the "
    "first with apollo-cli acl bootstrap)";

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "viewer") return Role::kViewer;
  if (name == "operator") return Role::kOperator;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

std::string NewToken() {
  std::array<unsigned char, 24> raw{};
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) return std::string();
  return "apollo-" + Hex(raw.data(), raw.size());
}

std::string TokenHash(std::string_view token) { return Sha256Hex(token); }

std::string RequestDigest(const google::protobuf::Message& request) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    request.SerializeToCodedStream(&coded);
  }
  return Sha256Hex(bytes);
}

Decision AccessControl::Check(const grpc::ServerContextBase& ctx, Role needed,
                              std::string_view action) const {
  std::string peer = ctx.peer();
  if (!peer.starts_with("ipv4:") && !peer.starts_with("ipv6:") && !peer.starts_with("unix:")) {
    const auto& md = ctx.client_metadata();
    if (auto it = md.find(kHttpClientKey); it != md.end()) {
      peer = std::string(it->second.data(), std::min<size_t>(it->second.size(), 128));
    }
  }
  return Check(TokenOf(ctx), std::move(peer), needed, action);
}

Decision AccessControl::Check(std::string_view token, std::string peer, Role needed,
                              std::string_view action) const {
  Decision d;
  d.caller.peer = std::move(peer);
  if (!enabled_) {
    d.caller.role = Role::kAdmin;
    return d;
  }
  if (token.empty()) {
    d.status =
        Status::Unauthenticated("no token: this orchestrator requires an operator token for " +
                                std::string(action) + "; " + std::string(kGetToken));
    return d;
  }
  auto row = store_.FindToken(TokenHash(token));
  if (!row.ok()) {
    if (row.status().code() == StatusCode::kNotFound) {
      d.status = Status::Unauthenticated("the token is not known to this orchestrator; " +
                                         std::string(kGetToken));
    } else {
      d.status = Status::Unavailable("cannot check the token: " + row.status().message());
    }
    return d;
  }
  d.caller.who = row->name;
  if (row->revoked_at) {
    d.status =
        Status::Unauthenticated("token '" + row->name + "' was revoked at " +
                                FormatRfc3339(*row->revoked_at) + "; " + std::string(kGetToken));
    return d;
  }
  if (row->expires_at && *row->expires_at <= clock_.Now()) {
    d.status =
        Status::Unauthenticated("token '" + row->name + "' expired at " +
                                FormatRfc3339(*row->expires_at) + "; " + std::string(kGetToken));
    return d;
  }
  auto role = ParseRole(row->role);
  if (!role) {
    d.status = Status::PermissionDenied("token '" + row->name + "' has an unknown role '" +
                                        row->role + "'");
    return d;
  }
  d.caller.role = *role;
  if (*role < needed) {
    d.status = Status::PermissionDenied("token '" + row->name + "' has role " +
                                        std::string(RoleName(*role)) + "; " + std::string(action) +
                                        " needs " + std::string(RoleName(needed)) +
                                        " (an admin can make one: apollo-cli token create --role " +
                                        std::string(RoleName(needed)) + ")");
  }
  return d;
}

store::AuditRow AccessControl::AuditRowOf(const Caller& caller, std::string_view action,
                                          std::string_view target,
                                          const google::protobuf::Message& request,
                                          const Status& outcome) const {
  store::AuditRow row;
  row.at = clock_.Now();
  row.who = caller.who;
  row.action = std::string(action);
  row.target = std::string(target.substr(0, 512));
  row.args_digest = RequestDigest(request);
  row.peer = caller.peer;
  row.outcome = outcome.ok() ? "ok"
                             : std::string(StatusCodeName(outcome.code())) + ": " +
                                   outcome.message().substr(0, 512);
  return row;
}

void AccessControl::Audit(const Caller& caller, std::string_view action, std::string_view target,
                          const google::protobuf::Message& request, const Status& outcome) const {
  store::AuditRow row = AuditRowOf(caller, action, target, request, outcome);
  auto id = store_.AddAudit(row);
  if (!id.ok() && log_) {
    log_("cannot record the audit row of " + row.action + " by " +
         (row.who.empty() ? std::string("(anonymous)") : row.who) + ": " + id.status().message());
  }
}

}  // namespace apollo::orchestrator
