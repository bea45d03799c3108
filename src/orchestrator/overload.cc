#include "orchestrator/overload.h"

#include <algorithm>

namespace apollo::orchestrator {

std::string_view BreakerStateName(BreakerState s) {
  switch (s) {
    case BreakerState::kClosed: return "CLOSED";
    case BreakerState::kOpen: return "OPEN";
    case BreakerState::kHalfOpen: return "HALF_OPEN";
  }
  return "UNKNOWN";
}

bool CircuitBreakers::Allow(const std::string& intent, TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(intent);
  if (it == entries_.end()) return true;
  Entry& e = it->second;
  switch (e.info.state) {
    case BreakerState::kClosed: return true;
    case BreakerState::kOpen:
      if (now - e.info.opened_at < cool_down_) return false;
      e.info.state = BreakerState::kHalfOpen;
      e.probe_out = true;
      return true;
    case BreakerState::kHalfOpen:
      if (e.probe_out) return false;
      e.probe_out = true;
      return true;
  }
  return true;
}

bool CircuitBreakers::Closed(const std::string& intent) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(intent);
  return it == entries_.end() || it->second.info.state == BreakerState::kClosed;
}

bool CircuitBreakers::MakeRoom() {
  if (entries_.size() < max_entries_) return true;
  // Healthy closed breakers first, then closed ones on a failure streak
  // (their count restarts): both say nothing the next outcome cannot.
  for (bool healthy_only : {true, false}) {
    std::erase_if(entries_, [&](const auto& kv) {
      const BreakerInfo& b = kv.second.info;
      return b.state == BreakerState::kClosed && (!healthy_only || b.consecutive_failures == 0);
    });
    if (entries_.size() < max_entries_) return true;
  }
  return false;
}

bool CircuitBreakers::Record(const std::string& intent, bool success, TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!entries_.count(intent) && !MakeRoom()) return false;  // not tracked: no room
  Entry& e = entries_[intent];
  e.info.intent = intent;
  if (success) {
    e.info.state = BreakerState::kClosed;
    e.info.consecutive_failures = 0;
    e.probe_out = false;
    return false;
  }
  ++e.info.consecutive_failures;
  bool trip = e.info.state == BreakerState::kHalfOpen ||
              (e.info.state == BreakerState::kClosed &&
               e.info.consecutive_failures >= failures_to_open_);
  if (!trip) return false;
  e.info.state = BreakerState::kOpen;
  e.info.opened_at = now;
  e.probe_out = false;
  ++e.info.times_opened;
  return true;
}

std::vector<BreakerInfo> CircuitBreakers::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<BreakerInfo> out;
  for (const auto& [intent, e] : entries_) out.push_back(e.info);
  return out;
}

bool TokenBucket::Take(TimePoint now, double keep) {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_ != TimePoint{}) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + std::max(0.0, elapsed) * rate_);
  }
  last_ = now;
  if (tokens_ < 1 + keep) {
    ++refused_;
    return false;
  }
  tokens_ -= 1;
  ++taken_;
  return true;
}

size_t CircuitBreakers::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

double TokenBucket::tokens(TimePoint now) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_ == TimePoint{}) return tokens_;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  return std::min(burst_, tokens_ + std::max(0.0, elapsed) * rate_);
}

int64_t TokenBucket::taken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taken_;
}

int64_t TokenBucket::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

Watermarks::Change Watermarks::Update(int64_t depth) {
  std::lock_guard<std::mutex> lock(mu_);
  depth_ = depth;
  double fill = capacity_ > 0 ? static_cast<double>(depth) / static_cast<double>(capacity_) : 0;
  if (!paused_ && fill > pause_at_) {
    paused_ = alerting_ = true;
    return Change::kPaused;
  }
  if (paused_ && fill < alert_at_) {
    paused_ = alerting_ = false;
    return Change::kResumed;
  }
  if (!alerting_ && fill > alert_at_) {
    alerting_ = true;
    return Change::kAlert;
  }
  if (alerting_ && !paused_ && fill < alert_at_) {
    alerting_ = false;
    return Change::kCleared;
  }
  return Change::kNone;
}

bool Watermarks::paused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_;
}

bool Watermarks::alerting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return alerting_;
}

int64_t Watermarks::depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return depth_;
}

}  // namespace apollo::orchestrator
