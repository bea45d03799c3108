#include "cli/bus_command.h"

#include <algorithm>
#include <cstdio>

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/table.h"

namespace apollo::cli {
namespace {

struct Totals {
  uint64_t published = 0, applied = 0, pending = 0, dead_lettered = 0;
  int64_t oldest_ms = 0;
  int oldest_partition = -1;
};

Totals Sum(const v1::BusStatusResponse& resp) {
  Totals t;
  for (const auto& p : resp.partitions()) {
    t.published += p.published();
    t.applied += p.applied();
    t.pending += p.pending();
    t.dead_lettered += p.dead_lettered();
    if (p.oldest_unapplied_ms() > t.oldest_ms) {
      t.oldest_ms = p.oldest_unapplied_ms();
      t.oldest_partition = p.partition();
    }
  }
  return t;
}

// "-" when nothing waits, else seconds with a tenth ("12.3 s").
std::string Age(int64_t ms) {
  if (ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

std::string DeadLetterLine(const v1::BusStatusResponse& resp) {
  if (resp.dead_letters() == 0) return "dead letters: none\n";
  return "dead letters: " + std::string(resp.dead_letters_capped() ? "at least " : "") +
         std::to_string(resp.dead_letters()) +
         " waiting for an operator (apollo-cli dlq list)\n";
}

}  // namespace

nlohmann::json BusStatusToJson(const v1::BusStatusResponse& resp) {
  Totals t = Sum(resp);
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : resp.partitions()) {
    parts.push_back({{"partition", p.partition()},
                     {"published", p.published()},
                     {"applied", p.applied()},
                     {"pending", p.pending()},
                     {"dead_lettered", p.dead_lettered()},
                     {"oldest_unapplied_ms", p.oldest_unapplied_ms()}});
  }
  return {{"backend", resp.backend()},
          {"dead_letters", resp.dead_letters()},
          {"dead_letters_capped", resp.dead_letters_capped()},
          {"totals", {{"published", t.published},
                      {"applied", t.applied},
                      {"pending", t.pending},
                      {"dead_lettered", t.dead_lettered},
                      {"oldest_unapplied_ms", t.oldest_ms}}},
          {"partitions", parts}};
}

std::string BusStatusText(const v1::BusStatusResponse& resp) {
  Totals t = Sum(resp);
  std::string out = "bus: " + OneLine(resp.backend()) + " (" +
                    std::to_string(resp.partitions_size()) + " partitions)\n";
  out += "since start: " + std::to_string(t.published) + " published, " +
         std::to_string(t.applied) + " applied, " + std::to_string(t.pending) + " pending";
  if (t.pending > 0 && t.oldest_partition >= 0) {
    out += ", oldest unapplied " + Age(t.oldest_ms) + " (partition " +
           std::to_string(t.oldest_partition) + ")";
  }
  out += "\n" + DeadLetterLine(resp);
  std::vector<TableRow> rows{
      {"PARTITION", "PUBLISHED", "APPLIED", "PENDING", "DEAD_LETTERED", "OLDEST_UNAPPLIED"}};
  for (const auto& p : resp.partitions()) {
    rows.push_back({std::to_string(p.partition()), std::to_string(p.published()),
                    std::to_string(p.applied()), std::to_string(p.pending()),
                    std::to_string(p.dead_lettered()), Age(p.oldest_unapplied_ms())});
  }
  return out + RenderTable(rows);
}

int RunBusStatus(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                 std::ostream& err) {
  auto resp = client.BusStatus();
  if (!resp.ok()) return ReportError(resp.status(), err);
  out << (global.json() ? DumpJson(BusStatusToJson(*resp)) : BusStatusText(*resp));
  return kExitOk;
}

}  // namespace apollo::cli
