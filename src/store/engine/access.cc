// Operator tokens and the audit trail: who may act, and what they did.
#include "store/engine/queries.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

// Bootstrap: stores creating the first token at once take turns.
constexpr sql::Statement kLockTokens{"/*@pg LOCK TABLE tokens IN EXCLUSIVE MODE*/"};
constexpr sql::Statement kCountTokens{"SELECT count(*) FROM tokens"};
constexpr sql::Statement kTokenNamed{"SELECT 1 FROM tokens WHERE name = $1"};
constexpr sql::Statement kInsertToken{
    "INSERT INTO tokens(name, role, hash, created_at, expires_at, created_by) "
    "VALUES ($1, $2, $3, $4, $5, $6)"};
constexpr sql::Statement kRevokeToken{
    "UPDATE tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE name = $1"};
constexpr sql::Statement kInsertAudit{
    "INSERT INTO audit(at, who, action, target, args_digest, peer, outcome) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING audit_id"};

#define APOLLO_TOKEN_COLUMNS "name, role, hash, created_at, expires_at, revoked_at, created_by "
constexpr sql::Statement kTokenByHash{"SELECT " APOLLO_TOKEN_COLUMNS "FROM tokens WHERE hash = $1"};
constexpr sql::Statement kTokens{"SELECT " APOLLO_TOKEN_COLUMNS "FROM tokens ORDER BY name"};
#undef APOLLO_TOKEN_COLUMNS
constexpr sql::Statement kAudit{
    "SELECT audit_id, at, who, action, target, args_digest, peer, outcome FROM audit "
    "WHERE audit_id > $1 AND ($2 = '' OR who = $2) AND at >= $3 "
    "ORDER BY audit_id LIMIT $4"};

std::optional<TimePoint> OptTime(const sql::Rows& r, size_t i, int c) {
  return r.IsNull(i, c) ? std::nullopt : std::optional<TimePoint>(FromUnixMicros(r.Int(i, c)));
}

std::optional<int64_t> OptMicros(const std::optional<TimePoint>& t) {
  return t ? std::optional<int64_t>(ToUnixMicros(*t)) : std::nullopt;
}

TokenRow ReadToken(sql::Rows& r, size_t i) {
  return TokenRow{r.TakeText(i, 0), r.TakeText(i, 1), r.TakeText(i, 2), FromUnixMicros(r.Int(i, 3)),
                  OptTime(r, i, 4), OptTime(r, i, 5), r.TakeText(i, 6)};
}

}  // namespace

Status InsertToken(WriteTxn& txn, const TokenRow& t, bool only_if_first) {
  if (t.name.empty() || t.hash.empty() || t.role.empty()) {
    return Status::InvalidArgument("a token needs a name, a role and a hash");
  }
  if (only_if_first) {
    txn.Exec(kLockTokens);
    Result<sql::Rows> n = txn.Query(kCountTokens);
    if (!n.ok()) return n.status();
    if (!n->empty() && n->Int(0, 0) > 0) {
      return Status::FailedPrecondition(
          "tokens exist already: bootstrap works once; ask an admin for a token");
    }
  }
  Result<sql::Rows> named = txn.Query(kTokenNamed, sql::Params(t.name));
  if (!named.ok()) return named.status();
  if (!named->empty()) return Status::AlreadyExists("a token named " + t.name + " exists");
  txn.Exec(kInsertToken, sql::Params(t.name, t.role, t.hash, ToUnixMicros(t.created_at),
                                     OptMicros(t.expires_at), t.created_by));
  return Status::Ok();
}

Status RevokeTokenNamed(WriteTxn& txn, std::string_view name, TimePoint at) {
  Result<int64_t> n = txn.Count(kRevokeToken, sql::Params(name, ToUnixMicros(at)));
  if (!n.ok()) return n.status();
  if (*n == 0) return Status::NotFound("no token named " + std::string(name));
  return Status::Ok();
}

Result<int64_t> InsertAudit(WriteTxn& txn, const AuditRow& a) {
  Result<sql::Rows> r = txn.Query(kInsertAudit, sql::Params(txn.now_us(), a.who, a.action, a.target,
                                                            a.args_digest, a.peer, a.outcome));
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::Internal("audit insert returned no id");
  return r->Int(0, 0);
}

Result<TokenRow> QueryToken(sql::Conn& db, std::string_view hash) {
  Result<sql::Rows> r = db.Query(kTokenByHash, sql::Params(hash));
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::NotFound("no such token");
  return ReadToken(*r, 0);
}

Result<std::vector<TokenRow>> QueryTokens(sql::Conn& db) {
  Result<sql::Rows> r = db.Query(kTokens);
  if (!r.ok()) return r.status();
  std::vector<TokenRow> out;
  for (size_t i = 0; i < r->size(); ++i) out.push_back(ReadToken(*r, i));
  return out;
}

Result<std::vector<AuditRow>> QueryAudit(sql::Conn& db, const AuditQuery& q) {
  if (q.limit < 1 || q.limit > 1000) return Status::InvalidArgument("limit must be 1..1000");
  int64_t since = q.since ? ToUnixMicros(*q.since) : 0;
  Result<sql::Rows> r = db.Query(kAudit, sql::Params(q.after_id, q.who, since, q.limit));
  if (!r.ok()) return r.status();
  std::vector<AuditRow> out;
  for (size_t i = 0; i < r->size(); ++i) {
    out.push_back(AuditRow{r->Int(i, 0), FromUnixMicros(r->Int(i, 1)), r->TakeText(i, 2),
                           r->TakeText(i, 3), r->TakeText(i, 4), r->TakeText(i, 5),
                           r->TakeText(i, 6), r->TakeText(i, 7)});
  }
  return out;
}

}  // namespace apollo::store::engine
