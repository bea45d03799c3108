#include "agent/handlers/registry.h"

#include <algorithm>

#include "agent/handlers/params.h"
#include "core/config_values.h"

namespace apollo::agent {

std::vector<std::string> BuiltinIntentNames() {
  return {"collect_metrics", "ensure_file", "exec", "noop", "sleep"};
}

std::vector<std::string> DefaultEnabledBuiltins() {
  return {"collect_metrics", "ensure_file", "noop", "sleep"};
}

namespace {

// Policy paths must be absolute and plain: they are compared with what a
// task names, which may not contain "." or ".." either.
Status CheckPolicyPaths(const HandlerConfig& config) {
  auto check = [](std::string_view what, const std::string& p) -> Status {
    if (p.empty() || p[0] != '/' || HasDotComponent(p) || p.find('\0') != std::string::npos) {
      return Status::InvalidArgument("handlers: " + std::string(what) + " '" + p +
                                     "' must be an absolute path without '.' or '..'");
    }
    return Status::Ok();
  };
  for (const auto& c : config.exec.allowed_commands) {
    APOLLO_RETURN_IF_ERROR(check("exec allowed command", c));
  }
  for (const auto& d : config.ensure_file.allowed_dirs) {
    APOLLO_RETURN_IF_ERROR(check("ensure_file allowed dir", d));
  }
  return Status::Ok();
}

HandlerFactory BuiltinFactory(const std::string& name, const HandlerConfig& config) {
  if (name == "noop") return [] { return NewNoopHandler(); };
  if (name == "sleep") return [] { return NewSleepHandler(); };
  if (name == "ensure_file") {
    return [policy = config.ensure_file] { return NewEnsureFileHandler(policy); };
  }
  if (name == "collect_metrics") {
    return [root = config.proc_root, paths = config.metrics_paths] {
      return NewCollectMetricsHandler(root, paths);
    };
  }
  if (name == "exec") {
    return [opts = config.process, policy = config.exec] { return NewExecHandler(opts, policy); };
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<HandlerRegistry>> HandlerRegistry::Create(const HandlerConfig& config) {
  APOLLO_RETURN_IF_ERROR(CheckPolicyPaths(config));
  auto registry = std::make_unique<HandlerRegistry>();
  const std::vector<std::string> builtins = BuiltinIntentNames();
  for (const std::string& name : config.enabled_builtins) {
    HandlerFactory factory = BuiltinFactory(name, config);
    if (!factory) return Status::InvalidArgument("handlers: unknown built-in intent '" + name + "'");
    APOLLO_RETURN_IF_ERROR(registry->Register(name, std::move(factory)));
  }
  for (const std::string& name : builtins) {
    if (!registry->Has(name)) registry->disabled_.push_back(name);
  }
  for (const auto& [name, path] : config.external) {
    if (std::find(builtins.begin(), builtins.end(), name) != builtins.end()) {
      return Status::InvalidArgument("handlers: external handler '" + name +
                                     "' clashes with a built-in intent");
    }
    if (path.empty() || path[0] != '/') {
      return Status::InvalidArgument("handlers: external handler '" + name +
                                     "' needs an absolute path, got '" + path + "'");
    }
    APOLLO_RETURN_IF_ERROR(registry->Register(
        name, [path = path, opts = config.process] { return NewExternalHandler(path, opts); }));
  }
  return registry;
}

Status HandlerRegistry::Register(std::string intent, HandlerFactory factory) {
  if (intent.empty() || !factory) {
    return Status::InvalidArgument("handlers: empty intent name or factory");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (factories_.count(intent) != 0) {
    return Status::AlreadyExists("handlers: intent '" + intent + "' registered twice");
  }
  factories_.emplace(std::move(intent), std::move(factory));
  return Status::Ok();
}

Result<std::unique_ptr<Handler>> HandlerRegistry::NewHandler(std::string_view intent) const {
  HandlerFactory factory;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = factories_.find(intent);
    if (it == factories_.end()) {
      const std::string name(intent);
      if (std::find(disabled_.begin(), disabled_.end(), name) != disabled_.end()) {
        return Status::PermissionDenied(
            name + " is disabled on this node; enable it with 'enabled_intents' in the agent "
            "config or with edge-agent --enable-intent " + name);
      }
      return Status::NotFound("unknown intent " + name);
    }
    factory = it->second;
  }
  std::unique_ptr<Handler> handler = factory();
  if (!handler) return Status::Internal("handler factory for " + std::string(intent) + " failed");
  return handler;
}

bool HandlerRegistry::Has(std::string_view intent) const {
  std::lock_guard<std::mutex> lock(mu_);
  return factories_.find(intent) != factories_.end();
}

std::vector<std::string> HandlerRegistry::Intents() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& entry : factories_) out.push_back(entry.first);
  return out;
}

std::vector<std::string> HandlerRegistry::DisabledIntents() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& name : disabled_) {
    if (factories_.find(name) == factories_.end()) out.push_back(name);  // not Register()ed since
  }
  return out;
}

HandlerResult UnavailableIntentResult(std::string_view intent, const Status& why) {
  nlohmann::json detail = {{"intent", std::string(intent)}};
  // Unknown or disabled here: the same every time. Anything else (a
  // factory that failed) may not be.
  if (why.code() == StatusCode::kNotFound || why.code() == StatusCode::kPermissionDenied) {
    return HandlerResult::Refused(why.message(), std::move(detail));
  }
  return HandlerResult::Failed(why.message(), std::move(detail));
}

HandlerResult UnknownIntentResult(std::string_view intent) {
  return UnavailableIntentResult(intent, Status::NotFound("unknown intent " + std::string(intent)));
}

}  // namespace apollo::agent
