#pragma once

// What a write op sees while its transaction is open: the connection, the
// store's clock reading for the whole batch, the node refs known so far and
// the counters the op moves. Used on the writer thread only.

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "store/engine/sql.h"
#include "store/engine/task_ref_hints.h"
#include "store/types.h"

namespace apollo::store::engine {

// What the engine remembers about a node row. A ref never changes once
// made; `registered` only goes from false to true, so a cached true holds.
struct NodeFact {
  int64_t ref = 0;
  bool registered = false;
};
using NodeFacts = std::unordered_map<std::string, NodeFact>;  // by node_id

class WriteTxn {
 public:
  WriteTxn(sql::Conn& conn, TimePoint now, const NodeFacts& committed, NodeFacts& fresh,
           TaskRefHints& task_refs, StoreStats& stats)
      : conn_(conn),
        now_(now),
        committed_(committed),
        fresh_(fresh),
        task_refs_(task_refs),
        stats_(stats) {}

  // The connection's calls (sql.h), in this transaction.
  void Exec(const sql::Statement& s, const sql::Params& p = {}, const sql::RowSet* rows = nullptr,
            sql::Rows* out = nullptr, int64_t* changed = nullptr) {
    conn_.Exec(s, p, rows, out, changed);
  }
  Status Flush() { return conn_.Flush(); }
  Result<int64_t> Count(const sql::Statement& s, const sql::Params& p = {},
                        const sql::RowSet* rows = nullptr) {
    return conn_.Count(s, p, rows);
  }
  Result<sql::Rows> Query(const sql::Statement& s, const sql::Params& p = {},
                          const sql::RowSet* rows = nullptr) {
    return conn_.Query(s, p, rows);
  }

  // Exec that must change exactly `expected` rows; checked (kInternal
  // naming `what`) by CheckExpectations after the op's final flush. For
  // invariants, so a check never costs a round trip of its own.
  void ExecExpect(const sql::Statement& s, const sql::Params& p, const sql::RowSet* rows,
                  int64_t expected, std::string what) {
    Expectation& e = expectations_.emplace_back(Expectation{0, expected, std::move(what)});
    conn_.Exec(s, p, rows, nullptr, &e.changed);
  }
  Status CheckExpectations() const {
    for (const Expectation& e : expectations_) {
      if (e.changed != e.expected) {
        return Status::Internal(e.what + ": changed " + std::to_string(e.changed) + " rows, not " +
                                std::to_string(e.expected));
      }
    }
    return Status::Ok();
  }

  TimePoint now() const { return now_; }
  // The lease epoch of the fence the running op carries (0: none); written
  // into its history rows (HistoryRow::epoch).
  int64_t epoch() const { return epoch_; }
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t now_us() const { return ToUnixMicros(now_); }
  StoreStats& stats() { return stats_; }

  // The facts of the nodes among `node_ids` that exist: from the cache, the
  // rest in one query. With `fresh_registration`, a node cached as not
  // registered is read again (another store may have registered it).
  Result<NodeFacts> FindNodes(const std::vector<std::string>& node_ids,
                              bool fresh_registration = false);
  // A node row this transaction found, created or registered.
  void RememberNode(const std::string& node_id, NodeFact fact) { fresh_[node_id] = fact; }
  // The writer's task refs seen lately: hints (task_ref_hints.h), so an op
  // may note them before its transaction commits.
  TaskRefHints& task_refs() { return task_refs_; }

 private:
  struct Expectation {
    int64_t changed = 0;
    int64_t expected = 0;
    std::string what;
  };

  sql::Conn& conn_;
  TimePoint now_;
  std::deque<Expectation> expectations_;  // stable addresses for Exec
  const NodeFacts& committed_;
  NodeFacts& fresh_;
  TaskRefHints& task_refs_;
  StoreStats& stats_;
  int64_t epoch_ = 0;
};

}  // namespace apollo::store::engine
