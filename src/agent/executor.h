#pragma once

// The agent's executor: takes intents from the center, claims each
// (task_id, attempt) exactly once, runs its handler under a concurrency
// limit with a priority queue, and turns every local transition into an
// event that is durable in the WAL before anyone hears of it.
//
// Idempotence: a delivery is decided under one lock (TaskTable::ClaimTask);
// the winner logs ACCEPTED (fsynced) before the handler can start; repeats
// are answered ALREADY_RUNNING / ALREADY_DONE (with the cached result), or
// not at all when that attempt already ended (its event is in the WAL).
//
// Crash recovery: Recover() rebuilds the table from the WAL and reports
// every task that was claimed but not finished as FAILED "interrupted by
// agent restart" (its handler is gone; the center's retry policy decides).
//
// FAILED events carry "kind" next to "error" in their JSON payload:
// "permanent" when retrying cannot help (unknown or disabled intent, bad
// params, refused by this node's policy: HandlerResult::permanent), else
// "transient". See handlers/README.md.
//
// Thread-safety: every public method is thread-safe.

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/event_sink.h"
#include "agent/handlers/handler.h"
#include "agent/handlers/registry.h"
#include "agent/task_table.h"
#include "agent/wal/wal.h"
#include "core/task_spec.h"

namespace apollo::agent {

struct IntentRequest {
  std::string task_id;
  uint32_t attempt = 1;
  std::string intent;
  nlohmann::json params = nlohmann::json::object();
  std::map<std::string, std::string> metadata;
  std::chrono::seconds timeout{0};  // 0: none
  Priority priority = Priority::kNormal;
};

enum class Delivery {
  kAccepted,         // claimed, ACCEPTED logged, queued to run
  kAlreadyRunning,   // a repeat of a claimed task
  kAlreadyDone,      // a repeat of a succeeded task
  kAlreadyFinished,  // a repeat of an attempt that ended otherwise
  kRejected,         // conservative mode: no new work (REJECTED logged)
};
std::string_view DeliveryName(Delivery d);

struct ExecutorOptions {
  std::string node_id;
  int max_concurrency = 4;
  size_t max_finished = 100'000;    // finished tasks remembered for repeats
  uint64_t checkpoint_every = 10'000;  // events between checkpoints; 0: never
  // Planted bug for the chaos checker's own tests: a re-sent intent for a
  // task this agent already finished runs again instead of being answered
  // from the task table. Set only by the test build (APOLLO_TEST_HOOKS).
  bool test_disable_claim_check = false;
};

struct TaskProgress {
  std::string task_id;
  uint32_t attempt = 0;
  bool started = false;   // false: queued
  double fraction = -1;   // -1: never reported
  std::string message;
  TimePoint reported_at{};  // when the handler last reported; epoch: never
};

class Executor {
 public:
  // Worker threads start with the first work, up to max_concurrency (an
  // idle agent holds none). Nothing runs before Recover().
  Executor(ExecutorOptions options, wal::Wal& wal, const HandlerRegistry& registry,
           const Clock& clock, EventSink& sink);
  // Shutdown(): cancels what runs, waits for the workers.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Replays the WAL (checkpoint + events since) and reports interrupted
  // tasks. Call once, before the first Deliver. Never fails on damaged
  // state (a bad checkpoint is reported in the returned note and skipped);
  // fails only if the WAL cannot be written.
  Result<std::string> Recover();

  // Takes one intent. Errors: FailedPrecondition after Shutdown, or the
  // WAL's error if the claim could not be made durable (then nothing runs).
  Result<Delivery> Deliver(const IntentRequest& request);

  // Deliver for the intents of one message, in order, one Delivery each.
  // Every event they cause (ACCEPTED, REJECTED, repeat answers) is logged
  // by one WAL group commit, so N intents cost one fdatasync, not N; each
  // handler still starts only after its ACCEPTED is durable. Errors as
  // Deliver; a WAL error fails the whole batch and then nothing runs.
  Result<std::vector<Delivery>> DeliverBatch(const std::vector<IntentRequest>& requests);

  // Stops (attempt 0: any attempt of) a queued or running task; it reports
  // CANCELLED, or TIMEOUT when `as_timeout` (the center ended the attempt
  // at its deadline: both sides then agree). NotFound if no such task is
  // queued or running.
  Status Cancel(const std::string& task_id, uint32_t attempt, bool as_timeout = false);

