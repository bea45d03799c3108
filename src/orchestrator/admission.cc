#include "orchestrator/admission.h"

#include <algorithm>

namespace apollo::orchestrator {
namespace {
// Reconciled handshakes counted for the pace.
constexpr Duration kPaceSpan = std::chrono::seconds(2);
// What a refused agent is told, at least and at most.
constexpr Duration kMinRetryAfter = std::chrono::milliseconds(250);
constexpr Duration kMaxRetryAfter = std::chrono::minutes(2);
// A refused node not seen again for this long no longer counts as waiting.
constexpr Duration kForgetWaiting = std::chrono::minutes(2);
}  // namespace

Admission::Admission(AdmissionOptions options)
    : options_(options),
      rate_(std::max(1.0, options_.max_per_s), std::max(1.0, options_.max_per_s)),
      window_(std::clamp(options_.initial_window, std::max(1, options_.min_window),
                         std::max(options_.min_window, options_.max_window))) {}

std::optional<uint64_t> Admission::TryAdmit(TimePoint now, const std::string& node) {
  Expire(now);
  // The window first: a Hello it refuses takes no token.
  if (static_cast<double>(in_flight_.size()) >= window_ || !rate_.Take(now)) {
    ++refused_;
    return std::nullopt;
  }
  ++admitted_;
  if (!node.empty()) waiting_.erase(node);
  uint64_t ticket = next_ticket_++;
  in_flight_.emplace(ticket, now);
  return ticket;
}

void Admission::Reconciled(uint64_t ticket, Duration center_time, TimePoint now) {
  auto it = in_flight_.find(ticket);
  if (it == in_flight_.end()) return;
  // Used: the window, not the agents' arrival, limited what was admitted.
  const bool window_used = 2 * in_flight_.size() >= static_cast<size_t>(window_);
  const Duration took = center_time;
  in_flight_.erase(it);
  reconciled_.push_back(now);
  while (now - reconciled_.front() > kPaceSpan) reconciled_.pop_front();
  if (took > options_.target) {
    Shrink(now);
  } else if (window_used) {
    // Far below the target: one more per handshake (the window doubles per
    // round); nearing it: one more per round, so it does not overshoot by
    // the handshakes still on their way when the first slow one reports.
    double step = took <= options_.target / 2 ? 1.0 : 1.0 / window_;
    window_ = std::min<double>(options_.max_window, window_ + step);
  }
}

void Admission::Abandoned(uint64_t ticket) { in_flight_.erase(ticket); }

Duration Admission::RetryAfter(const std::string& node, TimePoint now) {
  // The pace the center can take handshakes at: the fastest it reconciled
  // them over any kPaceSpan so far, or what the window allows if each takes
  // the target, the higher. Not the pace of the last seconds: while the
  // refused wait, few handshakes happen, and a wait sized on that would
  // feed on itself (measured: the center idle while 3,000 agents slept).
  while (!reconciled_.empty() && now - reconciled_.front() > kPaceSpan) reconciled_.pop_front();
  const double span_s = std::chrono::duration<double>(kPaceSpan).count();
  peak_pace_ = std::max(peak_pace_, static_cast<double>(reconciled_.size()) / span_s);
  double pace =
      std::max(peak_pace_,
               window_ / std::max(0.001, std::chrono::duration<double>(options_.target).count()));
  pace = std::clamp(pace, 1.0, std::max(1.0, options_.max_per_s));
  // The waiting: this node now, and the others refused lately.
  waiting_[node] = now;
  waiting_order_.emplace_back(now, node);
  while (!waiting_order_.empty() && now - waiting_order_.front().first > kForgetWaiting) {
    auto it = waiting_.find(waiting_order_.front().second);
    if (it != waiting_.end() && it->second == waiting_order_.front().first) waiting_.erase(it);
    waiting_order_.pop_front();
  }
  const double all_in_s = static_cast<double>(waiting_.size()) / pace;
  std::uniform_real_distribution<double> moment(0, all_in_s);
  const auto after =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(moment(rng_)));
  return std::clamp<Duration>(after, kMinRetryAfter, kMaxRetryAfter);
}

void Admission::Expire(TimePoint now) {
  // Not a sign of the center's load (that shows in center_time): the agent
  // went quiet. Only its slot is given back.
  while (!in_flight_.empty() && now - in_flight_.begin()->second > options_.expire) {
    in_flight_.erase(in_flight_.begin());
  }
}

void Admission::Shrink(TimePoint now) {
  // Once per target: the handshakes admitted before the last cut all report
  // the same overload, and must not cut it again each.
  if (shrunk_at_ != TimePoint{} && now - shrunk_at_ < options_.target) return;
  shrunk_at_ = now;
  window_ = std::max<double>(options_.min_window, window_ * 0.75);
}

}  // namespace apollo::orchestrator
