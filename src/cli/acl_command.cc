#include "cli/acl_command.h"

#include <cstdio>
#include <ctime>

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/table.h"
#include "core/config_values.h"

namespace apollo::cli {
namespace {

// "never" / "-" / a time, for a table cell.
std::string TimeCell(int64_t us, const char* unset) { return FormatMicros(us, unset); }

nlohmann::json TimeOrNull(int64_t us) {
  return us == 0 ? nlohmann::json(nullptr) : nlohmann::json(FormatMicros(us));
}

std::string FilterArgs(const AuditOptions& opts) {
  std::string s;
  if (!opts.who.empty()) s += " --who " + OneLine(opts.who);
  if (!opts.since.empty()) s += " --since " + OneLine(opts.since);
  if (opts.limit > 0) s += " --limit " + std::to_string(opts.limit);
  return s;
}

int PrintNewToken(const GlobalOptions& global, const v1::CreateTokenResponse& t,
                  std::ostream& out) {
  if (global.json()) {
    out << DumpJson({{"name", t.name()},
                     {"role", t.role()},
                     {"token", t.token()},
                     {"expires_at", TimeOrNull(t.expires_at_us())}});
  } else {
    out << NewTokenText(t);
  }
  return kExitOk;
}

}  // namespace

Result<int64_t> ParseSince(const std::string& text, TimePoint now) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char z = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &s, &z,
                  &used) == 7 &&
      z == 'Z' && static_cast<size_t>(used) == text.size()) {
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    if (mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 60) {
      return static_cast<int64_t>(timegm(&tm)) * 1'000'000;
    }
  }
  auto back = ParseDuration(text);
  if (back.ok()) return ToUnixMicros(now - *back);
  return Status::InvalidArgument("--since '" + OneLine(text) +
                                 "': give a UTC time (2026-12-01T07:00:00Z) or how long ago "
                                 "(90m, 2h, 7d)");
}

std::string NewTokenText(const v1::CreateTokenResponse& t) {
  std::string out = "token " + t.name() + " (role " + t.role() + ")";
  if (t.expires_at_us() != 0) out += ", expires " + FormatMicros(t.expires_at_us());
  out += ". It is shown only now; the orchestrator keeps only its hash:\n\n  " + t.token() +
         "\n\nUse it with --token, or:  export APOLLO_TOKEN=" + t.token() + "\n";
  return out;
}

std::string TokensText(const v1::ListTokensResponse& resp, TimePoint now) {
  if (resp.tokens_size() == 0) return "no tokens (make the first with apollo-cli acl bootstrap)\n";
  std::vector<TableRow> rows{{"NAME", "ROLE", "STATE", "CREATED", "EXPIRES", "CREATED-BY"}};
  const int64_t now_us = ToUnixMicros(now);
  for (const auto& t : resp.tokens()) {
    std::string state = "active";
    if (t.revoked_at_us() != 0) {
      state = "revoked " + FormatMicros(t.revoked_at_us());
    } else if (t.expires_at_us() != 0 && t.expires_at_us() <= now_us) {
      state = "expired";
    }
    rows.push_back({t.name(), t.role(), state, TimeCell(t.created_at_us(), "-"),
                    TimeCell(t.expires_at_us(), "never"), t.created_by()});
  }
  return RenderTable(rows);
}

nlohmann::json AuditToJson(const v1::AuditEntry& e) {
  return {{"id", e.id()},
          {"at", TimeOrNull(e.at_us())},
          {"who", e.who().empty() ? nlohmann::json(nullptr) : nlohmann::json(e.who())},
          {"action", e.action()},
          {"target", e.target()},
          {"args_digest", e.args_digest()},
          {"peer", e.peer()},
          {"outcome", e.outcome()}};
}

