#pragma once

// The writer op of StateStore::ApplyAsync. Apply ops queued next to each
// other are mergeable: the writer runs them as one ApplyEvents pass over all
// their events (a handful of statements instead of a handful per caller),
// then hands each caller its own outcomes. acked_seq of a merged op is the
// node's mark after the whole group, which commits atomically with it.
//
// Thread-safety: created by any thread, then used only by the writer thread.

#include <future>
#include <optional>
#include <span>
#include <vector>

#include "core/event.h"
#include "store/engine/writer.h"
#include "store/types.h"

namespace apollo::store::engine {

class ApplyOp final : public WriteOp {
 public:
  explicit ApplyOp(std::vector<Event> events) : events_(std::move(events)) {}
  std::future<Result<ApplyResult>> future() { return promise_.get_future(); }

  // WriteOp
  int Weight() const override { return static_cast<int>(events_.size()); }
  Status Run(WriteTxn& txn) override;
  void Fail(const Status& st) override { result_.emplace(st); }
  void Finish(const Status& commit) override;
  bool Mergeable() const override { return true; }
  Status RunMerged(WriteTxn& txn, std::span<WriteOp* const> group) override;

 private:
  std::vector<Event> events_;
  std::optional<Result<ApplyResult>> result_;
  std::promise<Result<ApplyResult>> promise_;
};

}  // namespace apollo::store::engine
