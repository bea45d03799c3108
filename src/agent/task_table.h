#pragma once

// The agent's local view of every task it has seen: the local half of the
// (task, node) state machine. It is rebuilt after a restart from the WAL
// (last checkpoint + the events after it), and it is what makes delivery
// idempotent: a task_id is claimed here, under one lock, exactly once per
// attempt.
//
// Local states used: RUNNING (claimed: queued or executing), SUCCEEDED,
// FAILED, TIMEOUT, CANCELLED. PENDING/DISPATCHED/RETRYING are the center's.
//
// Thread-safety: not thread-safe; the Executor guards it with its mutex.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/event.h"
#include "core/status.h"
#include "core/task_state.h"

namespace apollo::agent {

struct LocalTask {
  std::string task_id;
  uint32_t attempt = 0;
  std::string intent;
  TaskState state = TaskState::kRunning;
  bool accepted_logged = false;  // the ACCEPTED event of this attempt is durable
  std::string result_json;       // SUCCEEDED: the handler's result
  std::string error;             // FAILED/TIMEOUT/CANCELLED: why
  uint64_t last_seq = 0;         // seq of the last event about this task
  int64_t updated_at_us = 0;
};

// What a delivery of (task_id, attempt) should do, decided atomically.
enum class Claim {
  kNew,             // never seen, or a newer attempt of a finished one: run it
  kAlreadyRunning,  // claimed and not finished (this or a newer attempt)
  kAlreadyDone,     // SUCCEEDED (any attempt): answer with the cached result
  kAlreadyFinished, // this attempt ended FAILED/TIMEOUT/CANCELLED; its final
                    // event is in the WAL already; nothing to do
};

class TaskTable {
 public:
  // `max_finished`: finished tasks kept (oldest evicted first) so repeats are
  // answered long after their records were compacted.
  explicit TaskTable(size_t max_finished = 100'000) : max_finished_(max_finished) {}

  // Decides a delivery and, for kNew, inserts/resets the entry in RUNNING
  // for `attempt` (the claim). Must be called under the caller's lock.
  Claim ClaimTask(const std::string& task_id, uint32_t attempt, const std::string& intent,
                  int64_t now_us);

  // Applies an event (live or replayed). Events of an older attempt than
  // the entry's are ignored. Returns false if nothing changed.
  bool ApplyEvent(const Event& e);

  // Undoes a kNew claim whose ACCEPTED event could not be logged.
  void Forget(const std::string& task_id);

  const LocalTask* Find(const std::string& task_id) const;
  std::vector<const LocalTask*> Unfinished() const;
  std::vector<LocalTask> All() const;
  size_t size() const { return tasks_.size(); }

  // Checkpoint form: {"tasks": [...]} (every entry).
  std::string Serialize() const;
  // Replaces the table with a checkpoint's contents.
  Status Restore(std::string_view checkpoint);

 private:
  void NoteFinished(const std::string& task_id);

  size_t max_finished_;
  std::map<std::string, LocalTask> tasks_;
  std::deque<std::string> finished_order_;  // oldest first, for eviction
};

}  // namespace apollo::agent
