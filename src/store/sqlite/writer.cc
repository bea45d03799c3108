#include "store/sqlite/writer.h"

#include <array>

namespace apollo::store::sqlite {

// ------------------------------------------------------------- WriteTxn --

const NodeEntry* WriteTxn::FindNode(const std::string& node_id) const {
  for (const NodeMap* m : std::array<const NodeMap*, 3>{&op_, &txn_, &committed_}) {
    auto it = m->find(node_id);
    if (it != m->end()) return &it->second;
  }
  return nullptr;
}

NodeEntry& WriteTxn::MutableNode(const std::string& node_id) {
  auto it = op_.find(node_id);
  if (it != op_.end()) return it->second;
  const NodeEntry* cur = FindNode(node_id);
  return op_.emplace(node_id, cur ? *cur : NodeEntry{}).first->second;
}

Result<int64_t> WriteTxn::EnsureNode(const std::string& node_id) {
  if (const NodeEntry* e = FindNode(node_id)) return e->ref;
  Result<Stmt*> st = db_.Prepare(
      "INSERT INTO nodes(node_id, registered, updated_at) VALUES (?1, 0, ?2)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, node_id).Bind(2, now_us());
  APOLLO_RETURN_IF_ERROR(s->Run());
  NodeEntry& e = MutableNode(node_id);
  e.ref = db_.LastInsertRowid();
  return e.ref;
}

void WriteTxn::MarkRegistered(const std::string& node_id, int64_t ref) {
  NodeEntry& e = MutableNode(node_id);
  e.ref = ref;
  e.registered = true;
}

// --------------------------------------------------------------- Writer --

Result<std::unique_ptr<Writer>> Writer::Start(std::unique_ptr<Db> db,
                                              std::unique_ptr<Checkpointer> checkpointer,
                                              const Clock& clock, int batch_cap) {
  std::unique_ptr<Writer> w(new Writer(std::move(db), clock, batch_cap < 1 ? 1 : batch_cap));
  APOLLO_RETURN_IF_ERROR(w->LoadCaches());
  if (checkpointer) {
    checkpointer->Attach(*w->db_);
    w->checkpointer_ = std::move(checkpointer);
  }
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
  // The hook points at the checkpointer, which goes first.
  if (checkpointer_) sqlite3_wal_hook(db_->raw(), nullptr, nullptr);
}

Status Writer::LoadCaches() {
  Result<Stmt*> st = db_->Prepare(
      "SELECT n.node_id, n.node_ref, n.registered, COALESCE(s.hwm, 0) "
      "FROM nodes n LEFT JOIN node_seq s ON s.node_ref = n.node_ref");
  if (!st.ok()) return st.status();
  std::unordered_map<int64_t, std::string> by_ref;
  {
    StmtRef s(*st);
    for (;;) {
      Result<bool> row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      NodeEntry e;
      e.ref = s->Int(1);
      e.registered = s->Int(2) != 0;
      e.hwm = static_cast<uint64_t>(s->Int(3));
      by_ref[e.ref] = s->Text(0);
      nodes_[s->Text(0)] = std::move(e);
    }
  }
  st = db_->Prepare("SELECT node_ref, seq FROM seq_above");
  if (!st.ok()) return st.status();
  {
    StmtRef s(*st);
    for (;;) {
      Result<bool> row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      auto it = by_ref.find(s->Int(0));
      if (it != by_ref.end()) nodes_[it->second].above.insert(static_cast<uint64_t>(s->Int(1)));
    }
  }
  st = db_->Prepare("SELECT value FROM meta WHERE name = 'next_hist_id'");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (*row) next_hist_id_ = s->Int(0);
  return Status::Ok();
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

std::deque<std::unique_ptr<WriteOp>> Writer::TakeBatch() {
  std::deque<std::unique_ptr<WriteOp>> batch;
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
    std::deque<std::unique_ptr<WriteOp>> batch = TakeBatch();
    if (batch.empty()) return;  // stopping and drained
    StoreStats delta;
    Status st = RunBatch(batch, delta);
    if (st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.events_applied += delta.events_applied;
      stats_.events_duplicate += delta.events_duplicate;
      stats_.events_stale += delta.events_stale;
      stats_.illegal_transitions += delta.illegal_transitions;
      stats_.unknown_task += delta.unknown_task;
      stats_.malformed += delta.malformed;
      stats_.commits += 1;
    }
    for (auto& op : batch) op->Finish(st);
    if (checkpointer_ && checkpointer_->WriterMustCheckpoint()) {
      // The background checkpoint fell behind a busy writer: catch up here,
      // between transactions, so the WAL can restart from its beginning.
      sqlite3_wal_checkpoint_v2(db_->raw(), "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
  }
}

Status Writer::RunBatch(std::deque<std::unique_ptr<WriteOp>>& batch, StoreStats& delta) {
  TimePoint now = clock_.Now();
  APOLLO_RETURN_IF_ERROR(db_->Run("BEGIN IMMEDIATE"));
  NodeMap txn;
  int64_t next_hist = next_hist_id_;
  for (auto& op : batch) {
    Status st = RunOne(*op, txn, next_hist, delta, now);
    if (!st.ok()) {  // the savepoint machinery itself failed: abandon all
      (void)db_->Run("ROLLBACK");
      return st;
    }
  }
  return Commit(txn, next_hist);
}

// Runs one op in a savepoint. Returns non-OK only when the transaction as a
// whole cannot continue; an op's own failure is kept in the op.
Status Writer::RunOne(WriteOp& op, NodeMap& txn, int64_t& next_hist, StoreStats& delta,
                      TimePoint now) {
  APOLLO_RETURN_IF_ERROR(db_->Run("SAVEPOINT op"));
  NodeMap op_nodes;
  StoreStats op_delta;
  WriteTxn wt(*db_, now, nodes_, txn, op_nodes, next_hist, op_delta);
  Status st = op.Run(wt);
  if (!st.ok()) {
    APOLLO_RETURN_IF_ERROR(db_->Run("ROLLBACK TO op"));
    return db_->Run("RELEASE op");
  }
  // Persist high-water marks the op moved (once per node per op).
  for (auto& [id, e] : op_nodes) {
    if (!e.seq_dirty) continue;
    Result<Stmt*> s = db_->Prepare(
        "INSERT INTO node_seq(node_ref, hwm) VALUES (?1, ?2) "
        "ON CONFLICT(node_ref) DO UPDATE SET hwm = excluded.hwm");
    if (!s.ok()) return s.status();
    StmtRef r(*s);
    r->Bind(1, e.ref).Bind(2, static_cast<int64_t>(e.hwm));
    APOLLO_RETURN_IF_ERROR(r->Run());
    e.seq_dirty = false;
  }
  APOLLO_RETURN_IF_ERROR(db_->Run("RELEASE op"));
  for (auto& [id, e] : op_nodes) txn[id] = std::move(e);
  delta.events_applied += op_delta.events_applied;
  delta.events_duplicate += op_delta.events_duplicate;
  delta.events_stale += op_delta.events_stale;
  delta.illegal_transitions += op_delta.illegal_transitions;
  delta.unknown_task += op_delta.unknown_task;
  delta.malformed += op_delta.malformed;
  return Status::Ok();
}

Status Writer::Commit(NodeMap& txn, int64_t next_hist) {
  Status st;
  if (next_hist != next_hist_id_) {
    Result<Stmt*> s = db_->Prepare("UPDATE meta SET value = ?1 WHERE name = 'next_hist_id'");
    st = s.status();
    if (st.ok()) {
      StmtRef r(*s);
      r->Bind(1, next_hist);
      st = r->Run();
    }
  }
  if (st.ok()) st = db_->Run("COMMIT");
  if (!st.ok()) {
    (void)db_->Run("ROLLBACK");
    return st;
  }
  next_hist_id_ = next_hist;
  for (auto& [id, e] : txn) nodes_[id] = std::move(e);
  return Status::Ok();
}

}  // namespace apollo::store::sqlite
