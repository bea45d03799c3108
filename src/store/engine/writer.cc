#include "store/engine/writer.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <random>
#include <unordered_set>

#include "store/engine/write_paths.h"
#include "store/test_switches.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kSavepoint{"SAVEPOINT op"};
constexpr sql::Statement kRollbackTo{"ROLLBACK TO SAVEPOINT op"};
constexpr sql::Statement kRelease{"RELEASE SAVEPOINT op"};

// A failure the whole batch shares: the connection is gone (kUnavailable)
// or another writer won a race (kAborted: run the batch again).
bool BatchFailure(const Status& st) {
  return st.code() == StatusCode::kUnavailable || st.code() == StatusCode::kAborted;
}

// Each fence among the unit's ops must still hold (lease.h); a planted bug
// of the test builds skips the check (test_switches.h). Asked before the
// ops run, so the reads ride with their first round trip; judged after the
// unit's flush, before anything commits.
std::deque<FenceAnswer> AskFences(WriteTxn& txn, std::span<WriteOp* const> unit) {
  std::deque<FenceAnswer> answers;  // stable addresses for Exec
  if (TestSwitches::Get().disable_lease_fence) return answers;
  for (WriteOp* op : unit) {
    if (op->fence()) AskFence(txn, *op->fence(), answers.emplace_back());
  }
  return answers;
}

// A fence that no longer holds, whatever else failed: the write was not
// this replica's to make. A read that never ran (its round trip failed)
// leaves `st`, that failure, as the unit's outcome.
Status JudgeFences(std::deque<FenceAnswer>& answers, Status st) {
  for (FenceAnswer& a : answers) {
    if (a.arrived < 0) continue;
    Status verdict = FenceVerdict(a);
    if (!verdict.ok()) return verdict;
  }
  return st;
}

}  // namespace

void AddStats(StoreStats& into, const StoreStats& d) {
  into.events_applied += d.events_applied;
  into.events_duplicate += d.events_duplicate;
  into.events_stale += d.events_stale;
  into.illegal_transitions += d.illegal_transitions;
  into.unknown_task += d.unknown_task;
  into.malformed += d.malformed;
  into.commits += d.commits;
}

Result<std::unique_ptr<Writer>> Writer::Start(sql::Driver& driver, const Clock& clock,
                                              int batch_cap,
                                              std::shared_ptr<TaskRefHints> task_refs) {
  std::unique_ptr<Writer> w(
      new Writer(driver, clock, std::max(batch_cap, 1), std::move(task_refs)));
  Result<std::unique_ptr<sql::Conn>> conn = driver.Connect(sql::Role::kWriter);
  if (!conn.ok()) return conn.status();
  w->conn_ = std::move(*conn);
  w->thread_ = std::thread([p = w.get()] { p->Loop(); });
  return w;
}

Writer::~Writer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Writer::Enqueue(std::unique_ptr<WriteOp> op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(op));
  }
  cv_.notify_one();
}

