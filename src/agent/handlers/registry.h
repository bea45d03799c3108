#pragma once

// Which intents this agent can run, and a fresh handler for each run.
//
// Built from the agent's config: only the built-ins it enables and the
// external handlers it names are runnable. Anything else is NotFound
// "unknown intent <name>", which the executor answers as FAILED without
// running anything (UnknownIntentResult).
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

struct HandlerConfig {
  // Built-in intents that may run. Default: all of them.
  std::vector<std::string> enabled_builtins = BuiltinIntentNames();
  // External handlers: intent name -> absolute path of the executable.
  std::map<std::string, std::string> external;
  ProcessOptions process;
  std::vector<std::string> metrics_paths = {"/"};  // collect_metrics' disks
  std::string proc_root = "/proc";  // collect_metrics reads here
};

class HandlerRegistry {
 public:
  HandlerRegistry() = default;

  // Registers what `config` enables. InvalidArgument for an unknown
  // built-in, an external name that is empty or clashes with a built-in,
  // or an external path that is not absolute.
  static Result<std::unique_ptr<HandlerRegistry>> Create(const HandlerConfig& config);

  // AlreadyExists if `intent` is taken; InvalidArgument if empty or null.
  Status Register(std::string intent, HandlerFactory factory);

  // A fresh handler, or NotFound "unknown intent <name>".
  Result<std::unique_ptr<Handler>> NewHandler(std::string_view intent) const;

  bool Has(std::string_view intent) const;
  std::vector<std::string> Intents() const;  // sorted; for the Hello message

 private:
  mutable std::mutex mu_;
  std::map<std::string, HandlerFactory, std::less<>> factories_;  // guarded by mu_
};

// FAILED "unknown intent <name>", for the executor.
HandlerResult UnknownIntentResult(std::string_view intent);

}  // namespace apollo::agent
