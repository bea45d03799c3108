// exec: runs params.argv directly (no shell unless argv names one) with
// optional params.env added to the agent's environment and params.cwd.
// SUCCEEDED on exit 0 with {"exit_code", "stdout_tail", "stderr_tail"};
// FAILED on any other exit or a death by signal, with the same detail.
// Cancel / timeout stop the child's whole process group (child_process.h).

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/params.h"
#include "agent/handlers/process_result.h"

namespace apollo::agent {
namespace {

class ExecHandler final : public Handler {
 public:
  explicit ExecHandler(ProcessOptions options) : options_(options) {}

  HandlerResult Run(const HandlerContext& ctx) override {
    Result<ChildSpec> spec = BuildSpec(ctx);
    if (!spec.ok()) return HandlerResult::Failed(spec.status().message());
    Result<ChildOutcome> child = RunChild(*spec, ctx.Stop());
    if (!child.ok()) {
      return HandlerResult::Failed("exec: " + child.status().message(),
                                   {{"argv", spec->argv}});
    }
    nlohmann::json detail = ChildDetail(*child);
    if (child->stopped != StopReason::kNone) return HandlerResult::Stopped(child->stopped, detail);
    if (child->exited && child->exit_code == 0) return HandlerResult::Succeeded(detail);
    return HandlerResult::Failed("exec: " + DescribeExit(*child), detail);
  }

 private:
  Result<ChildSpec> BuildSpec(const HandlerContext& ctx) const {
    APOLLO_RETURN_IF_ERROR(CheckParamsObject("exec", ctx.params));
    auto argv = OptionalStringList("exec", ctx.params, "argv", /*non_empty=*/true);
    if (!argv.ok()) return argv.status();
    if (!argv->has_value()) {
      return Status::InvalidArgument("exec: params.argv must be a non-empty list of strings");
    }
    if ((**argv)[0].empty()) return Status::InvalidArgument("exec: params.argv[0] is empty");
    auto env = OptionalStringMap("exec", ctx.params, "env");
    if (!env.ok()) return env.status();
    auto cwd = OptionalString("exec", ctx.params, "cwd");
    if (!cwd.ok()) return cwd.status();

    ChildSpec spec;
    spec.argv = std::move(**argv);
    spec.env_overrides = HandlerProcessEnv(ctx, *env);
    spec.cwd = cwd->value_or("");
    spec.tail_bytes = options_.tail_bytes;
    spec.kill_grace = options_.kill_grace;
    return spec;
  }

  ProcessOptions options_;
};

}  // namespace

std::unique_ptr<Handler> NewExecHandler(ProcessOptions options) {
  return std::make_unique<ExecHandler>(options);
}

}  // namespace apollo::agent