StoreStats Writer::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Writer::Batch Writer::TakeBatch() {
  Batch batch;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (last_ops_ > 1 && queue_.size() < last_ops_) {  // the group is coming back
    auto linger = std::min<std::chrono::steady_clock::duration>(last_run_ / 4, kMaxLinger);
    cv_.wait_for(lock, linger, [this] { return stopping_ || queue_.size() >= last_ops_; });
  }
  int weight = 0;
  // A single op heavier than the cap still goes, alone: a caller's batch is
  // never split across transactions.
  while (!queue_.empty() && (batch.empty() || weight + queue_.front()->Weight() <= batch_cap_)) {
    weight += queue_.front()->Weight();
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return batch;
}

void Writer::Loop() {
  for (;;) {
    Batch batch = TakeBatch();
    if (batch.empty()) return;  // stopping and drained
    StoreStats delta;
    const auto start = std::chrono::steady_clock::now();
    Status st = RunWithRetries(batch, delta);
    last_run_ = std::chrono::steady_clock::now() - start;
    last_ops_ = batch.size();
    if (st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      AddStats(stats_, delta);
      stats_.commits += 1;
    }
    for (auto& op : batch) op->Finish(st);
    if (conn_) conn_->Idle();
  }
}

Status Writer::RunWithRetries(Batch& batch, StoreStats& delta) {
  std::minstd_rand jitter(
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  bool reconnected = false;
  Status st;
  for (int attempt = 0;; ++attempt) {
    delta = StoreStats{};
    Next next = RunBatch(batch, delta, st);
    if (next == Next::kDone) return st;
    if (next == Next::kReconnect) {
      if (reconnected) return st;
      reconnected = true;
      continue;
    }
    if (attempt + 1 >= kMaxConflictRetries) {
      return Status::Aborted("gave up after " + std::to_string(kMaxConflictRetries) +
                             " conflicting attempts: " + st.message());
    }
    // Back off a little so the writer we collided with can finish.
    std::this_thread::sleep_for(
        std::chrono::microseconds(500 + jitter() % (2000u << std::min(attempt, 4))));
  }
}

Writer::Next Writer::Classify(const Status& st, bool fresh_connection) {
  if (st.code() == StatusCode::kUnavailable) {
    conn_.reset();
    return fresh_connection ? Next::kDone : Next::kReconnect;
  }
  return st.code() == StatusCode::kAborted ? Next::kRetry : Next::kDone;
}

Writer::Next Writer::RunBatch(Batch& batch, StoreStats& delta, Status& st) {
  bool fresh_connection = false;
  if (!conn_ || !conn_->healthy()) {
    conn_.reset();
    Result<std::unique_ptr<sql::Conn>> conn = driver_.Connect(sql::Role::kWriter);
    if (!conn.ok()) {
      st = conn.status();
      return Next::kDone;
    }
    conn_ = std::move(*conn);
    fresh_connection = true;
  }
  NodeFacts fresh;
  st = conn_->Begin(sql::Access::kWrite);
  if (st.ok()) st = RunUnits(batch, fresh, delta);
  if (!st.ok()) {
    conn_->Rollback();
    delta = StoreStats{};
    if (!BatchFailure(st)) {  // a lone op failed: it keeps its own error
      st = Status::Ok();
      return Next::kDone;
    }
    return Classify(st, fresh_connection);
  }
  st = conn_->Commit();
  if (!st.ok()) {
    delta = StoreStats{};
    if (st.code() == StatusCode::kUnavailable) {  // outcome unknown: never rerun here
      conn_.reset();
      return Next::kDone;
    }
    return st.code() == StatusCode::kAborted ? Next::kRetry : Next::kDone;
  }
  for (auto& [id, fact] : fresh) nodes_[id] = fact;
  return Next::kDone;
}

// Runs one unit (an op, or a group of mergeable ops) and everything it
// deferred. A failure is kept in the unit's ops and returned.
Status Writer::RunUnit(std::span<WriteOp* const> unit, TimePoint now, NodeFacts& nodes,
                       StoreStats& delta) {
  WriteTxn txn(*conn_, now, nodes_, nodes, *task_refs_, delta);
  std::deque<FenceAnswer> fences = AskFences(txn, unit);
  for (WriteOp* op : unit) {
    if (op->fence()) txn.set_epoch(op->fence()->epoch);
  }
  Status st = unit.size() == 1 ? unit[0]->Run(txn) : unit[0]->RunMerged(txn, unit);
  Status flushed = conn_->Flush();  // always: the fences' answers come with it
  if (st.ok()) st = flushed;
  st = JudgeFences(fences, st);
  if (st.ok()) st = txn.CheckExpectations();
  if (!st.ok()) {
    for (WriteOp* op : unit) op->Fail(st);
  }
  return st;
}

// Runs every unit; with more than one, each in a savepoint so one unit's
// failure does not undo its neighbours. Returns non-OK when the batch as a
// whole fails (BatchFailure), or when it was one unit and that failed.
Status Writer::RunUnits(Batch& batch, NodeFacts& fresh, StoreStats& delta) {
  TimePoint now = clock_.Now();
  std::vector<std::vector<WriteOp*>> units;
  for (auto& op : batch) {
    if (!units.empty() && op->Mergeable() && units.back().front()->Mergeable()) {
      units.back().push_back(op.get());
    } else {
      units.push_back({op.get()});
    }
  }
  if (units.size() == 1) {
    StoreStats unit_delta;
    Status st = RunUnit(units.front(), now, fresh, unit_delta);
    if (st.ok()) AddStats(delta, unit_delta);
    return st;
  }
  for (const std::vector<WriteOp*>& unit : units) {
    NodeFacts unit_nodes = fresh;
    StoreStats unit_delta;
    conn_->Exec(kSavepoint);
    Status st = RunUnit(unit, now, unit_nodes, unit_delta);
    if (!st.ok()) {
      if (BatchFailure(st)) return st;
      conn_->Exec(kRollbackTo);
      conn_->Exec(kRelease);
      (void)conn_->Flush();  // what failed belongs to this unit, already told
      continue;
    }
    conn_->Exec(kRelease);
    fresh = std::move(unit_nodes);
    AddStats(delta, unit_delta);
  }
  return Status::Ok();
}

// ------------------------------------------------------------- WriteTxn --

Result<NodeFacts> WriteTxn::FindNodes(const std::vector<std::string>& node_ids,
                                      bool fresh_registration) {
  static constexpr sql::Column kCols[] = {{"node_id", sql::Type::kText}};
  static constexpr sql::Statement kFind{
      "SELECT n.node_id, n.node_ref, n.registered FROM nodes n, @rows WHERE n.node_id = u.node_id",
      kCols};
  NodeFacts found;
  sql::RowSet missing(kFind);
  std::unordered_set<std::string> asked;
  for (const std::string& id : node_ids) {
    const NodeFact* f = nullptr;
    if (auto it = fresh_.find(id); it != fresh_.end()) {
      f = &it->second;
    } else if (auto c = committed_.find(id); c != committed_.end()) {
      f = &c->second;
    }
    if (f && (f->registered || !fresh_registration)) {
      found[id] = *f;
    } else if (asked.insert(id).second) {
      missing.Add(id);
    }
  }
  if (missing.empty()) return found;
  Result<sql::Rows> r = Query(kFind, {}, &missing);
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < r->size(); ++i) {
    NodeFact f{r->Int(i, 1), r->Bool(i, 2)};
    found[r->TakeText(i, 0)] = f;
    fresh_[r->TakeText(i, 0)] = f;
  }
  return found;
}

}  // namespace apollo::store::engine
