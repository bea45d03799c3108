#include "store/engine/apply_op.h"

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
  if (!commit.ok() || !result_) {
    promise_.set_value(commit.ok() ? Status::Internal("op never ran") : commit);
  } else {
    promise_.set_value(std::move(*result_));
  }
}

}  // namespace apollo::store::engine
