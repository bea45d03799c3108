// External handlers: an executable named in the agent's config, run like
// exec (own process group, same stop semantics) with APOLLO_* in its env.
//
// Protocol: stdin gets one JSON object
//   {"task_id", "attempt", "node_id", "intent", "params", "metadata"}
// and is then closed. Each stdout line that is a JSON object is read:
//   {"progress": 0.4, "message": "..."}  -> forwarded as progress
//   {"result": {...}}                     -> the result (the last one wins)
// Any other line is only kept in the bounded stdout tail. Exit 0 means
// SUCCEEDED with the result ({} if none); anything else FAILED, with the
// stderr tail in the detail and its last line in the message.

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/params.h"
#include "agent/handlers/process_result.h"

namespace apollo::agent {
namespace {

using nlohmann::json;

class ExternalHandler final : public Handler {
 public:
  ExternalHandler(std::string executable, ProcessOptions options)
      : executable_(std::move(executable)), options_(options) {}

  HandlerResult Run(const HandlerContext& ctx) override {
    ChildSpec spec;
    spec.argv = {executable_};
    spec.env_overrides = HandlerProcessEnv(ctx, {});
    spec.stdin_data = StdinDocument(ctx);
    spec.tail_bytes = options_.tail_bytes;
    spec.kill_grace = options_.kill_grace;

    json result = json::object();
    ChildCallbacks callbacks;
    callbacks.on_stdout_line = [&](std::string_view line) { OnLine(ctx, line, result); };
    Result<ChildOutcome> child = RunChild(spec, ctx.Stop(), callbacks);
    const std::string prefix = ctx.intent + ": ";
    if (!child.ok()) {
      return HandlerResult::Failed(prefix + "cannot run " + executable_ + ": " +
                                   child.status().message());
    }
    json detail = ChildDetail(*child);
    if (child->stopped != StopReason::kNone) return HandlerResult::Stopped(child->stopped, detail);
    if (child->exited && child->exit_code == 0) return HandlerResult::Succeeded(std::move(result));
    std::string message = prefix + DescribeExit(*child);
    std::string last = LastLine(child->stderr_tail);
    if (!last.empty()) message += ": " + last;
    return HandlerResult::Failed(std::move(message), detail);
  }

 private:
  static std::string StdinDocument(const HandlerContext& ctx) {
    json doc = {{"task_id", ctx.task_id},
                {"attempt", ctx.attempt},
                {"node_id", ctx.node_id},
                {"intent", ctx.intent},
                {"params", ctx.params.is_null() ? json::object() : ctx.params},
                {"metadata", ctx.metadata}};
    return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }

  // Never throws: a line that is not the protocol is simply not used.
  static void OnLine(const HandlerContext& ctx, std::string_view line, json& result) {
    json msg = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!msg.is_object()) return;
    auto progress = msg.find("progress");
    if (progress != msg.end() && progress->is_number()) {
      auto text = msg.find("message");
      ctx.ReportProgress(progress->get<double>(),
                         text != msg.end() && text->is_string() ? text->get<std::string>() : "");
    }
    auto res = msg.find("result");
    if (res != msg.end()) result = *res;
  }

  std::string executable_;
  ProcessOptions options_;
};

}  // namespace

std::unique_ptr<Handler> NewExternalHandler(std::string executable, ProcessOptions options) {
  return std::make_unique<ExternalHandler>(std::move(executable), options);
}

}  // namespace apollo::agent
