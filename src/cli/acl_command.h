#pragma once

// Operator tokens and the audit trail (the orchestrator's ACL):
//   apollo-cli acl bootstrap [--name N]           the first admin token (once)
//   apollo-cli token create --name N --role R [--ttl D]
//   apollo-cli token list
//   apollo-cli token revoke --name N
//   apollo-cli audit list [--who N] [--since T] [--after ID] [--limit N]
// A new token is printed once (the store keeps only its hash); pass it back
// with --token or $APOLLO_TOKEN.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "apollo/v1/api.pb.h"
#include "cli/global_options.h"
#include "cli/orchestrator_client.h"
#include "core/clock.h"

namespace apollo::cli {

struct TokenOptions {
  std::string name;
  std::string role;  // viewer, operator, admin
  std::string ttl;   // "" = never expires; else a duration (30d, 12h, 3600)
};

struct AuditOptions {
  std::string who;    // only this token name
  std::string since;  // RFC 3339 time, or a duration back from now (1h)
  int64_t after = 0;  // paging
  int32_t limit = 0;  // 0 = the server's default
};

int RunAclBootstrap(const GlobalOptions& global, const TokenOptions& opts,
                    OrchestratorClient& client, std::ostream& out, std::ostream& err);
int RunTokenCreate(const GlobalOptions& global, const TokenOptions& opts,
                   OrchestratorClient& client, std::ostream& out, std::ostream& err);
int RunTokenList(const GlobalOptions& global, const TokenOptions& opts, OrchestratorClient& client,
                 std::ostream& out, std::ostream& err);
int RunTokenRevoke(const GlobalOptions& global, const TokenOptions& opts,
                   OrchestratorClient& client, std::ostream& out, std::ostream& err);
int RunAuditList(const GlobalOptions& global, const AuditOptions& opts, OrchestratorClient& client,
                 std::ostream& out, std::ostream& err);

// Pure views, for tests. JSON shapes are public: add keys, never rename.
// The new token, and how to use it.
std::string NewTokenText(const v1::CreateTokenResponse& t);
// Table NAME ROLE CREATED EXPIRES REVOKED CREATED-BY.
std::string TokensText(const v1::ListTokensResponse& resp, TimePoint now);
// {"id", "at", "who", "action", "target", "args_digest", "peer", "outcome"}
nlohmann::json AuditToJson(const v1::AuditEntry& e);
// Table ID TIME WHO ACTION TARGET FROM OUTCOME, with a paging hint.
std::string AuditText(const v1::ListAuditResponse& resp, const AuditOptions& opts);

// --since: an RFC 3339 time ("2026-12-01T07:00:00Z") or a duration back from
// `now` ("1h"). InvalidArgument saying which forms are accepted.
Result<int64_t> ParseSince(const std::string& text, TimePoint now);

}  // namespace apollo::cli
