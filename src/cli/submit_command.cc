#include "cli/submit_command.h"

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/read_file.h"
#include "cli/text_views.h"
#include "core/task_spec.h"
#include "core/task_spec_proto.h"

namespace apollo::cli {

namespace {

// Local problems, in the same shapes as the server's.
int ReportLocalProblems(const GlobalOptions& global, const SubmitOptions& opts,
                        const ParsedTasks& parsed, std::ostream& out, std::ostream& err) {
  v1::SubmitTasksResponse as_response;
  for (const auto& d : parsed.errors) {
    v1::Diagnostic* p = as_response.add_errors();
    p->set_file(d.file);
    p->set_line(d.line);
    p->set_column(d.column);
    p->set_message(d.message);
  }
  if (global.json()) {
    out << DumpJson(SubmitToJson(as_response, opts.dry_run));
  } else {
    err << SubmitProblemsText(as_response);
  }
  return kExitFailure;
}

// The file's tasks as typed specs (issue 18: the server parses no YAML),
// their retry policies as written so the server's presets apply; or the
// file's text when only the server can read it: a preset it alone knows
// (`server_presets`), or specs larger than it takes (aliases expanded).
v1::SubmitTasksRequest BuildRequest(const SubmitOptions& opts, const std::string& content,
                                    const ParsedTasks& parsed, bool server_presets,
                                    const ParseLimits& limits) {
  v1::SubmitTasksRequest req;
  req.set_file_name(opts.file);
  req.set_dry_run(opts.dry_run);
  req.set_force(opts.force);
  if (!server_presets) {
    size_t bytes = 0;
    for (size_t i = 0; i < parsed.tasks.size(); ++i) {
      v1::TaskSpec* spec = req.add_specs();
      TaskSpecToProto(parsed.tasks[i], parsed.retry_written[i], spec);
      bytes += spec->ByteSizeLong();
    }
    if (bytes <= limits.max_file_bytes) return req;
    req.clear_specs();
  }
  req.set_content(content);
  return req;
}

// The server's diagnostics about typed specs have no line: one about a task
// (task_index) is shown at that task's intent, where the server shows it for
// the file; one about the request as a whole at 1:1, as for a file.
void PlaceTypedDiagnostics(const ParsedTasks& parsed, v1::SubmitTasksResponse* resp) {
  for (v1::Diagnostic& d : *resp->mutable_errors()) {
    if (d.line() != 0) continue;
    ParsedTasks::Position at{1, 1};
    if (d.has_task_index() && d.task_index() >= 0 &&
        static_cast<size_t>(d.task_index()) < parsed.intent_at.size()) {
      at = parsed.intent_at[d.task_index()];
    }
    d.set_line(at.line);
    d.set_column(at.column);
  }
}

}  // namespace

int RunSubmit(const GlobalOptions& global, const SubmitOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err) {
  ParseLimits limits;
  // One byte over the limit is enough for the parser to say "too large".
  auto content = ReadSmallFile(opts.file, limits.max_file_bytes);
  if (!content.ok()) return ReportError(content.status(), err);

  // depends_on may name a task submitted earlier: only the server knows, so
  // locally every outside id is accepted and the server checks it.
  ParsedTasks parsed =
      ParseTaskFile(*content, opts.file, limits, [](std::string_view) { return true; });
  // Retry presets are the server's (its retry_presets may add some): only
  // the server judges a preset's name, and reports it at its line:column.
  const size_t server_presets = std::erase_if(parsed.errors, [](const Diagnostic& d) {
    return d.message.starts_with("unknown retry preset ");
  });
  if (!parsed.ok()) return ReportLocalProblems(global, opts, parsed, out, err);

  v1::SubmitTasksRequest req = BuildRequest(opts, *content, parsed, server_presets > 0, limits);
  auto resp = client.SubmitTasks(req);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (req.specs_size() > 0) PlaceTypedDiagnostics(parsed, &*resp);

  bool failed = resp->errors_size() > 0;
  if (global.json()) {
    out << DumpJson(SubmitToJson(*resp, opts.dry_run));
  } else {
    err << SubmitProblemsText(*resp);
    if (!failed) out << SubmitText(*resp, opts.dry_run);
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace apollo::cli
