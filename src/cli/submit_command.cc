#include "cli/submit_command.h"

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/read_file.h"
#include "cli/text_views.h"
#include "core/task_spec.h"

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
  std::erase_if(parsed.errors,
                [](const Diagnostic& d) { return d.message.starts_with("unknown retry preset "); });
  if (!parsed.ok()) return ReportLocalProblems(global, opts, parsed, out, err);

  v1::SubmitTasksRequest req;
  req.set_file_name(opts.file);
  req.set_content(*content);
  req.set_dry_run(opts.dry_run);
  req.set_force(opts.force);
  auto resp = client.SubmitTasks(req);
  if (!resp.ok()) return ReportError(resp.status(), err);

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
