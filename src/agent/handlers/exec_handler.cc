// exec: runs params.argv directly (no shell unless argv names one), with
// optional params.env and params.cwd. Off unless the agent's config enables
// it (the registry then answers "exec is disabled on this node").
//
// Environment: never the agent's own. The child gets PATH=/usr/bin:/bin,
// HOME (the agent user's home directory) and LANG=C.UTF-8, then params.env
// on top, then APOLLO_TASK_ID/ATTEMPT/NODE_ID/INTENT, which params cannot
// override.
//
// Policy (ExecPolicy): with allowed_commands set, argv[0] is resolved on
// the child's PATH first and the absolute path that would run must match
// one of the patterns; argv[0] must then be a bare name or an absolute path
// without "." / ".." components, and params.env may not set variables that
// make the loader or a shell run other code (LD_*, BASH_ENV, ENV,
// BASH_FUNC_*). A refusal is a permanent FAILED and nothing runs.
//
// Progress: a stdout line "::progress:: 0.4 message" (or "40%") updates
// the run's progress (progress_line.h); such lines are left out of
// stdout_tail. Other lines are output as always.
//
// SUCCEEDED on exit 0 with {"exit_code", "stdout_tail", "stderr_tail"};
// FAILED (transient) on any other exit or a death by signal, with the same
// detail. Cancel / timeout stop the child's whole process group
// (child_process.h).

#include <fnmatch.h>
#include <pwd.h>
#include <unistd.h>

#include <vector>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/child_spawn.h"
#include "agent/handlers/params.h"
#include "agent/handlers/process_result.h"
#include "agent/handlers/progress_line.h"
#include "core/config_values.h"

namespace apollo::agent {
namespace {

using nlohmann::json;

// The home directory of the user the agent runs as; "/" if it has none.
std::string AgentUserHome() {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  struct passwd pw = {};
  struct passwd* found = nullptr;
  if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr ||
      pw.pw_dir == nullptr || pw.pw_dir[0] != '/') {
    return "/";
  }
  return pw.pw_dir;
}

// Names a task may not set while allowed_commands holds: each lets the
// dynamic loader or a shell run code other than the allowed command.
bool InjectsCode(const std::string& name) {
  return name.rfind("LD_", 0) == 0 || name.rfind("BASH_FUNC_", 0) == 0 || name == "BASH_ENV" ||
         name == "ENV";
}

Status CheckEnvNames(const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) {
    if (k.empty() || k.find_first_of(std::string("=\0", 2)) != std::string::npos) {
      return Status::InvalidArgument("exec: params.env name '" + k +
                                     "' is not a valid variable name");
    }
    if (v.find('\0') != std::string::npos) {
      return Status::InvalidArgument("exec: params.env." + k + " contains a NUL character");
    }
  }
  return Status::Ok();
}

std::string JoinPatterns(const std::vector<std::string>& patterns) {
  std::string out;
  for (const auto& p : patterns) out += (out.empty() ? "" : ", ") + p;
  return out;
}

class ExecHandler final : public Handler {
 public:
  ExecHandler(ProcessOptions options, ExecPolicy policy)
      : options_(options), policy_(std::move(policy)) {}

  HandlerResult Run(const HandlerContext& ctx) override {
    Result<ChildSpec> spec = BuildSpec(ctx);
    if (!spec.ok()) {
      // Bad params and policy refusals are permanent; a command that is
      // not there (yet) may be installed by the time of a retry.
      if (spec.status().code() == StatusCode::kNotFound ||
          spec.status().code() == StatusCode::kPermissionDenied) {
        return HandlerResult::Failed("exec: " + spec.status().message());
      }
      return HandlerResult::Refused(spec.status().message());
    }
    ChildCallbacks callbacks;
    callbacks.on_stdout_line = [&ctx](std::string_view line) {
      if (auto p = ParseProgressLine(line)) ctx.ReportProgress(p->fraction, std::move(p->message));
    };
    callbacks.hidden_prefix = kProgressMarker;
    callbacks.hide_line = [](std::string_view line) { return ParseProgressLine(line).has_value(); };
    Result<ChildOutcome> child = RunChild(*spec, ctx.Stop(), callbacks);
    if (!child.ok()) {
      return HandlerResult::Failed("exec: " + child.status().message(),
                                   {{"argv", spec->argv}});
    }
    json detail = ChildDetail(*child);
    if (child->stopped != StopReason::kNone) return HandlerResult::Stopped(child->stopped, detail);
    if (child->exited && child->exit_code == 0) return HandlerResult::Succeeded(detail);
    return HandlerResult::Failed("exec: " + DescribeExit(*child), detail);
  }

 private:
  // InvalidArgument (bad params) and FailedPrecondition (policy) are
  // refusals; NotFound / PermissionDenied come from resolving argv[0].
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
    APOLLO_RETURN_IF_ERROR(CheckEnvNames(*env));
    auto cwd = OptionalString("exec", ctx.params, "cwd");
    if (!cwd.ok()) return cwd.status();

    std::map<std::string, std::string> child_env = {
        {"PATH", kExecPath}, {"HOME", AgentUserHome()}, {"LANG", "C.UTF-8"}};
    for (const auto& [k, v] : *env) child_env[k] = v;

    ChildSpec spec;
    spec.argv = std::move(**argv);
    spec.env_overrides = HandlerProcessEnv(ctx, child_env);
    spec.inherit_env = false;
    spec.cwd = cwd->value_or("");
    spec.tail_bytes = options_.tail_bytes;
    spec.kill_grace = options_.kill_grace;
    if (!policy_.allowed_commands.empty()) {
      auto exe = AllowedExecutable(spec.argv[0], spec.env_overrides);
      if (!exe.ok()) return exe.status();
      spec.executable = *exe;
    }
    return spec;
  }

  // The absolute path argv[0] runs as, if the policy allows it. A bare
  // name is looked up on the child's PATH first (as execvp would), so a
  // PATH set in params cannot smuggle in another program of that name.
  Result<std::string> AllowedExecutable(const std::string& name,
                                        const std::map<std::string, std::string>& env) const {
    for (const auto& [k, v] : env) {
      if (InjectsCode(k)) {
        return Status::FailedPrecondition("exec: params.env may not set " + k +
                                          " on this node (allowed_commands is set)");
      }
    }
    std::string exe = name;
    if (name.find('/') == std::string::npos) {
      auto path = env.find("PATH");
      Result<std::string> found =
          ResolveExecutable(name, path != env.end() ? path->second : kExecPath);
      if (!found.ok()) return found.status();
      exe = *found;
    }
    if (exe[0] != '/' || HasDotComponent(exe)) {
      return Status::FailedPrecondition(
          "exec: argv[0] '" + name + "' must be a command name or an absolute path without "
          "'.' or '..' components on this node (allowed_commands is set); it resolves to '" +
          exe + "'");
    }
    for (const std::string& pattern : policy_.allowed_commands) {
      if (fnmatch(pattern.c_str(), exe.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) return exe;
    }
    return Status::FailedPrecondition("exec: " + exe + " is not allowed on this node "
                                      "(allowed_commands: " +
                                      JoinPatterns(policy_.allowed_commands) + ")");
  }

  ProcessOptions options_;
  ExecPolicy policy_;
};

}  // namespace

std::unique_ptr<Handler> NewExecHandler(ProcessOptions options, ExecPolicy policy) {
  return std::make_unique<ExecHandler>(options, std::move(policy));
}

}  // namespace apollo::agent
