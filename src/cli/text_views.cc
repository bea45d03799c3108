#include "cli/text_views.h"

#include <map>

#include "cli/rpc_error.h"
#include "cli/table.h"

namespace apollo::cli {

namespace {

std::string JoinStrings(const google::protobuf::RepeatedPtrField<std::string>& items,
                        const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string Plural(size_t n, const std::string& one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

// "change=CHG-42,owner=ops" (sorted), cut to `max` characters with "...".
std::string MetadataShort(const google::protobuf::Map<std::string, std::string>& m, size_t max) {
  std::map<std::string, std::string> sorted(m.begin(), m.end());
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : ",") + k + "=" + v;
  out = OneLine(out);
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

}  // namespace

std::string TaskStatusText(const v1::Task& task) {
  std::string header = "task " + OneLine(task.task_id()) + ": " + OneLine(task.status()) + " (";
  if (!task.intent().empty()) header += "intent " + OneLine(task.intent()) + ", ";
  header += Plural(static_cast<size_t>(task.nodes_size()), "node") + ")\n";
  if (!task.compensates().empty()) {
    header += "compensates: " + OneLine(task.compensates()) + " (runs its on_failure intent)\n";
  }
  if (task.metadata_size() > 0) header += "metadata: " + MetadataShort(task.metadata(), 200) + "\n";
  header += "start_timeout: " +
            (task.start_timeout_s() == 0 ? std::string("none (waits for its nodes forever)")
                                         : std::to_string(task.start_timeout_s()) + "s") +
            "\n";
  if (task.has_rollout()) header += "rollout: " + OneLine(task.rollout().summary()) + "\n";
  if (!task.held_by().empty()) header += "held by: " + OneLine(task.held_by()) + "\n";
  if (task.nodes_size() == 0) return header;
  const bool batches = task.has_rollout();
  std::vector<TableRow> rows = {
      {"NODE", "STATUS", "ATTEMPT", "RETRIES", "UPDATED", "LAST_ERROR", "BLOCKED_REASON"}};
  if (batches) rows[0].insert(rows[0].begin() + 1, "BATCH");
  for (const auto& n : task.nodes()) {
    rows.push_back({n.node_id(), n.status(), std::to_string(n.attempt()),
                    std::to_string(n.retries()), FormatMicros(n.updated_at_us()), n.last_error(),
                    n.blocked_reason()});
    if (batches) rows.back().insert(rows.back().begin() + 1, std::to_string(n.batch()));
  }
  return header + RenderTable(rows);
}

std::string TaskListText(const v1::ListTasksResponse& resp) {
  if (resp.tasks_size() == 0) return "no tasks\n";
  std::vector<TableRow> rows = {{"TASK_ID", "STATUS", "INTENT", "CREATED", "METADATA"}};
  for (const auto& t : resp.tasks()) {
    rows.push_back({t.task_id(), t.status(), t.intent(), FormatMicros(t.created_at_us()),
                    MetadataShort(t.metadata(), 40)});
  }
  std::string out = RenderTable(rows);
  if (!resp.next_page_token().empty()) {
    out += "more tasks: add --page-token " + OneLine(resp.next_page_token()) + "\n";
  }
  return out;
}

std::string HistoryText(const std::string& task_id, const v1::TaskEventsResponse& resp) {
  if (resp.entries_size() == 0) return "task " + OneLine(task_id) + ": no history yet\n";
  std::vector<TableRow> rows = {{"TIME", "NODE", "TRANSITION", "ATTEMPT", "CAUSE", "DETAIL"}};
  for (const auto& e : resp.entries()) {
    std::string from = e.from_status().empty() ? "(new)" : e.from_status();
    // An entry about the task as a whole (a rollout paused, a hold) names no
    // node and moves no row.
    const bool task_level = e.node_id().empty();
    rows.push_back({FormatMicros(e.at_us()), task_level ? "(task)" : e.node_id(),
                    task_level ? "-" : from + " -> " + e.to_status(), std::to_string(e.attempt()),
                    e.cause(), e.detail()});
  }
  return RenderTable(rows);
}

std::string NodesText(const v1::ListNodesResponse& resp) {
  if (resp.nodes_size() == 0) return "no nodes\n";
  std::vector<TableRow> rows = {{"NODE", "LIVENESS", "MODE", "CONNECTED", "RUNNING",
                                 "LAST_HEARTBEAT", "LABELS", "GROUPS", "INTENTS"}};
  for (const auto& n : resp.nodes()) {
    std::map<std::string, std::string> sorted(n.labels().begin(), n.labels().end());
    std::string labels;
    for (const auto& [k, v] : sorted) labels += (labels.empty() ? "" : ",") + k + "=" + v;
    std::string intents = JoinStrings(n.intents(), ",");
    for (const auto& d : n.disabled_intents())
      intents += (intents.empty() ? "" : ",") + d + "(off)";
    rows.push_back({n.node_id(), n.liveness(), n.mode(), n.connected() ? "yes" : "no",
                    std::to_string(n.running()), FormatMicros(n.last_heartbeat_us(), "never"),
                    labels, JoinStrings(n.groups(), ","), intents});
  }
  return RenderTable(rows);
}

std::string SubmitText(const v1::SubmitTasksResponse& resp, bool dry_run) {
  std::string out;
  for (const auto& t : resp.tasks()) {
    std::string nodes = Plural(static_cast<size_t>(t.nodes_size()), "node");
    if (t.nodes_size() > 0) nodes += ": " + JoinStrings(t.nodes(), ", ");
    std::string what = dry_run       ? "would target " + nodes
                       : t.created() ? "created, " + nodes
                                     : "already submitted (unchanged), " + nodes;
    if (t.targeting() == "follow") {
      what += " (follow: nodes that match later get it too)";
    } else if (t.targeting() == "static" && dry_run) {
      what += " (static: the nodes matched now)";
    }
    out += OneLine("task " + t.task_id() + ": " + what) + "\n";
    for (int b = 0; b < t.batches_size(); ++b) {
      out += OneLine("  rollout batch " + std::to_string(b + 1) + " of " +
                     std::to_string(t.batches_size()) + ": " +
                     JoinStrings(t.batches(b).nodes(), ", ")) +
             "\n";
    }
  }
  if (dry_run) out += "dry run: nothing was stored\n";
  return out;
}

std::string SubmitProblemsText(const v1::SubmitTasksResponse& resp) {
  std::string out;
  for (const auto& d : resp.errors()) {
    out += OneLine(d.file() + ":" + std::to_string(d.line()) + ":" + std::to_string(d.column()) +
                   ": " + d.message()) +
           "\n";
  }
  for (const auto& w : resp.warnings()) out += "warning: " + OneLine(w) + "\n";
  return out;
}

}  // namespace apollo::cli
