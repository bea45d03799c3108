#include "store/postgres/writer.h"

#include <chrono>
#include <random>

namespace apollo::store::postgres {

void AddStats(StoreStats& into, const StoreStats& d) {
  into.events_applied += d.events_applied;
  into.events_duplicate += d.events_duplicate;
  into.events_stale += d.events_stale;
  into.illegal_transitions += d.illegal_transitions;
  into.unknown_task += d.unknown_task;
  into.malformed += d.malformed;
  into.commits += d.commits;
}

// ------------------------------------------------------------- WriteTxn --

NodeRefs WriteTxn::FindNodes(const std::vector<std::string>& node_ids) {
  NodeRefs found;
  PgArray missing;
  for (const std::string& id : node_ids) {
    if (auto it = fresh_.find(id); it != fresh_.end()) {
      found[id] = it->second;
    } else if (auto c = committed_.find(id); c != committed_.end()) {
      found[id] = c->second;
    } else {
      missing.Add(id);
    }
  }
  if (missing.empty()) return found;
  pqxx::result r = Exec("SELECT node_id, node_ref FROM nodes WHERE node_id = ANY($1::text[])",
                        missing.str());
  for (const auto& row : r) {
    found[row[0].as<std::string>()] = row[1].as<int64_t>();
    fresh_[row[0].as<std::string>()] = row[1].as<int64_t>();
  }
  return found;
}

// --------------------------------------------------------------- Writer --

Result<std::unique_ptr<Writer>> Writer::Start(std::string conn_string, const Clock& clock,
                                              int batch_cap) {
  std::unique_ptr<Writer> w(new Writer(std::move(conn_string), clock, batch_cap < 1 ? 1 : batch_cap));
  Result<std::unique_ptr<PgConn>> conn = PgConn::Open(w->conn_string_);
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
    Status st = RunWithRetries(batch, delta);
    if (st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      AddStats(stats_, delta);
      stats_.commits += 1;
    }
    for (auto& op : batch) op->Finish(st);
  }
}

Status Writer::RunWithRetries(Batch& batch, StoreStats& delta) {
  std::minstd_rand jitter(static_cast<unsigned>(
      std::chrono::steady_clock::now().time_since_epoch().count()));
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
    std::this_thread::sleep_for(std::chrono::microseconds(
        500 + jitter() % (2000u << std::min(attempt, 4))));
  }
}

Writer::Next Writer::RunBatch(Batch& batch, StoreStats& delta, Status& st) {
  bool fresh_connection = false;
  if (!conn_) {
    Result<std::unique_ptr<PgConn>> conn = PgConn::Open(conn_string_);
    if (!conn.ok()) {
      st = conn.status();
      return Next::kDone;
    }
    conn_ = std::move(*conn);
    fresh_connection = true;
  }
  bool committing = false;
  try {
    pqxx::work work(conn_->conn());
    NodeRefs fresh;
    st = RunOps(work, batch, fresh, delta);
    if (!st.ok()) {  // a lone op failed: it keeps its own error
      work.abort();
      st = Status::Ok();
      delta = StoreStats{};
      return Next::kDone;
    }
    committing = true;
    work.commit();
    for (auto& [id, ref] : fresh) nodes_[id] = ref;
    st = Status::Ok();
    return Next::kDone;
  } catch (const std::exception& e) {
    st = ToStatus(committing ? "committing" : "writing", e);
    if (st.code() == StatusCode::kUnavailable) {
      conn_.reset();
      bool in_doubt = dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr;
      return (!in_doubt && !fresh_connection) ? Next::kReconnect : Next::kDone;
    }
    return IsRetryable(st) ? Next::kRetry : Next::kDone;
  }
}

// Runs one unit (an op, or a group of mergeable ops). An op's own failure
// is returned (and kept in the op); connection loss and conflicts propagate
// as exceptions, failing the whole batch.
Status Writer::RunUnit(pqxx::transaction_base& t, std::span<WriteOp* const> unit, TimePoint now,
                       NodeRefs& nodes, StoreStats& delta) {
  WriteTxn txn(*conn_, t, now, nodes_, nodes, delta);
  try {
    return unit.size() == 1 ? unit[0]->Run(txn) : unit[0]->RunMerged(txn, unit);
  } catch (const std::exception& e) {
    Status st = ToStatus("writing", e);
    if (IsRetryable(st) || st.code() == StatusCode::kUnavailable) throw;
    for (WriteOp* op : unit) op->Fail(st);
    return st;
  }
}

// Runs every unit; with more than one, each in a savepoint so one unit's
// failure does not undo its neighbours. Returns non-OK only when the batch
// was one unit and it failed.
Status Writer::RunOps(pqxx::dbtransaction& work, Batch& batch, NodeRefs& fresh,
                      StoreStats& delta) {
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
    Status st = RunUnit(work, units.front(), now, fresh, unit_delta);
    if (st.ok()) AddStats(delta, unit_delta);
    return st;
  }
  for (const std::vector<WriteOp*>& unit : units) {
    NodeRefs unit_nodes = fresh;
    StoreStats unit_delta;
    pqxx::subtransaction sub(work, "op");
    Status st = RunUnit(sub, unit, now, unit_nodes, unit_delta);
    if (!st.ok()) {
      sub.abort();
      continue;
    }
    sub.commit();
    fresh = std::move(unit_nodes);
    AddStats(delta, unit_delta);
  }
  return Status::Ok();
}

}  // namespace apollo::store::postgres
