#pragma once

// Which intents this agent can run, and a fresh handler for each run.
//
// Built from the agent's config: only the built-ins it enables and the
// external handlers it names are runnable. A built-in it does not enable is
// PermissionDenied "<name> is disabled on this node ..."; anything else is
// NotFound "unknown intent <name>". The executor answers both as a
// permanent FAILED without running anything (UnavailableIntentResult).
//
// Thread-safety: all methods are safe to call concurrently.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/handler.h"
#include "core/status.h"

namespace apollo::agent {

// "collect_metrics", "ensure_file", "exec", "noop", "sleep".
std::vector<std::string> BuiltinIntentNames();
// The built-ins on unless configured off: all but exec, which runs any
// command and so must be enabled on purpose.
std::vector<std::string> DefaultEnabledBuiltins();

struct HandlerConfig {
  // Built-in intents that may run. Default: DefaultEnabledBuiltins().
  std::vector<std::string> enabled_builtins = DefaultEnabledBuiltins();
  // External handlers: intent name -> absolute path of the executable.
  std::map<std::string, std::string> external;
  ProcessOptions process;
  ExecPolicy exec;
  EnsureFilePolicy ensure_file;
  std::vector<std::string> metrics_paths = {"/"};  // collect_metrics' disks
  std::string proc_root = "/proc";  // collect_metrics reads here
};

class HandlerRegistry {
 public:
  HandlerRegistry() = default;

  // Registers what `config` enables. InvalidArgument for an unknown
  // built-in, an external name that is empty or clashes with a built-in,
  // an external path that is not absolute, or a policy path (allowed
  // command, allowed dir) that is not absolute or has "." / ".." in it.
  static Result<std::unique_ptr<HandlerRegistry>> Create(const HandlerConfig& config);

  // AlreadyExists if `intent` is taken; InvalidArgument if empty or null.
  Status Register(std::string intent, HandlerFactory factory);

  // A fresh handler; PermissionDenied "<name> is disabled on this node ..."
  // for a built-in not enabled, NotFound "unknown intent <name>" otherwise.
  Result<std::unique_ptr<Handler>> NewHandler(std::string_view intent) const;

  bool Has(std::string_view intent) const;
  std::vector<std::string> Intents() const;  // sorted; for the Hello message
  // Built-ins this node does not run (sorted; Hello.disabled_intents).
  std::vector<std::string> DisabledIntents() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, HandlerFactory, std::less<>> factories_;  // guarded by mu_
  std::vector<std::string> disabled_;  // guarded by mu_; filled by Create
};

// The FAILED for an intent NewHandler() did not give, `why` being its
// status: permanent for a disabled or unknown intent, else transient.
HandlerResult UnavailableIntentResult(std::string_view intent, const Status& why);
// FAILED (permanent) "unknown intent <name>".
HandlerResult UnknownIntentResult(std::string_view intent);

}  // namespace apollo::agent
