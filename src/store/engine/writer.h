#pragma once

// The writer of the store, with group commit.
//
// Callers enqueue WriteOps from any thread. One thread drains the queue: it
// takes ops until their total weight (events, or 1 per other request) reaches
// the batch cap and runs them in one write transaction, each unit in its own
// savepoint when there are several (one failing unit rolls back alone), then
// commits. Ops that arrive while a commit is syncing wait for the next
// transaction, so at low load latency is one commit and at high load many
// callers share one. Keeping them together: the callers of a transaction
// send their next ops right after it commits, a little after the writer is
// free again; a writer that started at once would commit the first alone
// and make the rest wait for (and pay) one more sync. So when the last
// transaction held several ops and fewer are queued, the writer waits for
// as many as it held — at most a quarter of that transaction's time, never
// more than kMaxLinger (PostgreSQL's commit_delay, made adaptive). A lone
// caller (last transaction: one op) never waits. An op's result is delivered only after its transaction
// ended; if the commit fails, every op in it fails with that error and
// nothing of it is visible.
//
// Several writers (orchestrator replicas on PostgreSQL, or two processes on
// one SQLite file) may share one database. Safety does not rest on being
// alone: every op locks what it changes before deciding anything (rows.h),
// always in key order, and works from what it read under the lock; the only
// cache is node refs, which never change. A conflict with another writer
// (kAborted: serialization failure, deadlock, unique-key race) reruns the
// whole batch (up to kMaxConflictRetries, then kAborted).
//
// Connection loss (kUnavailable): the batch fails, the connection is dropped
// and the next batch reconnects (once per batch, immediately, if the loss
// was found on a reused connection before anything was committed). A loss
// during COMMIT is "outcome unknown" and never retried here (a retried
// Transition could apply twice; events are deduplicated when the caller
// retries).
//
// Thread-safety: Submit(), Enqueue() and Stats() are thread-safe; WriteTxn
// and the ops run on the writer thread only.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include "core/clock.h"
#include "core/status.h"
#include "store/engine/sql.h"
#include "store/engine/write_txn.h"
#include "store/lease.h"
#include "store/types.h"

namespace apollo::store::engine {

class WriteOp {
 public:
  // Takes the fence of the constructing thread's FenceScope (lease.h), so
  // an op is fenced by who queued it, whichever thread runs it.
  WriteOp() {
    if (const Fence* f = CurrentFence()) fence_ = *f;
  }
  virtual ~WriteOp() = default;
  // Checked in the op's transaction before Run (Writer::RunUnit).
  const std::optional<Fence>& fence() const { return fence_; }
  // Events in the op (1 for other requests): counts against the batch cap.
  virtual int Weight() const = 0;
  // Runs inside the transaction; may run again if the batch is retried. A
  // non-OK status rolls back this op (or the batch, see above).
  virtual Status Run(WriteTxn& txn) = 0;
  // The op's work failed after Run returned (its deferred statements).
  virtual void Fail(const Status& st) = 0;
  // Delivers the outcome once the transaction ended (commit status).
  virtual void Finish(const Status& commit) = 0;
  // Mergeable ops that are next to each other in a batch run as one unit:
  // the first one's RunMerged(txn, group) does the work of the whole group
  // (e.g. every queued Apply in one pass).
  virtual bool Mergeable() const { return false; }
  virtual Status RunMerged(WriteTxn& txn, std::span<WriteOp* const> group) {
    (void)group;
    return Run(txn);
  }

 private:
  std::optional<Fence> fence_;
};

// A WriteOp computing a T with `fn(WriteTxn&) -> Result<T>`.
template <typename T, typename Fn>
class TypedOp final : public WriteOp {
 public:
  TypedOp(int weight, Fn fn) : weight_(weight), fn_(std::move(fn)) {}
  std::future<Result<T>> future() { return promise_.get_future(); }
  int Weight() const override { return weight_; }
  Status Run(WriteTxn& txn) override {
    result_.reset();
    Result<T> r = fn_(txn);
    Status st = r.status();
    result_.emplace(std::move(r));
    return st;
  }
  void Fail(const Status& st) override { result_.emplace(st); }
  void Finish(const Status& commit) override {
    if (!commit.ok() || !result_) {
      promise_.set_value(commit.ok() ? Status::Internal("op never ran") : commit);
    } else {
      promise_.set_value(std::move(*result_));
    }
  }

 private:
  int weight_;
  Fn fn_;
  std::optional<Result<T>> result_;
  std::promise<Result<T>> promise_;
};

class Writer {
 public:
  static constexpr int kMaxConflictRetries = 8;
  static constexpr std::chrono::microseconds kMaxLinger{1000};
  // Task refs remembered for the events' locked read (task_ref_hints.h):
  // about 6 MB at most, some seconds of a busy center's new tasks.
  static constexpr size_t kTaskRefHints = 1 << 16;

  // Connects as the writer (kUnavailable if it cannot), then starts the
  // thread. `driver` and `clock` must outlive the writer.
  // `task_refs`: the hints this writer reads and adds to (shared by a
  // store's writers; not null).
  static Result<std::unique_ptr<Writer>> Start(sql::Driver& driver, const Clock& clock,
                                               int batch_cap,
                                               std::shared_ptr<TaskRefHints> task_refs);
  // Drains the queue, then stops the thread.
  ~Writer();

  template <typename T, typename Fn>
  std::future<Result<T>> Submit(int weight, Fn fn) {
    auto op = std::make_unique<TypedOp<T, Fn>>(weight, std::move(fn));
    auto fut = op->future();
    Enqueue(std::move(op));
    return fut;
  }
  // Queues an op built by the caller (e.g. an ApplyOp).
  void Enqueue(std::unique_ptr<WriteOp> op);

  StoreStats Stats() const;

 private:
  using Batch = std::deque<std::unique_ptr<WriteOp>>;
  enum class Next { kDone, kRetry, kReconnect };

  Writer(sql::Driver& driver, const Clock& clock, int batch_cap,
         std::shared_ptr<TaskRefHints> task_refs)
      : driver_(driver), clock_(clock), batch_cap_(batch_cap), task_refs_(std::move(task_refs)) {}
  void Loop();
  Batch TakeBatch();
  Status RunWithRetries(Batch& batch, StoreStats& delta);
  Next RunBatch(Batch& batch, StoreStats& delta, Status& st);
  // Runs every unit; `failed` gets a failure the whole batch must share.
  Status RunUnits(Batch& batch, NodeFacts& fresh, StoreStats& delta);
  Status RunUnit(std::span<WriteOp* const> unit, TimePoint now, NodeFacts& nodes,
                 StoreStats& delta);
  Next Classify(const Status& st, bool fresh_connection);

  sql::Driver& driver_;
  const Clock& clock_;
  const int batch_cap_;

  // Writer-thread-only state.
  std::unique_ptr<sql::Conn> conn_;  // null while disconnected
  NodeFacts nodes_;                  // committed node facts
  std::shared_ptr<TaskRefHints> task_refs_;  // shared with the store's other writers
  size_t last_ops_ = 0;              // ops in the last transaction
  std::chrono::steady_clock::duration last_run_{};  // and how long it took

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Batch queue_;            // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  StoreStats stats_;       // guarded by mu_
  std::thread thread_;
};

void AddStats(StoreStats& into, const StoreStats& d);

}  // namespace apollo::store::engine