  std::optional<TaskProgress> Progress(const std::string& task_id) const;
  std::vector<TaskProgress> Running() const;
  std::vector<LocalTask> Snapshot() const;
  size_t queued() const;

  // Conservative mode: finish what runs, start nothing queued, accept
  // nothing new (REJECTED "conservative_mode").
  void SetConservative(bool on);
  bool conservative() const { return conservative_.load(); }

  // Writes a checkpoint of the table now.
  Status Checkpoint();

  // Refuses new deliveries, cancels queued and running tasks (they report
  // CANCELLED), and joins the workers. Idempotent.
  void Shutdown();

 private:
  struct Run;
  struct QueueEntry {
    int priority;      // Priority enum value: lower runs first
    uint64_t order;    // FIFO within a priority
    std::string task_id;
    bool operator<(const QueueEntry& o) const {  // for std::priority_queue (max-heap)
      return priority != o.priority ? priority > o.priority : order > o.order;
    }
  };

  // Logs `e` durably, applies it to the table and hands it to the sink.
  Result<uint64_t> Log(Event e);
  // Log for several events, in order, with one WAL group commit.
  Status LogBatch(std::vector<Event> events);
  // Log for a worker that has more work queued: queues `e` in the WAL and
  // returns at once; the syncer thread makes it durable, then applies and
  // reports it. The syncer waits, at most kSyncGather, while a worker still
  // runs queued tasks: so the final events of short tasks run back to back
  // share one fdatasync (the last of them, logged with Log, writes them all),
  // and a long handler delays the report of the task before it by at most
  // kSyncGather.
  void LogQueued(Event e);
  // Queues `e` in the WAL without waiting (its seq set) and returns its
  // WAL ticket. checkpoint_mu_ held shared.
  Result<uint64_t> QueueInWal(Event& e);
  // Log for a worker's final event when nothing more is queued: one group
  // commit writes it and whatever LogQueued put in the WAL before it (the
  // burst just ended), and all of them are reported in one sink call,
  // earliest first. So a burst's final events reach the center in one
  // message, not two (the last one's, then the syncer's), and the syncer
  // finds nothing left to do.
  void LogFinal(Event e);
  void SyncLoop();
  void WorkerLoop();
  // Runs `run` and logs its final event. `bursting`: this worker's own flag,
  // set while it has queued final events (LogQueued) and runs on.
  void Execute(const std::shared_ptr<Run>& run, bool& bursting);
  // Clears a worker's `bursting` flag (the syncer may write now). mu_ held.
  void EndBurstLocked(bool& bursting);
  Event MakeEvent(const std::string& task_id, uint32_t attempt, EventType type,
                  nlohmann::json payload) const;
  void MaybeCheckpoint();

  const ExecutorOptions options_;
  wal::Wal& wal_;
  const HandlerRegistry& registry_;
  const Clock& clock_;
  EventSink& sink_;

  // Held shared while an event is appended and applied, exclusive while a
  // checkpoint is serialised and written, so a checkpoint never misses an
  // event logged before it.
  std::shared_mutex checkpoint_mu_;
  std::atomic<uint64_t> events_since_checkpoint_{0};

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  TaskTable table_;                                     // guarded by mu_
  std::map<std::string, std::shared_ptr<Run>> runs_;    // guarded by mu_: queued or running
  std::priority_queue<QueueEntry> queue_;               // guarded by mu_
  uint64_t next_order_ = 0;                             // guarded by mu_
  bool stopping_ = false;                               // guarded by mu_
  std::atomic<bool> conservative_{false};
  std::vector<std::thread> workers_;  // guarded by mu_

  // Events LogQueued put in the WAL, not known durable yet, with their WAL
  // tickets. The syncer takes them all (`syncing_` counts those taken and
  // not yet applied); Checkpoint waits until both are empty, so its snapshot
  // holds every event written before it. All guarded by mu_.
  struct Unsynced {
    Event event;
    uint64_t ticket = 0;
  };
  std::vector<Unsynced> unsynced_;
  size_t syncing_ = 0;
  int bursting_ = 0;  // workers whose `bursting` flag is set
  bool syncer_stop_ = false;
  std::condition_variable sync_cv_;     // the syncer waits for unsynced_
  std::condition_variable drained_cv_;  // Checkpoint waits for the syncer
  std::thread syncer_;                  // started by the first LogQueued
};

}  // namespace apollo::agent
