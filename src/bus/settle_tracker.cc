#include "bus/settle_tracker.h"

#include <algorithm>

namespace apollo::bus {

std::future<Result<PublishAck>> SettleTracker::Register(const std::string& node,
                                                        const std::vector<uint64_t>& seqs,
                                                        Duration timeout) {
  auto w = std::make_shared<Waiter>();
  std::future<Result<PublishAck>> f = w->promise.get_future();
  if (seqs.empty()) {
    w->promise.set_value(PublishAck{});
    return f;
  }
  w->remaining = seqs.size();
  w->ack.outcomes.assign(seqs.size(), std::nullopt);
  for (size_t i = 0; i < seqs.size(); ++i) w->index.emplace(seqs[i], i);
  w->deadline = clock_.Now() + timeout;
  std::lock_guard<std::mutex> lock(mu_);
  auto& m = by_node_[node];
  for (uint64_t s : seqs) m.emplace(s, w);
  w->by_deadline = by_deadline_.emplace(w->deadline, w);
  return f;
}

void SettleTracker::SettleLocked(const std::string& node, uint64_t seq, bool committed,
                                 uint64_t acked, std::optional<store::Outcome> outcome,
                                 std::vector<WaiterPtr>& finished) {
  auto n = by_node_.find(node);
  if (n == by_node_.end()) return;
  auto [lo, hi] = n->second.equal_range(seq);
  for (auto it = lo; it != hi; ++it) {
    Waiter& w = *it->second;
    if (w.done) continue;
    auto [ilo, ihi] = w.index.equal_range(seq);
    for (auto i = ilo; i != ihi; ++i) w.ack.outcomes[i->second] = outcome;
    if (committed) {
      ++w.ack.committed;
      w.ack.acked_seq = std::max(w.ack.acked_seq, acked);
    } else {
      ++w.ack.dead_lettered;
    }
    if (--w.remaining == 0) {
      w.done = true;
      finished.push_back(it->second);
      by_deadline_.erase(w.by_deadline);
    }
  }
  n->second.erase(lo, hi);
  if (n->second.empty()) by_node_.erase(n);
}

void SettleTracker::Finish(std::vector<WaiterPtr>& finished) {
  for (WaiterPtr& w : finished) w->promise.set_value(w->ack);
}

namespace {
constexpr size_t kRememberMax = 100'000;  // per node
}  // namespace

void SettleTracker::Remember(const std::string& node, uint64_t seq, bool committed) {
  auto& m = remembered_[node];
  m[seq] = committed;
  if (m.size() > kRememberMax) m.erase(m.begin());
}

void SettleTracker::SettleRemembered(const std::string& node, uint64_t hwm) {
  std::vector<WaiterPtr> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto r = remembered_.find(node);
    auto n = by_node_.find(node);
    if (r == remembered_.end() || n == by_node_.end()) return;
    std::vector<std::pair<uint64_t, bool>> hits;
    for (auto& [seq, w] : n->second) {
      auto it = r->second.find(seq);
      if (it != r->second.end() && (hits.empty() || hits.back().first != seq)) {
        hits.emplace_back(seq, it->second);
      }
    }
    for (auto [seq, committed] : hits) {
      std::optional<store::Outcome> o;
      if (committed) o = store::Outcome::kDuplicate;
      SettleLocked(node, seq, committed, hwm, o, finished);
    }
  }
  Finish(finished);
}

void SettleTracker::Committed(const std::string& node, uint64_t seq, uint64_t acked_seq,
                              store::Outcome outcome) {
  CommittedAll({Commit{node, seq, acked_seq, outcome}});
}

