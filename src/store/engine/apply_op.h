#pragma once

// The writer op of StateStore::ApplyAsync. Apply ops queued next to each
// other are mergeable: the writer runs them as one ApplyEvents pass over all
// their events (a handful of statements instead of a handful per caller),
// then hands each caller its own outcomes. acked_seq of a merged op is the
// node's mark after the whole group, which commits atomically with it.
// Once the group committed, its first op hands what the commit left of the
// tasks it changed to the store's commit listener (state_store.h), before
// any caller hears back.
//
// With several event writers (PostgreSQL), ApplyOnWriters routes a batch:
// each node's events go to one writer, chosen by the node id, so a node's
// batches commit in the order they were submitted and its mark advances in
// one place. A batch spanning nodes of different writers becomes one op per
// writer (one transaction each), and its future completes when all of them
// have; if one fails the caller gets that failure, and what the others
// committed is a duplicate when the batch is sent again (node marks).
//
// Thread-safety: created by any thread, then used only by the writer thread.

#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "store/engine/writer.h"
#include "store/state_store.h"
#include "store/types.h"

namespace apollo::store::engine {

// The store's commit listener: set, replaced or cleared while writers run.
// Once Set returns, the listener it replaced is not running and will not be
// called again.
class ListenerSlot {
 public:
  void Set(CommitListener listener) {
    std::lock_guard<std::mutex> lock(mu_);
    listener_ = std::move(listener);
  }
  bool empty() const {
    std::lock_guard<std::mutex> lock(mu_);
    return !listener_;
  }
  void Tell(std::span<const TaskChange> changes) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (listener_) listener_(changes);
  }

 private:
  mutable std::mutex mu_;
  CommitListener listener_;  // guarded by mu_
};

class ApplyOp final : public WriteOp {
 public:
  using Done = std::function<void(Result<ApplyResult>)>;
  // `listener`: the store's; outlives the op. `done`, if set, is given the
  // outcome (on the writer thread) instead of the future.
  ApplyOp(std::vector<Event> events, const ListenerSlot& listener, Done done = nullptr)
      : events_(std::move(events)), listener_(listener), done_(std::move(done)) {}
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
  const ListenerSlot& listener_;
  std::vector<TaskChange> changes_;  // the group's, in its first op
  std::optional<Result<ApplyResult>> result_;
  Done done_;
  std::promise<Result<ApplyResult>> promise_;
};

// Which of `writers` (at least one) event writers applies `node_id`'s
// events: the one rule ApplyOnWriters routes by.
size_t EventWriterOf(std::string_view node_id, size_t writers);

// Queues `events` (StateStore::ApplyAsync) on `writers`, the store's event
// writers (at least one), as described above.
std::future<Result<ApplyResult>> ApplyOnWriters(std::vector<Event> events,
                                                std::span<Writer* const> writers,
                                                const ListenerSlot& listener);

}  // namespace apollo::store::engine