std::string AuditText(const v1::ListAuditResponse& resp, const AuditOptions& opts) {
  std::string out;
  if (resp.entries_size() == 0) {
    out = opts.who.empty() && opts.since.empty()
              ? "no audit entries\n"
              : "no audit entries match" + FilterArgs(opts) + "\n";
  } else {
    std::vector<TableRow> rows{{"ID", "TIME", "WHO", "ACTION", "TARGET", "FROM", "OUTCOME"}};
    for (const auto& e : resp.entries()) {
      rows.push_back({std::to_string(e.id()), FormatMicros(e.at_us()),
                      e.who().empty() ? "(anonymous)" : e.who(), e.action(), OneLine(e.target()),
                      e.peer(), OneLine(e.outcome())});
    }
    out = RenderTable(rows);
  }
  if (resp.more()) {
    out += "more entries: apollo-cli audit list --after " + std::to_string(resp.next_after_id()) +
           FilterArgs(opts) + "\n";
  }
  return out;
}

int RunAclBootstrap(const GlobalOptions& global, const TokenOptions& opts,
                    OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  auto resp = client.BootstrapAcl(opts.name);
  if (!resp.ok()) return ReportError(resp.status(), err);
  return PrintNewToken(global, *resp, out);
}

int RunTokenCreate(const GlobalOptions& global, const TokenOptions& opts,
                   OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  v1::CreateTokenRequest req;
  req.set_name(opts.name);
  req.set_role(opts.role);
  if (!opts.ttl.empty()) {
    auto ttl = ParseDuration(opts.ttl);
    if (!ttl.ok() || *ttl < std::chrono::seconds(1)) {
      err << "apollo-cli: --ttl '" << OneLine(opts.ttl)
          << "': give a duration of at least 1s (3600, 12h, 30d)\n";
      return kExitUsage;
    }
    req.set_ttl_s(std::chrono::duration_cast<std::chrono::seconds>(*ttl).count());
  }
  auto resp = client.CreateToken(req);
  if (!resp.ok()) return ReportError(resp.status(), err);
  return PrintNewToken(global, *resp, out);
}

int RunTokenList(const GlobalOptions& global, const TokenOptions&, OrchestratorClient& client,
                 std::ostream& out, std::ostream& err) {
  auto resp = client.ListTokens();
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json tokens = nlohmann::json::array();
    for (const auto& t : resp->tokens()) {
      tokens.push_back({{"name", t.name()},
                        {"role", t.role()},
                        {"created_at", TimeOrNull(t.created_at_us())},
                        {"expires_at", TimeOrNull(t.expires_at_us())},
                        {"revoked_at", TimeOrNull(t.revoked_at_us())},
                        {"created_by", t.created_by()}});
    }
    out << DumpJson({{"tokens", tokens}});
  } else {
    out << TokensText(*resp, RealClock().Now());
  }
  return kExitOk;
}

int RunTokenRevoke(const GlobalOptions& global, const TokenOptions& opts,
                   OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  auto resp = client.RevokeToken(opts.name);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    out << DumpJson({{"name", opts.name}, {"revoked_at", TimeOrNull(resp->revoked_at_us())}});
  } else {
    out << "token " << OneLine(opts.name) << " revoked at " << FormatMicros(resp->revoked_at_us())
        << "; calls with it are refused from now on\n";
  }
  return kExitOk;
}

int RunAuditList(const GlobalOptions& global, const AuditOptions& opts, OrchestratorClient& client,
                 std::ostream& out, std::ostream& err) {
  v1::ListAuditRequest req;
  req.set_who(opts.who);
  if (!opts.since.empty()) {
    auto since = ParseSince(opts.since, RealClock().Now());
    if (!since.ok()) {
      err << "apollo-cli: " << since.status().message() << "\n";
      return kExitUsage;
    }
    req.set_since_us(*since);
  }
  req.set_after_id(opts.after);
  req.set_limit(opts.limit);
  auto resp = client.ListAudit(req);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& e : resp->entries()) entries.push_back(AuditToJson(e));
    out << DumpJson(
        {{"entries", entries}, {"more", resp->more()}, {"next_after_id", resp->next_after_id()}});
  } else {
    out << AuditText(*resp, opts);
  }
  return kExitOk;
}

}  // namespace apollo::cli
