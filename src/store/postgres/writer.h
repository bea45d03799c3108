#pragma once

// The writer of a PostgreSQL store, with group commit.
//
// Callers enqueue WriteOps from any thread. One thread drains the queue: it
// takes ops until their total weight (events, or 1 per other request) reaches
// the batch cap and runs them in one READ COMMITTED transaction, each op in
// its own savepoint when there are several, then commits. An op's result is
// delivered only after its transaction ended; if the commit fails, every op
// in it fails with that error and nothing of it is visible.
//
// Several writers (orchestrator replicas) may share one database. Safety does
// not rest on this process being alone: every op locks what it changes before
// deciding anything (node_seq rows before deduplicating a node's events, then
// task_nodes rows and their task_status rows before a compare-and-set on the
// row version and a roll-up; see rows.h), always in key order, and works from
// what it read under the lock. A serialization failure, deadlock or a
// unique-key race with another writer aborts the transaction; the writer runs
// the whole batch again (up to kMaxConflictRetries, then kAborted).
//
// Consecutive Apply ops are merged into one set-based pass (apply_op.h).
//
// Connection loss: the batch fails with kUnavailable, the connection is
// dropped and the next batch reconnects (once per batch, immediately, if the
// loss was found on an idle connection before anything was committed). A loss
// during COMMIT is reported as kUnavailable "outcome unknown" and never
// retried here (a retried Transition could apply twice; events are deduped).
//
// Write paths (apply.cc, transition.cc, ...) may throw pqxx exceptions; the
// writer is the boundary that turns them into Status values.
//
// Thread-safety: Submit() and Stats() are thread-safe; WriteTxn is used only
// on the writer thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "store/postgres/pg_conn.h"
#include "store/types.h"

namespace apollo::store::postgres {

using NodeRefs = std::unordered_map<std::string, int64_t>;  // node_id -> node_ref

// The view an op has of the store while the transaction is open.
class WriteTxn {
 public:
  WriteTxn(PgConn& conn, pqxx::transaction_base& work, TimePoint now, const NodeRefs& committed,
           NodeRefs& fresh, StoreStats& stats)
      : conn_(conn), work_(work), now_(now), committed_(committed), fresh_(fresh),
        stats_(stats) {}

  // Runs a prepared statement in the transaction (may throw pqxx errors).
  template <typename... Args>
  pqxx::result Exec(const std::string& sql, Args&&... args) {
    return conn_.Exec(work_, sql, std::forward<Args>(args)...);
  }
  TimePoint now() const { return now_; }
  int64_t now_us() const { return ToUnixMicros(now_); }
  StoreStats& stats() { return stats_; }

  // node_id -> node_ref for the ids that exist (cache first, then one query).
  NodeRefs FindNodes(const std::vector<std::string>& node_ids);
  // Records a node row this transaction found or created.
  void RememberNode(const std::string& node_id, int64_t ref) { fresh_[node_id] = ref; }

 private:
  PgConn& conn_;
  pqxx::transaction_base& work_;
  TimePoint now_;
  const NodeRefs& committed_;
  NodeRefs& fresh_;
  StoreStats& stats_;
};

class WriteOp {
 public:
  virtual ~WriteOp() = default;
  // Events in the op (1 for other requests): counts against the batch cap.
  virtual int Weight() const = 0;
  // Runs inside the transaction; may run again if the batch is retried.
  virtual Status Run(WriteTxn& txn) = 0;
  // The op failed with an exception turned into `st`.
  virtual void Fail(const Status& st) = 0;
  // Delivers the outcome once the transaction ended (commit status).
  virtual void Finish(const Status& commit) = 0;
  // Mergeable ops that are next to each other in a batch run as one unit:
  // the first one's RunMerged(txn, group) does the work of the whole group
  // (e.g. every queued Apply in one set-based pass).
  virtual bool Mergeable() const { return false; }
  virtual Status RunMerged(WriteTxn& txn, std::span<WriteOp* const> group) {
    (void)group;
    return Run(txn);
  }
};

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

  // Connects (kUnavailable if it cannot), then starts the thread.
  static Result<std::unique_ptr<Writer>> Start(std::string conn_string, const Clock& clock,
                                               int batch_cap);
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

  Writer(std::string conn_string, const Clock& clock, int batch_cap)
      : conn_string_(std::move(conn_string)), clock_(clock), batch_cap_(batch_cap) {}
  void Loop();
  Batch TakeBatch();
  Status RunWithRetries(Batch& batch, StoreStats& delta);
  Next RunBatch(Batch& batch, StoreStats& delta, Status& st);
  Status RunOps(pqxx::dbtransaction& work, Batch& batch, NodeRefs& fresh, StoreStats& delta);
  Status RunUnit(pqxx::transaction_base& t, std::span<WriteOp* const> unit, TimePoint now,
                 NodeRefs& nodes, StoreStats& delta);

  const std::string conn_string_;
  const Clock& clock_;
  const int batch_cap_;

  // Writer-thread-only state.
  std::unique_ptr<PgConn> conn_;  // null while disconnected
  NodeRefs nodes_;                // committed node refs (never change)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Batch queue_;           // guarded by mu_
  bool stopping_ = false; // guarded by mu_
  StoreStats stats_;      // guarded by mu_
  std::thread thread_;
};

void AddStats(StoreStats& into, const StoreStats& d);

}  // namespace apollo::store::postgres
