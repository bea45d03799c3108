#include "cli/task_commands.h"

#include <cctype>

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/text_views.h"
#include "core/task_state.h"

namespace apollo::cli {

namespace {

int PrintTask(const GlobalOptions& global, const Result<v1::Task>& task, std::ostream& out,
              std::ostream& err) {
  if (!task.ok()) return ReportError(task.status(), err);
  out << (global.json() ? DumpJson(TaskStatusToJson(*task)) : TaskStatusText(*task));
  return kExitOk;
}

// "running" -> "RUNNING", checked against the state names.
Result<std::string> NormalizeStatus(const std::string& s) {
  std::string upper;
  for (char c : s) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (ParseTaskState(upper)) return upper;
  std::string names;
  for (TaskState st : kAllTaskStates)
    names += (names.empty() ? "" : ", ") + std::string(TaskStateName(st));
  return Status::InvalidArgument("--status: unknown status '" + s + "' (one of " + names + ")");
}

}  // namespace

int RunStatus(const GlobalOptions& global, const TaskIdOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err) {
  return PrintTask(global, client.GetTask(opts.task_id), out, err);
}

int RunList(const GlobalOptions& global, const ListOptions& opts, OrchestratorClient& client,
            std::ostream& out, std::ostream& err) {
  v1::ListTasksRequest req;
  if (!opts.status.empty()) {
    auto status = NormalizeStatus(opts.status);
    if (!status.ok()) return ReportError(status.status(), err);
    req.set_status(*status);
  }
  req.set_intent(opts.intent);
  for (const std::string& kv : opts.meta) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ReportError(Status::InvalidArgument("--meta " + kv + ": expected key=value"), err);
    }
    (*req.mutable_metadata())[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  req.set_limit(opts.limit);
  req.set_page_token(opts.page_token);
  auto resp = client.ListTasks(req);
  if (!resp.ok()) return ReportError(resp.status(), err);
  out << (global.json() ? DumpJson(TaskListToJson(*resp)) : TaskListText(*resp));
  return kExitOk;
}

int RunCancel(const GlobalOptions& global, const CancelOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err) {
  return PrintTask(global, client.CancelTask(opts.task_id, opts.reason), out, err);
}

int RunRetry(const GlobalOptions& global, const TaskIdOptions& opts, OrchestratorClient& client,
             std::ostream& out, std::ostream& err) {
  return PrintTask(global, client.RetryTask(opts.task_id), out, err);
}

int RunRollout(const GlobalOptions& global, const RolloutOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err) {
  return PrintTask(global, client.ControlRollout(opts.task_id, opts.action, opts.reason), out, err);
}

int RunDeps(const GlobalOptions& global, const DepsOptions& opts, OrchestratorClient& client,
            std::ostream& out, std::ostream& err) {
  if (opts.add.empty() && opts.remove.empty()) {
    return ReportError(Status::InvalidArgument("task deps: give --add ID or --remove ID"), err);
  }
  v1::ChangeDependenciesRequest req;
  req.set_task_id(opts.task_id);
  for (const auto& a : opts.add) req.add_add(a);
  for (const auto& r : opts.remove) req.add_remove(r);
  req.set_reason(opts.reason);
  return PrintTask(global, client.ChangeDependencies(req), out, err);
}

int RunHold(const GlobalOptions& global, const HoldOptions& opts, OrchestratorClient& client,
            std::ostream& out, std::ostream& err) {
  v1::HoldTaskRequest req;
  req.set_task_id(opts.task_id);
  req.set_release(opts.release);
  req.set_reason(opts.reason);
  return PrintTask(global, client.HoldTask(req), out, err);
}

int RunEvents(const GlobalOptions& global, const TaskIdOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err) {
  auto resp = client.TaskEvents(opts.task_id);
  if (!resp.ok()) return ReportError(resp.status(), err);
  out << (global.json() ? DumpJson(HistoryToJson(opts.task_id, *resp))
                        : HistoryText(opts.task_id, *resp));
  return kExitOk;
}

}  // namespace apollo::cli
