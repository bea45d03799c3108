#include "cli/watch_command.h"

#include <cstdio>

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/watch_progress.h"

namespace apollo::cli {

namespace {

int Finish(const GlobalOptions& global, const v1::Task& last, std::ostream& out,
           std::ostream& err) {
  if (global.json()) out << DumpJson(TaskStatusToJson(last));
  out.flush();
  if (last.status() == "SUCCEEDED") return kExitOk;
  return ReportError(Status::FailedPrecondition("task " + OneLine(last.task_id()) + " ended " +
                                                OneLine(last.status())),
                     err);
}

}  // namespace

int RunWatch(const GlobalOptions& global, const WatchOptions& opts, OrchestratorClient& client,
             std::ostream& out, std::ostream& err) {
  // A unary call first: under the normal deadline it reports an unreachable
  // server or an unknown task at once, which the unbounded stream could not.
  auto first = client.GetTask(opts.task_id);
  if (!first.ok()) return ReportError(first.status(), err);

  WatchPrinter printer;
  v1::Task last = *first;
  if (!global.json()) out << printer.Update(last) << std::flush;
  if (IsWatchFinal(last)) return Finish(global, last, out, err);

  Status s = client.WatchTask(opts.task_id, opts.max_wait_s, [&](const v1::Task& task) {
    last = task;
    if (!global.json()) out << printer.Update(task) << std::flush;
    return !IsWatchFinal(task);
  });
  if (IsWatchFinal(last)) return Finish(global, last, out, err);
  if (s.code() == StatusCode::kDeadlineExceeded && opts.max_wait_s > 0) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opts.max_wait_s);
    return ReportError(
        Status::DeadlineExceeded("task " + OneLine(opts.task_id) + " not finished after " + secs +
                                 "s (still " + OneLine(last.status()) + ")"),
        err);
  }
  if (!s.ok()) return ReportError(s, err);
  return ReportError(
      Status::Unavailable("the orchestrator ended the watch before task " + OneLine(opts.task_id) +
                          " finished (last status " + OneLine(last.status()) + ")"),
      err);
}

}  // namespace apollo::cli
