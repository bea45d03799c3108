#pragma once

// The single writer of a SQLite store, with group commit.
//
// Callers enqueue WriteOps from any thread. One thread drains the queue: it
// takes ops until their total weight (events, or 1 per other request) reaches
// the batch cap, runs each inside its own SAVEPOINT of one transaction, and
// commits. Ops that arrive while a commit is syncing wait for the next
// transaction, so at low load latency is one commit and at high load many
// callers share one fsync. An op's result is delivered only after the
// transaction holding it committed; if the commit fails, every op in it
// fails with that error and nothing of it is visible.
//
// In-memory caches (node refs, per-node high-water marks, the history id
// counter) mirror committed data. Changes made by an op go into an overlay
// that is merged into the caches only when the op succeeded and the
// transaction committed, so a rolled-back op never leaves a trace.
//
// Thread-safety: Submit() is thread-safe; WriteTxn is used only on the
// writer thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/clock.h"
#include "core/status.h"
#include "store/sqlite/checkpointer.h"
#include "store/sqlite/sqlite_handle.h"
#include "store/types.h"

namespace apollo::store::sqlite {

// What the writer remembers about one node.
struct NodeEntry {
  int64_t ref = 0;
  bool registered = false;
  uint64_t hwm = 0;            // every seq <= hwm is stored
  std::set<uint64_t> above;    // stored seqs > hwm + 1 (out of order)
  bool seq_dirty = false;      // hwm changed in this txn: write node_seq
};

using NodeMap = std::unordered_map<std::string, NodeEntry>;

// The view an op has of the store while the transaction is open.
class WriteTxn {
 public:
  WriteTxn(Db& db, TimePoint now, const NodeMap& committed, NodeMap& txn, NodeMap& op,
           int64_t& next_hist_id, StoreStats& stats)
      : db_(db), now_(now), committed_(committed), txn_(txn), op_(op),
        next_hist_id_(next_hist_id), stats_(stats) {}

  Db& db() { return db_; }
  TimePoint now() const { return now_; }
  int64_t now_us() const { return ToUnixMicros(now_); }
  StoreStats& stats() { return stats_; }

  // The node's entry as this op sees it, or nullptr if unknown.
  const NodeEntry* FindNode(const std::string& node_id) const;
  // A writable copy of a known node's entry (precondition: FindNode != null).
  NodeEntry& MutableNode(const std::string& node_id);
  // Finds the node, inserting an unregistered row if it does not exist.
  Result<int64_t> EnsureNode(const std::string& node_id);
  // Records that node_id's row is registered (after an upsert).
  void MarkRegistered(const std::string& node_id, int64_t ref);

  int64_t NextHistId() { return next_hist_id_++; }

 private:
  Db& db_;
  TimePoint now_;
  const NodeMap& committed_;
  NodeMap& txn_;
  NodeMap& op_;
  int64_t& next_hist_id_;
  StoreStats& stats_;
};

class WriteOp {
 public:
  virtual ~WriteOp() = default;
  // Events in the op (1 for other requests): counts against the batch cap.
  virtual int Weight() const = 0;
  // Runs inside the transaction. A non-OK status rolls back this op only.
  virtual Status Run(WriteTxn& txn) = 0;
  // Delivers the outcome once the transaction ended (commit status).
  virtual void Finish(const Status& commit) = 0;
};

// A WriteOp computing a T with `fn(WriteTxn&) -> Result<T>`.
template <typename T, typename Fn>
class TypedOp final : public WriteOp {
 public:
  TypedOp(int weight, Fn fn) : weight_(weight), fn_(std::move(fn)) {}
  std::future<Result<T>> future() { return promise_.get_future(); }
  int Weight() const override { return weight_; }
  Status Run(WriteTxn& txn) override {
    Result<T> r = fn_(txn);
    Status st = r.status();
    result_.emplace(std::move(r));
    return st;
  }
  void Finish(const Status& commit) override {
    if (!result_) {
      promise_.set_value(commit.ok() ? Status::Internal("op never ran") : commit);
    } else if (!commit.ok() && result_->ok()) {
      promise_.set_value(commit);
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
  // Takes the write connection and the checkpointer (may be null: SQLite's
  // own auto-checkpoint then stays on); loads the caches; starts the thread.
  static Result<std::unique_ptr<Writer>> Start(std::unique_ptr<Db> db,
                                               std::unique_ptr<Checkpointer> checkpointer,
                                               const Clock& clock, int batch_cap);
  // Drains the queue, then stops the thread.
  ~Writer();

  template <typename T, typename Fn>
  std::future<Result<T>> Submit(int weight, Fn fn) {
    auto op = std::make_unique<TypedOp<T, Fn>>(weight, std::move(fn));
    auto fut = op->future();
    Enqueue(std::move(op));
    return fut;
  }

  // Counters of committed work.
  StoreStats Stats() const;

 private:
  Writer(std::unique_ptr<Db> db, const Clock& clock, int batch_cap)
      : db_(std::move(db)), clock_(clock), batch_cap_(batch_cap) {}
  Status LoadCaches();
  void Enqueue(std::unique_ptr<WriteOp> op);
  void Loop();
  std::deque<std::unique_ptr<WriteOp>> TakeBatch();
  Status RunBatch(std::deque<std::unique_ptr<WriteOp>>& batch, StoreStats& delta);
  Status RunOne(WriteOp& op, NodeMap& txn, int64_t& next_hist, StoreStats& delta, TimePoint now);
  Status Commit(NodeMap& txn, int64_t next_hist);

  std::unique_ptr<Db> db_;  // writer thread only
  std::unique_ptr<Checkpointer> checkpointer_;
  const Clock& clock_;
  const int batch_cap_;

  // Writer-thread-only state (committed mirror).
  NodeMap nodes_;
  int64_t next_hist_id_ = 1;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<WriteOp>> queue_;  // guarded by mu_
  bool stopping_ = false;                       // guarded by mu_
  StoreStats stats_;                            // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::store::sqlite
