// The operator-token RPCs (bootstrap, create, list, revoke) and the audit
// trail (list) of the operator API. The rules are in access_control.h.
#include "orchestrator/api_service.h"

namespace apollo::orchestrator {
namespace {

constexpr size_t kMaxTokenName = 64;
constexpr int64_t kMaxTtlS = 10LL * 365 * 24 * 3600;  // ten years

// A token name: 1..64 of [A-Za-z0-9._-] (it shows in audit rows and lists).
Status CheckTokenName(const std::string& name) {
  if (name.empty() || name.size() > kMaxTokenName) {
    return Status::InvalidArgument("a token name is 1 to 64 characters; got " +
                                   std::to_string(name.size()));
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) {
      return Status::InvalidArgument("token name '" + name +
                                     "': use letters, digits, '.', '_' and '-' only");
    }
  }
  return Status::Ok();
}

int64_t OptUs(const std::optional<TimePoint>& t) { return t ? ToUnixMicros(*t) : 0; }

}  // namespace

grpc::Status ApiService::BootstrapAcl(grpc::ServerContext* ctx,
                                      const apollo::v1::BootstrapAclRequest* req,
                                      apollo::v1::CreateTokenResponse* resp) {
  // No token needed: it is how the first one is made. The store refuses it
  // once any token exists (atomically, so two racing bootstraps make one).
  Caller caller;
  caller.peer = ctx->peer();
  const std::string name = req->name().empty() ? std::string("admin") : req->name();
  Status s = CheckTokenName(name);
  std::string token;
  if (s.ok()) {
    token = NewToken();
    if (token.empty()) s = Status::Internal("cannot draw random bytes for a token");
  }
  if (s.ok()) {
    store::TokenRow row;
    row.name = name;
    row.role = std::string(RoleName(Role::kAdmin));
    row.hash = TokenHash(token);
    row.created_at = clock_.Now();
    row.created_by = "(bootstrap)";
    s = store_.CreateToken(row, /*only_if_first=*/true);
  }
  if (s.ok()) {
    caller.who = name;
    resp->set_name(name);
    resp->set_role(std::string(RoleName(Role::kAdmin)));
    resp->set_token(token);
  }
  access_.Audit(caller, "acl.bootstrap", name, *req, s);
  return ToGrpc(s);
}

grpc::Status ApiService::CreateToken(grpc::ServerContext* ctx,
                                     const apollo::v1::CreateTokenRequest* req,
                                     apollo::v1::CreateTokenResponse* resp) {
  return Audited(*ctx, Role::kAdmin, "token.create", req->name(), *req, [&](const Caller& caller) {
    if (Status s = CheckTokenName(req->name()); !s.ok()) return ToGrpc(s);
    auto role = ParseRole(req->role());
    if (!role) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "unknown role '" + req->role() + "' (use viewer, operator or admin)");
    }
    if (req->ttl_s() < 0 || req->ttl_s() > kMaxTtlS) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "ttl must be 0 (never expires) up to ten years");
    }
    std::string token = NewToken();
    if (token.empty()) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "cannot draw random bytes for a token");
    }
    store::TokenRow row;
    row.name = req->name();
    row.role = std::string(RoleName(*role));
    row.hash = TokenHash(token);
    row.created_at = clock_.Now();
    if (req->ttl_s() > 0) row.expires_at = row.created_at + std::chrono::seconds(req->ttl_s());
    row.created_by = caller.who;
    if (Status s = store_.CreateToken(row, /*only_if_first=*/false); !s.ok()) return ToGrpc(s);
    resp->set_name(row.name);
    resp->set_role(row.role);
    resp->set_token(token);
    resp->set_expires_at_us(OptUs(row.expires_at));
    return grpc::Status::OK;
  });
}

grpc::Status ApiService::WhoAmI(grpc::ServerContext* ctx, const apollo::v1::WhoAmIRequest*,
                                apollo::v1::WhoAmIResponse* resp) {
  Decision d = access_.Check(*ctx, Role::kViewer, "whoami");
  if (!d.status.ok()) return ToGrpc(d.status);
  resp->set_name(d.caller.who);
  resp->set_role(std::string(RoleName(d.caller.role)));
  resp->set_tokens_required(access_.enabled());
  return grpc::Status::OK;
}

grpc::Status ApiService::ListTokens(grpc::ServerContext* ctx, const apollo::v1::ListTokensRequest*,
                                    apollo::v1::ListTokensResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kAdmin, "token.list"); !a.ok()) return a;
  auto tokens = store_.ListTokens();
  if (!tokens.ok()) return ToGrpc(tokens.status());
  for (const store::TokenRow& t : *tokens) {
    auto* out = resp->add_tokens();
    out->set_name(t.name);
    out->set_role(t.role);
    out->set_created_at_us(ToUnixMicros(t.created_at));
    out->set_expires_at_us(OptUs(t.expires_at));
    out->set_revoked_at_us(OptUs(t.revoked_at));
    out->set_created_by(t.created_by);
  }
  return grpc::Status::OK;
}

grpc::Status ApiService::RevokeToken(grpc::ServerContext* ctx,
                                     const apollo::v1::RevokeTokenRequest* req,
                                     apollo::v1::RevokeTokenResponse* resp) {
  return Audited(*ctx, Role::kAdmin, "token.revoke", req->name(), *req, [&] {
    TimePoint now = clock_.Now();
    if (Status s = store_.RevokeToken(req->name(), now); !s.ok()) return ToGrpc(s);
    resp->set_revoked_at_us(ToUnixMicros(now));
    return grpc::Status::OK;
  });
}

grpc::Status ApiService::ListAudit(grpc::ServerContext* ctx,
                                   const apollo::v1::ListAuditRequest* req,
                                   apollo::v1::ListAuditResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kAdmin, "audit.list"); !a.ok()) return a;
  store::AuditQuery q;
  q.who = req->who();
  if (req->since_us() > 0) q.since = FromUnixMicros(req->since_us());
  q.after_id = std::max<int64_t>(0, req->after_id());
  q.limit = PageLimit(req->limit());
  auto rows = store_.ListAudit(q);
  if (!rows.ok()) return ToGrpc(rows.status());
  int64_t last = q.after_id;
  for (const store::AuditRow& r : *rows) {
    auto* e = resp->add_entries();
    e->set_id(r.id);
    e->set_at_us(ToUnixMicros(r.at));
    e->set_who(r.who);
    e->set_action(r.action);
    e->set_target(r.target);
    e->set_args_digest(r.args_digest);
    e->set_peer(r.peer);
    e->set_outcome(r.outcome);
    last = r.id;
  }
  resp->set_next_after_id(last);
  resp->set_more(static_cast<int>(rows->size()) == q.limit);
  return grpc::Status::OK;
}

}  // namespace apollo::orchestrator
