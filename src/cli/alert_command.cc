#include "cli/alert_command.h"

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/table.h"

namespace apollo::cli {
namespace {

nlohmann::json OrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

// The message, with the transition it refused or recorded when there is one.
std::string MessageOf(const v1::Alert& a) {
  std::string m = a.message();
  if (!a.from_status().empty() && !a.to_status().empty()) {
    m = a.from_status() + " -> " + a.to_status() + (m.empty() ? "" : ": " + m);
  }
  return m;
}

// The filters as they were given, to repeat in the paging hint.
std::string FilterArgs(const AlertOptions& opts) {
  std::string s;
  if (!opts.kind.empty()) s += " --kind " + OneLine(opts.kind);
  if (!opts.node_id.empty()) s += " --node " + OneLine(opts.node_id);
  if (opts.limit > 0) s += " --limit " + std::to_string(opts.limit);
  return s;
}

}  // namespace

nlohmann::json AlertToJson(const v1::Alert& a) {
  return {
      {"id", a.id()},
      {"at", a.at_us() == 0 ? nlohmann::json(nullptr) : nlohmann::json(FormatMicros(a.at_us()))},
      {"kind", a.kind()},
      {"node_id", OrNull(a.node_id())},
      {"task_id", OrNull(a.task_id())},
      {"message", a.message()},
      {"from", OrNull(a.from_status())},
      {"to", OrNull(a.to_status())},
      {"event_id", OrNull(a.event_id())},
      {"delivery", a.delivery()},
      {"delivery_attempts", a.delivery_attempts()},
      {"delivery_detail", OrNull(a.delivery_detail())}};
}

// "delivered", "failing (3): HTTP 503", "pending".
std::string DeliveryOf(const v1::Alert& a) {
  std::string s = a.delivery().empty() ? "-" : a.delivery();
  if (a.delivery() == "failing" || a.delivery() == "gave_up") {
    s += " (" + std::to_string(a.delivery_attempts()) + ")";
    if (!a.delivery_detail().empty()) s += ": " + a.delivery_detail();
  }
  return OneLine(s);
}

std::string AlertsText(const v1::ListAlertsResponse& resp, const AlertOptions& opts) {
  std::string out;
  if (resp.alerts_size() == 0) {
    bool filtered = !opts.kind.empty() || !opts.node_id.empty();
    out = filtered ? "no alerts match" + FilterArgs(opts) + "\n" : "no alerts\n";
  } else {
    std::vector<TableRow> rows{{"ID", "TIME", "KIND", "NODE", "TASK", "DELIVERY", "MESSAGE"}};
    for (const auto& a : resp.alerts()) {
      rows.push_back({std::to_string(a.id()), FormatMicros(a.at_us()), a.kind(), a.node_id(),
                      a.task_id(), DeliveryOf(a), MessageOf(a)});
    }
    out = RenderTable(rows);
  }
  if (resp.more()) {
    out += "more alerts: apollo-cli alert list --after " + std::to_string(resp.next_after_id()) +
           FilterArgs(opts) + "\n";
  }
  return out;
}

int RunAlertList(const GlobalOptions& global, const AlertOptions& opts,
                 OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  v1::ListAlertsRequest req;
  req.set_after_id(opts.after);
  req.set_limit(opts.limit);
  req.set_kind(opts.kind);
  req.set_node_id(opts.node_id);
  auto resp = client.ListAlerts(req);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json alerts = nlohmann::json::array();
    for (const auto& a : resp->alerts()) alerts.push_back(AlertToJson(a));
    out << DumpJson({{"alerts", alerts},
                     {"more", resp->more()},
                     {"next_after_id", resp->next_after_id()}});
  } else {
    out << AlertsText(*resp, opts);
  }
  return kExitOk;
}

}  // namespace apollo::cli
