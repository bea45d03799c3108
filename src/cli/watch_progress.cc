#include "cli/watch_progress.h"

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/rpc_error.h"
#include "cli/table.h"

namespace apollo::cli {

namespace {

bool InMotion(const std::string& s) {
  return s == "PENDING" || s == "DISPATCHED" || s == "RUNNING" || s == "RETRYING";
}

// retry_policy.max_retries from the task's spec_json; nullopt if absent.
std::optional<int64_t> MaxRetries(const v1::Task& task) {
  auto j = nlohmann::json::parse(task.spec_json(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto policy = j.find("retry_policy");
  if (policy == j.end() || !policy->is_object()) return std::nullopt;
  auto max = policy->find("max_retries");
  if (max == policy->end() || !max->is_number_integer()) return std::nullopt;
  return max->get<int64_t>();
}

}  // namespace

bool IsWatchFinal(const v1::Task& task) {
  const std::string& s = task.status();
  if (s == "SUCCEEDED" || s == "CANCELLED") return true;
  if (s != "FAILED" && s != "TIMEOUT") return false;
  std::optional<int64_t> max_retries = MaxRetries(task);
  for (const auto& n : task.nodes()) {
    if (InMotion(n.status())) return false;
    // FAILED/TIMEOUT with retries left: the supervisor will retry it.
    bool retryable = (n.status() == "FAILED" || n.status() == "TIMEOUT") && !n.permanent();
    if (retryable && max_retries && static_cast<int64_t>(n.retries()) < *max_retries) return false;
  }
  return true;
}

std::string WatchPrinter::Update(const v1::Task& task) {
  std::string out;
  for (const auto& n : task.nodes()) {
    std::string line = n.node_id() + "  " + n.status() + "  attempt " + std::to_string(n.attempt());
    if (n.retries() > 0) line += "  retries " + std::to_string(n.retries());
    if (!n.blocked_reason().empty()) line += "  blocked: " + n.blocked_reason();
    if (!n.last_error().empty()) line += "  error: " + n.last_error();
    line = OneLine(line);
    auto [it, fresh] = nodes_.try_emplace(n.node_id(), line);
    if (!fresh && it->second == line) continue;
    it->second = line;
    out += FormatMicros(n.updated_at_us()) + "  " + line + "\n";
  }
  if (task.status() != status_) {
    status_ = task.status();
    out += OneLine("task " + task.task_id() + ": " + status_) + "\n";
  }
  return out;
}

}  // namespace apollo::cli
