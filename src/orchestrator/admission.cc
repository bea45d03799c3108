#include "orchestrator/admission.h"

#include <algorithm>

namespace apollo::orchestrator {

Admission::Admission(AdmissionOptions options)
    : options_(options),
      rate_(std::max(1.0, options_.max_per_s), std::max(1.0, options_.max_per_s)),
      window_(std::clamp(options_.initial_window, std::max(1, options_.min_window),
                         std::max(options_.min_window, options_.max_window))) {}

std::optional<uint64_t> Admission::TryAdmit(TimePoint now) {
  Expire(now);
  // The window first: a Hello it refuses takes no token.
  if (static_cast<double>(in_flight_.size()) >= window_ || !rate_.Take(now)) {
    ++refused_;
    return std::nullopt;
  }
  ++admitted_;
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
