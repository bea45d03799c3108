#include "cli/cluster_command.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/table.h"
#include "core/config_values.h"

namespace apollo::cli {
namespace {

// A replica unseen for longer than this many lease lengths is shown "gone":
// a live one claims every third of a lease, so it has missed nine claims.
constexpr int64_t kGoneAfterLeases = 3;

nlohmann::json TimeOrNull(int64_t ms) {
  return ms == 0 ? nlohmann::json(nullptr) : nlohmann::json(FormatMicros(ms * 1000));
}

// A span of milliseconds as an operator reads it: "0.8s", "3m", "5h", "2d"
// (seconds with a tenth below a minute, whole units above). Negative spans
// (clocks apart) count as 0.
std::string Span(int64_t ms) {
  if (ms < 0) ms = 0;
  char buf[32];
  if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(ms / 60'000));
  } else if (ms < 86'400'000) {
    std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(ms / 3'600'000));
  } else {
    std::snprintf(buf, sizeof buf, "%lldd", static_cast<long long>(ms / 86'400'000));
  }
  return buf;
}

// A Unix time in ms as UTC "12:00:01", or "2024-04-05 12:00:01" when it is
// not on the same UTC day as `now_ms`; "-" when unset.
std::string ClockTime(int64_t ms, int64_t now_ms) {
  if (ms == 0) return "-";
  auto utc = [](int64_t t) {
    std::time_t secs = static_cast<std::time_t>(t / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    return tm;
  };
  const std::tm at = utc(ms);
  const std::tm now = utc(now_ms);
  const bool same_day = at.tm_year == now.tm_year && at.tm_yday == now.tm_yday;
  char buf[32];
  std::strftime(buf, sizeof buf, same_day ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &at);
  return buf;
}

// "a at 127.0.0.1:7011, epoch 3, acquired 12:00:01, renewed 0.8s ago,
// expires in 4.2s" (or "expired 1.0s ago: no one holds it").
std::string LeaseLine(const v1::LeaseStatus& l, int64_t now_ms) {
  std::string out = OneLine(l.name().empty() ? "leader" : l.name()) + " lease: ";
  if (l.holder().empty()) return out + "never held\n";
  out += OneLine(l.holder());
  if (!l.address().empty()) out += " at " + OneLine(l.address());
  out += ", epoch " + std::to_string(l.epoch()) + ", acquired " +
         ClockTime(l.acquired_at_ms(), now_ms) + ", renewed " + Span(now_ms - l.renewed_at_ms()) +
         " ago, ";
  if (l.expires_at_ms() > now_ms) {
    out += "expires in " + Span(l.expires_at_ms() - now_ms);
  } else {
    out += "expired " + Span(now_ms - l.expires_at_ms()) + " ago: no one holds it";
  }
  return out + "\n";
}

}  // namespace

std::string ReplicaRole(const v1::ReplicaStatus& replica, int64_t now_ms, int64_t lease_ttl_ms) {
  if (replica.leader()) return "leader";
  if (lease_ttl_ms > 0 && now_ms - replica.seen_at_ms() > kGoneAfterLeases * lease_ttl_ms) {
    return "gone";
  }
  return "follower";
}

nlohmann::json ClusterStatusToJson(const v1::ClusterStatusResponse& resp) {
  nlohmann::json leases = nlohmann::json::array();
  for (const auto& l : resp.leases()) {
    leases.push_back({{"name", l.name()},
                      {"holder", l.holder()},
                      {"address", l.address()},
                      {"epoch", l.epoch()},
                      {"acquired_at", TimeOrNull(l.acquired_at_ms())},
                      {"renewed_at", TimeOrNull(l.renewed_at_ms())},
                      {"expires_at", TimeOrNull(l.expires_at_ms())},
                      {"expired", l.expires_at_ms() <= resp.now_ms()}});
  }
  nlohmann::json replicas = nlohmann::json::array();
  for (const auto& r : resp.replicas()) {
    replicas.push_back({{"replica_id", r.replica_id()},
                        {"address", r.address()},
                        {"leader", r.leader()},
                        {"role", ReplicaRole(r, resp.now_ms(), resp.lease_ttl_ms())},
                        {"started_at", TimeOrNull(r.started_at_ms())},
                        {"seen_at", TimeOrNull(r.seen_at_ms())}});
  }
  return {{"mode", resp.mode()},
          {"answered_by", resp.answered_by()},
          {"answered_by_leader", resp.answered_by_leader()},
          {"now", TimeOrNull(resp.now_ms())},
          {"lease_ttl_ms", resp.lease_ttl_ms()},
          {"leases", std::move(leases)},
          {"replicas", std::move(replicas)}};
}

std::string ClusterStatusText(const v1::ClusterStatusResponse& resp) {
  const std::string answered = OneLine(resp.answered_by());
  if (resp.mode() == "single" || resp.mode().empty()) {
    return "mode single (SQLite: one orchestrator, no lease); replica " + answered + "\n";
  }
  const int64_t now = resp.now_ms();
  std::string out = "mode " + OneLine(resp.mode()) + ", lease ttl " +
                    FormatDuration(std::chrono::milliseconds(resp.lease_ttl_ms())) +
                    "; answered by " + answered +
                    (resp.answered_by_leader() ? " (leader)" : " (follower)") + "\n";
  bool leader_lease = false;
  for (const auto& l : resp.leases()) {
    leader_lease = leader_lease || l.name() == "leader";
    out += LeaseLine(l, now);
  }
  if (!leader_lease) out += "leader lease: never held\n";
  if (resp.replicas_size() == 0) return out + "no replica has registered in the store yet\n";
  std::vector<TableRow> rows{{"REPLICA", "ADDRESS", "ROLE", "STARTED", "LAST SEEN"}};
  for (const auto& r : resp.replicas()) {
    const std::string role = ReplicaRole(r, now, resp.lease_ttl_ms());
    std::string seen = r.seen_at_ms() == 0 ? "never" : Span(now - r.seen_at_ms()) + " ago";
    if (role == "gone") seen += " (not seen for > 3 lease lengths)";
    rows.push_back({r.replica_id(), r.address(), role, ClockTime(r.started_at_ms(), now), seen});
  }
  return out + RenderTable(rows);
}

int RunClusterStatus(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                     std::ostream& err) {
  auto resp = client.ClusterStatus();
  if (!resp.ok()) return ReportError(resp.status(), err);
  out << (global.json() ? DumpJson(ClusterStatusToJson(*resp)) : ClusterStatusText(*resp));
  return kExitOk;
}

}  // namespace apollo::cli
