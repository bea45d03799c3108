#include "agent/handlers/registry.h"

#include <algorithm>

namespace apollo::agent {

std::vector<std::string> BuiltinIntentNames() {
  return {"collect_metrics", "ensure_file", "exec", "noop", "sleep"};
}

namespace {

HandlerFactory BuiltinFactory(const std::string& name, const HandlerConfig& config) {
  if (name == "noop") return [] { return NewNoopHandler(); };
  if (name == "sleep") return [] { return NewSleepHandler(); };
  if (name == "ensure_file") return [] { return NewEnsureFileHandler(); };
  if (name == "collect_metrics") {
    return [root = config.proc_root, paths = config.metrics_paths] {
      return NewCollectMetricsHandler(root, paths);
    };
  }
  if (name == "exec") {
    return [opts = config.process] { return NewExecHandler(opts); };
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<HandlerRegistry>> HandlerRegistry::Create(const HandlerConfig& config) {
  auto registry = std::make_unique<HandlerRegistry>();
  const std::vector<std::string> builtins = BuiltinIntentNames();
  for (const std::string& name : config.enabled_builtins) {
    HandlerFactory factory = BuiltinFactory(name, config);
    if (!factory) return Status::InvalidArgument("handlers: unknown built-in intent '" + name + "'");
    APOLLO_RETURN_IF_ERROR(registry->Register(name, std::move(factory)));
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
    if (it == factories_.end()) return Status::NotFound("unknown intent " + std::string(intent));
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

HandlerResult UnknownIntentResult(std::string_view intent) {
  return HandlerResult::Failed("unknown intent " + std::string(intent),
                               {{"intent", std::string(intent)}});
}

}  // namespace apollo::agent
