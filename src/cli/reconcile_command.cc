#include "cli/reconcile_command.h"

#include <nlohmann/json.hpp>

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/table.h"

namespace apollo::cli {

int RunNodeSync(const GlobalOptions& global, const std::string& node_id,
                OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  auto resp = client.SyncNode(node_id);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    out << DumpJson({{"node_id", node_id}, {"message", resp->message()}});
  } else {
    out << resp->message() << "\n";
  }
  return kExitOk;
}

std::string ReconcileText(const v1::ReconcileResponse& resp, bool dry_run) {
  std::string out;
  if (resp.drift_size() == 0) {
    out = "no drift: every agent's snapshot agrees with the store\n";
  } else {
    std::vector<TableRow> rows{{"NODE", "TASK", "ATTEMPT", "STORE", "AGENT", "ACTION", "DETAIL"}};
    for (const auto& d : resp.drift()) {
      rows.push_back({d.node_id(), d.task_id(), std::to_string(d.attempt()), d.store_status(),
                      d.agent_status(), d.action(), d.detail()});
    }
    out = RenderTable(rows);
    out += dry_run ? "dry run: nothing was changed\n"
                   : std::to_string(resp.repaired()) + " row(s) repaired\n";
  }
  for (const auto& n : resp.nodes_without_snapshot()) {
    out += "node " + n + ": no snapshot received yet (try: apollo-cli node sync --node-id " + n +
           ")\n";
  }
  return out;
}

int RunReconcile(const GlobalOptions& global, const ReconcileOptions& opts,
                 OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  auto resp = client.Reconcile(opts.node_id, opts.dry_run);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json drift = nlohmann::json::array();
    for (const auto& d : resp->drift()) {
      drift.push_back({{"node_id", d.node_id()}, {"task_id", d.task_id()},
                       {"attempt", d.attempt()}, {"store_status", d.store_status()},
                       {"agent_status", d.agent_status()}, {"action", d.action()},
                       {"detail", d.detail()}});
    }
    out << DumpJson({{"dry_run", opts.dry_run},
                     {"repaired", resp->repaired()},
                     {"drift", drift},
                     {"nodes_without_snapshot", resp->nodes_without_snapshot()},
                     {"snapshot_age_ms", resp->snapshot_age_ms()}});
  } else {
    out << ReconcileText(*resp, opts.dry_run);
  }
  return kExitOk;
}

int RunIntentList(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                  std::ostream& err) {
  auto resp = client.ListIntents();
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json intents = nlohmann::json::array();
    for (const auto& i : resp->intents()) {
      intents.push_back({{"intent", i.intent()}, {"breaker", i.breaker()},
                         {"consecutive_failures", i.consecutive_failures()},
                         {"opened_at", FormatMicros(i.opened_at_us(), "")},
                         {"times_opened", i.times_opened()}});
    }
    out << DumpJson({{"intents", intents},
                     {"queue", {{"depth", resp->queue_depth()},
                                {"capacity", resp->queue_capacity()},
                                {"paused", resp->queue_paused()}}},
                     {"retry_budget", {{"taken", resp->retry_budget_taken()},
                                       {"refused", resp->retry_budget_refused()}}}});
    return kExitOk;
  }
  std::vector<TableRow> rows{{"INTENT", "BREAKER", "FAILURES_IN_A_ROW", "OPENED_AT", "TIMES_OPENED"}};
  for (const auto& i : resp->intents()) {
    rows.push_back({i.intent(), i.breaker(), std::to_string(i.consecutive_failures()),
                    FormatMicros(i.opened_at_us()), std::to_string(i.times_opened())});
  }
  out << RenderTable(rows);
  out << "queue: " << resp->queue_depth() << " of " << resp->queue_capacity()
      << (resp->queue_paused() ? " (PAUSED: new submissions refused)" : "") << "\n";
  out << "retry budget: " << resp->retry_budget_taken() << " re-dispatches granted, "
      << resp->retry_budget_refused() << " held back\n";
  return kExitOk;
}

}  // namespace apollo::cli
