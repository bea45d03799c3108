#include "orchestrator/alert_notifier.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace apollo::orchestrator {

AlertNotifier::AlertNotifier(AlertNotifierOptions options, store::StateStore& store,
                             HttpPoster& poster, const Clock& clock)
    : options_(std::move(options)), store_(store), poster_(poster), clock_(clock) {}

AlertNotifier::~AlertNotifier() { Stop(); }

void AlertNotifier::Start() {
  if (options_.webhook_url.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void AlertNotifier::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AlertNotifier::Kick() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    kicked_ = true;
  }
  cv_.notify_one();
}

std::string AlertNotifier::Body(const store::AlertRow& a) {
  nlohmann::json j{{"id", a.id},           {"kind", a.kind},     {"node_id", a.node_id},
                   {"task_id", a.task_id}, {"detail", a.detail}, {"at", FormatRfc3339(a.at)}};
  if (a.from) j["from"] = TaskStateName(*a.from);
  if (a.to) j["to"] = TaskStateName(*a.to);
  if (!a.event_id.empty()) j["event_id"] = a.event_id;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Duration AlertNotifier::Backoff(const AlertNotifierOptions& options, int attempts) {
  Duration d = options.initial_backoff * (int64_t{1} << std::clamp(attempts - 1, 0, 20));
  return std::min(d, options.max_backoff);
}

void AlertNotifier::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    kicked_ = false;
    lock.unlock();
    bool ok = DeliverDue();
    lock.lock();
    if (stop_) break;
    // A full batch may have more behind it: go on at once (the store holds
    // the rest, not this process).
    if (ok && kicked_) continue;
    cv_.wait_for(lock, options_.poll, [this] { return stop_ || kicked_; });
  }
}

bool AlertNotifier::DeliverDue() {
  auto due = store_.DueAlertDeliveries(clock_.Now(), options_.batch);
  if (!due.ok()) return false;
  for (const store::AlertRow& a : *due) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return true;
    }
    // The webhook is the operator's own configuration: no address check.
    Status s = poster_.Post(options_.webhook_url, Body(a), options_.timeout, options_.headers, "");
    const int attempts = a.attempts + 1;
    if (s.ok()) {
      (void)store_.SetAlertDelivery(a.id, store::AlertDelivery::kDelivered, attempts, "delivered",
                                    std::nullopt);
      continue;
    }
    // A 4xx other than 429 will not get better by itself, but the receiver
    // may be fixed: keep trying, on the same backoff, until max_attempts.
    if (attempts >= options_.max_attempts) {
      (void)store_.SetAlertDelivery(
          a.id, store::AlertDelivery::kGaveUp, attempts,
          "gave up after " + std::to_string(attempts) + " attempt(s): " + s.message(),
          std::nullopt);
      continue;
    }
    (void)store_.SetAlertDelivery(a.id, store::AlertDelivery::kFailing, attempts, s.message(),
                                  clock_.Now() + Backoff(options_, attempts));
  }
  if (static_cast<int>(due->size()) >= options_.batch) {
    std::lock_guard<std::mutex> lock(mu_);
    kicked_ = true;
  }
  return true;
}

}  // namespace apollo::orchestrator
