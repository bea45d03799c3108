#include "store/engine/apply_op.h"

#include <algorithm>
#include <memory>
#include <string_view>

#include "store/engine/write_paths.h"

namespace apollo::store::engine {

Status ApplyOp::Run(WriteTxn& txn) {
  WriteOp* self = this;
  return RunMerged(txn, {&self, 1});
}

Status ApplyOp::RunMerged(WriteTxn& txn, std::span<WriteOp* const> group) {
  std::vector<ApplyOp*> ops;
  std::vector<const Event*> all;
  for (WriteOp* w : group) {
    auto* op = static_cast<ApplyOp*>(w);  // only ApplyOps are Mergeable
    ops.push_back(op);
    op->result_.reset();
    op->changes_.clear();
    for (const Event& e : op->events_) all.push_back(&e);
  }
  Result<ApplyResult> merged =
      ApplyEvents(txn, all, listener_.empty() ? nullptr : &ops.front()->changes_);
  if (!merged.ok()) {
    for (ApplyOp* op : ops) op->result_.emplace(merged.status());
    return merged.status();
  }
  if (ops.size() == 1) {  // the whole result is this op's
    ops[0]->result_.emplace(std::move(*merged));
    return Status::Ok();
  }
  size_t next = 0;
  for (ApplyOp* op : ops) {
    ApplyResult mine;
    mine.outcomes.assign(
        merged->outcomes.begin() + static_cast<std::ptrdiff_t>(next),
        merged->outcomes.begin() + static_cast<std::ptrdiff_t>(next + op->events_.size()));
    next += op->events_.size();
    for (const Event& e : op->events_) {
      auto it = merged->acked_seq.find(e.node_id);
      if (it != merged->acked_seq.end()) mine.acked_seq[e.node_id] = it->second;
    }
    op->result_.emplace(std::move(mine));
  }
  return Status::Ok();
}

void ApplyOp::Finish(const Status& commit) {
  if (commit.ok() && result_ && result_->ok() && !changes_.empty()) listener_.Tell(changes_);
  Result<ApplyResult> r = !commit.ok() ? Result<ApplyResult>(commit)
                          : result_    ? std::move(*result_)
                                       : Result<ApplyResult>(Status::Internal("op never ran"));
  if (done_) {
    done_(std::move(r));
  } else {
    promise_.set_value(std::move(r));
  }
}

namespace {

// One batch split over several writers: the parts' outcomes, put back in
// the batch's order once the last part is done.
class SplitApply {
 public:
  SplitApply(size_t events, size_t parts) : left_(parts) { merged_.outcomes.resize(events); }
  std::future<Result<ApplyResult>> future() { return promise_.get_future(); }

  // `positions`: where the part's events were in the batch.
  void PartDone(const std::vector<size_t>& positions, Result<ApplyResult> r) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!r.ok()) {
      if (failed_.ok()) failed_ = r.status();
    } else if (r->outcomes.size() != positions.size()) {
      if (failed_.ok()) failed_ = Status::Internal("an event writer returned the wrong count");
    } else {
      for (size_t i = 0; i < positions.size(); ++i) {
        merged_.outcomes[positions[i]] = std::move(r->outcomes[i]);
      }
      merged_.acked_seq.merge(r->acked_seq);  // each node is in one part
    }
    if (--left_ > 0) return;
    lock.unlock();  // the last part: nobody else touches the state now
    if (failed_.ok()) {
      promise_.set_value(std::move(merged_));
    } else {
      promise_.set_value(failed_);
    }
  }

 private:
  std::mutex mu_;
  size_t left_;         // guarded by mu_
  ApplyResult merged_;  // guarded by mu_
  Status failed_;       // guarded by mu_: the first part's failure
  std::promise<Result<ApplyResult>> promise_;
};

}  // namespace

size_t EventWriterOf(std::string_view node_id, size_t writers) {
  return writers == 1 ? 0 : std::hash<std::string_view>{}(node_id) % writers;
}

std::future<Result<ApplyResult>> ApplyOnWriters(std::vector<Event> events,
                                                std::span<Writer* const> writers,
                                                const ListenerSlot& listener) {
  const size_t n = writers.size();
  auto writer_of = [n](const Event& e) { return EventWriterOf(e.node_id, n); };
  size_t first = events.empty() ? 0 : writer_of(events.front());
  bool one = std::all_of(events.begin(), events.end(),
                         [&](const Event& e) { return writer_of(e) == first; });
  if (one) {  // the usual case: a session's batch, one node
    auto op = std::make_unique<ApplyOp>(std::move(events), listener);
    std::future<Result<ApplyResult>> fut = op->future();
    writers[first]->Enqueue(std::move(op));
    return fut;
  }
  std::vector<std::vector<Event>> parts(n);
  std::vector<std::vector<size_t>> positions(n);
  for (size_t i = 0; i < events.size(); ++i) {
    size_t w = writer_of(events[i]);
    parts[w].push_back(std::move(events[i]));
    positions[w].push_back(i);
  }
  size_t used = std::count_if(parts.begin(), parts.end(), [](auto& p) { return !p.empty(); });
  auto split = std::make_shared<SplitApply>(events.size(), used);
  std::future<Result<ApplyResult>> fut = split->future();
  for (size_t w = 0; w < n; ++w) {
    if (parts[w].empty()) continue;
    writers[w]->Enqueue(
        std::make_unique<ApplyOp>(std::move(parts[w]), listener,
                                  [split, where = std::move(positions[w])](Result<ApplyResult> r) {
                                    split->PartDone(where, std::move(r));
                                  }));
  }
  return fut;
}

}  // namespace apollo::store::engine
