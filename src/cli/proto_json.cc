#include "cli/proto_json.h"

#include <map>

#include "cli/table.h"

namespace apollo::cli {

namespace {

using nlohmann::json;

json TimeOrNull(int64_t us) { return us == 0 ? json(nullptr) : json(FormatMicros(us)); }

json Strings(const google::protobuf::RepeatedPtrField<std::string>& items) {
  json out = json::array();
  for (const auto& s : items) out.push_back(s);
  return out;
}

json Metadata(const google::protobuf::Map<std::string, std::string>& m) {
  return json(std::map<std::string, std::string>(m.begin(), m.end()));
}

json NodeTaskToJson(const v1::NodeTask& n) {
  json j = {{"node_id", n.node_id()},
            {"status", n.status()},
            {"updated_at", TimeOrNull(n.updated_at_us())},
            {"attempt", n.attempt()},
            {"retries", n.retries()},
            {"last_error", n.last_error()},
            {"blocked_reason", n.blocked_reason()}};
  if (n.permanent()) j["permanent"] = true;
  if (n.batch() > 0) j["batch"] = n.batch();
  if (!n.result_json().empty()) {
    json parsed = json::parse(n.result_json(), nullptr, /*allow_exceptions=*/false);
    j["result"] = parsed.is_discarded() ? json(n.result_json()) : std::move(parsed);
  }
  return j;
}

}  // namespace

json TaskStatusToJson(const v1::Task& task) {
  json nodes = json::array();
  for (const auto& n : task.nodes()) nodes.push_back(NodeTaskToJson(n));
  json j = {{"task_id", task.task_id()},
            {"status", task.status()},
            {"metadata", Metadata(task.metadata())},
            {"start_timeout_s", task.start_timeout_s()},
            {"nodes", std::move(nodes)}};
  if (!task.compensates().empty()) j["compensates"] = task.compensates();
  if (!task.held_by().empty()) j["held_by"] = task.held_by();
  if (task.has_rollout()) {
    const v1::RolloutStatus& r = task.rollout();
    j["rollout"] = {{"state", r.state()},         {"open_batch", r.open_batch()},
                    {"batches", r.batches()},     {"failures", r.failures()},
                    {"tolerated", r.tolerated()}, {"paused_by", r.paused_by()},
                    {"reason", r.reason()},       {"next_at", TimeOrNull(r.next_at_us())},
                    {"summary", r.summary()}};
  }
  return j;
}

json TaskListToJson(const v1::ListTasksResponse& resp) {
  json tasks = json::array();
  for (const auto& t : resp.tasks()) {
    tasks.push_back({{"task_id", t.task_id()},
                     {"status", t.status()},
                     {"intent", t.intent()},
                     {"created_at", TimeOrNull(t.created_at_us())},
                     {"metadata", Metadata(t.metadata())}});
  }
  return {{"tasks", std::move(tasks)}, {"next_page_token", resp.next_page_token()}};
}

json HistoryToJson(const std::string& task_id, const v1::TaskEventsResponse& resp) {
  json entries = json::array();
  for (const auto& e : resp.entries()) {
    entries.push_back({{"at", TimeOrNull(e.at_us())},
                       {"node_id", e.node_id()},
                       {"from", e.from_status()},
                       {"to", e.to_status()},
                       {"version", e.version()},
                       {"attempt", e.attempt()},
                       {"cause", e.cause()},
                       {"detail", e.detail()},
                       {"id", e.id()},
                       {"epoch", e.epoch()}});
  }
  return {{"task_id", task_id}, {"entries", std::move(entries)}};
}

json NodesToJson(const v1::ListNodesResponse& resp) {
  json nodes = json::array();
  for (const auto& n : resp.nodes()) {
    // proto maps have no order; sort for stable output.
    std::map<std::string, std::string> labels(n.labels().begin(), n.labels().end());
    nodes.push_back({{"node_id", n.node_id()},
                     {"liveness", n.liveness()},
                     {"mode", n.mode()},
                     {"connected", n.connected()},
                     {"running", n.running()},
                     {"last_heartbeat", TimeOrNull(n.last_heartbeat_us())},
                     {"labels", json(labels)},
                     {"groups", Strings(n.groups())},
                     {"intents", Strings(n.intents())},
                     {"disabled_intents", Strings(n.disabled_intents())}});
  }
  return {{"nodes", std::move(nodes)}};
}

json SubmitToJson(const v1::SubmitTasksResponse& resp, bool dry_run) {
  json tasks = json::array();
  for (const auto& t : resp.tasks()) {
    json task = {{"task_id", t.task_id()},
                 {"created", t.created()},
                 {"nodes", Strings(t.nodes())},
                 {"targeting", t.targeting()}};
    if (t.batches_size() > 0) {
      json batches = json::array();
      for (const auto& b : t.batches()) batches.push_back(Strings(b.nodes()));
      task["batches"] = std::move(batches);
    }
    tasks.push_back(std::move(task));
  }
  json errors = json::array();
  for (const auto& d : resp.errors()) {
    errors.push_back(
        {{"file", d.file()}, {"line", d.line()}, {"column", d.column()}, {"message", d.message()}});
  }
  bool stored = !dry_run && resp.errors().empty();
  return {{"dry_run", dry_run},
          {"stored", stored},
          {"tasks", std::move(tasks)},
          {"errors", std::move(errors)},
          {"warnings", Strings(resp.warnings())}};
}

std::string DumpJson(const json& j) {
  return j.dump(2, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace) + "\n";
}

}  // namespace apollo::cli
