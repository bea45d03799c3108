#include "orchestrator/hello_deadlines.h"

#include <algorithm>

#include "core/config_values.h"

namespace apollo::orchestrator {

HelloDeadlines::HelloDeadlines(Duration timeout, const Clock& clock,
                               std::function<void(const std::string&)> log)
    : timeout_(timeout), clock_(clock), log_(std::move(log)) {}

HelloDeadlines::~HelloDeadlines() { Stop(); }

void HelloDeadlines::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void HelloDeadlines::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HelloDeadlines::Add(HelloWaiter* waiter) {
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.count(waiter)) return;
  index_.emplace(waiter, by_deadline_.emplace(clock_.Now() + timeout_, waiter));
}

void HelloDeadlines::Remove(HelloWaiter* waiter) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(waiter);
  if (it == index_.end()) return;
  by_deadline_.erase(it->second);
  index_.erase(it);
}

int HelloDeadlines::Expire(TimePoint now) {
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
      HelloWaiter* w = by_deadline_.begin()->second;
      by_deadline_.erase(by_deadline_.begin());
      index_.erase(w);
      // Under mu_: the stream cannot finish and free itself meanwhile (its
      // OnDone calls Remove first).
      w->HelloTimedOut();
      ++n;
    }
    expired_ += n;
  }
  if (n > 0 && log_) {
    log_("closed " + std::to_string(n) + " agent stream(s) that sent no Hello within " +
         FormatDuration(timeout_));
  }
  return n;
}

size_t HelloDeadlines::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_deadline_.size();
}

int64_t HelloDeadlines::expired_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return expired_;
}

void HelloDeadlines::Loop() {
  // A few sweeps per timeout: a silent stream lives at most timeout + tick.
  const Duration tick = std::clamp<Duration>(timeout_ / 10, std::chrono::milliseconds(10),
                                             std::chrono::milliseconds(250));
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, tick, [this] { return stop_; })) return;
    }
    Expire(clock_.Now());
  }
}

}  // namespace apollo::orchestrator