void SettleTracker::CommittedAll(const std::vector<Commit>& commits) {
  std::vector<WaiterPtr> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // node -> the mark swept below: the highest reported, but never above
    // this op's own highest event. Everything at or below it is stored,
    // whoever committed it (e.g. a consumer that died after its commit,
    // before its ack). Above this op's events the mark may cover a later op
    // that committed in the same store transaction (ops are pipelined and
    // the store merges queued ones) and reports next, with its events' real
    // outcomes: sweeping them here as duplicates would lose those (an
    // applied SUCCEEDED then triggers no callback, an applied FAILED counts
    // for no breaker). Below them, an event still carried by an op that
    // has not reported (Carry) is left to that op, for the same reason.
    std::map<std::string, uint64_t> marks, own;
    for (const Commit& c : commits) {
      UncarryLocked(c.node, c.seq);
      if (c.seq > c.acked_seq) Remember(c.node, c.seq, true);
      SettleLocked(c.node, c.seq, true, c.acked_seq, c.outcome, finished);
      uint64_t& m = marks[c.node];
      m = std::max(m, c.acked_seq);
      uint64_t& o = own[c.node];
      o = std::max(o, c.seq);
    }
    for (const auto& [node, mark] : marks) {
      SettleUpToLocked(node, std::min(mark, own[node]), finished);
    }
  }
  Finish(finished);
}

void SettleTracker::DeadLettered(const std::string& node, uint64_t seq) {
  std::vector<WaiterPtr> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    UncarryLocked(node, seq);
    Remember(node, seq, false);
    SettleLocked(node, seq, false, 0, std::nullopt, finished);
  }
  Finish(finished);
}

void SettleTracker::SettleUpToLocked(const std::string& node, uint64_t hwm,
                                     std::vector<WaiterPtr>& finished) {
  if (auto r = remembered_.find(node); r != remembered_.end()) {
    r->second.erase(r->second.begin(), r->second.upper_bound(hwm));
    if (r->second.empty()) remembered_.erase(r);
  }
  auto n = by_node_.find(node);
  if (n == by_node_.end()) return;
  auto carried = carried_.find(node);
  std::vector<uint64_t> seqs;
  for (auto it = n->second.begin(); it != n->second.end() && it->first <= hwm; ++it) {
    // Still in an op that has not reported: that op settles it, with its outcome.
    if (carried != carried_.end() && carried->second.count(it->first)) continue;
    if (seqs.empty() || seqs.back() != it->first) seqs.push_back(it->first);
  }
  for (uint64_t s : seqs) SettleLocked(node, s, true, hwm, store::Outcome::kDuplicate, finished);
}

void SettleTracker::Carry(const std::string& node, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  carried_[node].insert(seq);
}

void SettleTracker::Uncarry(const std::string& node, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  UncarryLocked(node, seq);
}

void SettleTracker::UncarryLocked(const std::string& node, uint64_t seq) {
  auto c = carried_.find(node);
  if (c == carried_.end()) return;
  if (auto it = c->second.find(seq); it != c->second.end()) c->second.erase(it);
  if (c->second.empty()) carried_.erase(c);
}

void SettleTracker::CommittedUpTo(const std::string& node, uint64_t hwm) {
  std::vector<WaiterPtr> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    SettleUpToLocked(node, hwm, finished);
  }
  Finish(finished);
}

void SettleTracker::Expire() {
  std::vector<WaiterPtr> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TimePoint now = clock_.Now();
    while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
      WaiterPtr w = by_deadline_.begin()->second;
      by_deadline_.erase(by_deadline_.begin());
      w->done = true;  // only waiters not done are in by_deadline_
      expired.push_back(w);
    }
  }
  for (WaiterPtr& w : expired) {
    w->promise.set_value(Status::DeadlineExceeded(
        "events held by the bus but not committed in time; the agent resends them"));
  }
}

void SettleTracker::FailAll(const Status& status) {
  std::vector<WaiterPtr> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [d, w] : by_deadline_) {
      w->done = true;
      all.push_back(w);
    }
    by_deadline_.clear();
    by_node_.clear();
    carried_.clear();
  }
  for (WaiterPtr& w : all) w->promise.set_value(status);
}

size_t SettleTracker::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_deadline_.size();
}

}  // namespace apollo::bus
