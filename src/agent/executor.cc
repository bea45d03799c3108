#include "agent/executor.h"

#include <algorithm>

#include "core/log.h"

namespace apollo::agent {
namespace {

// How long the syncer waits for a worker's burst of short tasks to end, so
// their final events share one fdatasync (Executor::LogQueued). About one
// fdatasync on a loaded machine.
constexpr auto kSyncGather = std::chrono::milliseconds(2);

}  // namespace

// Shared between runs_ (so Cancel and Progress can reach it) and the worker
// executing it; whichever lets go last frees it.
struct Executor::Run {
  explicit Run(const Clock& clock) : progress(nullptr, &clock) {}
  IntentRequest request;
  CancelToken token;
  ProgressSink progress;
  bool started = false;      // guarded by Executor::mu_
  bool by_shutdown = false;  // guarded by Executor::mu_: stopped because the agent stops
};

std::string_view DeliveryName(Delivery d) {
  switch (d) {
    case Delivery::kAccepted: return "ACCEPTED";
    case Delivery::kAlreadyRunning: return "ALREADY_RUNNING";
    case Delivery::kAlreadyDone: return "ALREADY_DONE";
    case Delivery::kAlreadyFinished: return "ALREADY_FINISHED";
    case Delivery::kRejected: return "REJECTED";
  }
  return "UNKNOWN";
}

Executor::Executor(ExecutorOptions options, wal::Wal& wal, const HandlerRegistry& registry,
                   const Clock& clock, EventSink& sink)
    : options_(std::move(options)),
      wal_(wal),
      registry_(registry),
      clock_(clock),
      sink_(sink),
      table_(options_.max_finished) {}

Executor::~Executor() { Shutdown(); }

Event Executor::MakeEvent(const std::string& task_id, uint32_t attempt, EventType type,
                          nlohmann::json payload) const {
  Event e;
  e.task_id = task_id;
  e.node_id = options_.node_id;
  e.attempt = attempt;
  e.type = type;
  e.timestamp = clock_.Now();
  e.payload = payload.is_null() ? std::string() : payload.dump();
  return e;
}

Result<uint64_t> Executor::Log(Event e) {
  uint64_t seq = 0;
  {
    std::shared_lock<std::shared_mutex> cp(checkpoint_mu_);
    auto r = wal_.AppendEvent(e);
    if (!r.ok()) return r.status();
    seq = *r;
    e.sequence_number = seq;
    std::lock_guard<std::mutex> lock(mu_);
    table_.ApplyEvent(e);
  }
  sink_.OnDurableEvent(e);
  events_since_checkpoint_.fetch_add(1);
  MaybeCheckpoint();
  return seq;
}

Status Executor::LogBatch(std::vector<Event> events) {
  if (events.empty()) return Status::Ok();
  {
    std::shared_lock<std::shared_mutex> cp(checkpoint_mu_);
    auto seqs = wal_.AppendEvents(events);
    if (!seqs.ok()) return seqs.status();
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < events.size(); ++i) {
      events[i].sequence_number = (*seqs)[i];
      table_.ApplyEvent(events[i]);
    }
  }
  sink_.OnDurableEvents(events);
  events_since_checkpoint_.fetch_add(events.size());
  MaybeCheckpoint();
  return Status::Ok();
}

void Executor::EndBurstLocked(bool& bursting) {
  if (!bursting) return;
  bursting = false;
  --bursting_;
  // Nothing left unsynced (LogFinal reported it): the syncer, if it waits
  // for this burst, finds that at its gather deadline; no wake-up for it.
  if (!unsynced_.empty()) sync_cv_.notify_one();
}

Result<uint64_t> Executor::QueueInWal(Event& e) {
  std::vector<Event> one;
  one.push_back(e);
  auto q = wal_.QueueEvents(std::move(one));
  if (!q.ok()) return q.status();
  e.sequence_number = q->seqs.front();
  return q->ticket;
}

void Executor::LogQueued(Event e) {
  bool wake_syncer = false;
  {
    std::shared_lock<std::shared_mutex> cp(checkpoint_mu_);
    Result<uint64_t> ticket = QueueInWal(e);
    // As for Log: the WAL is unusable, and the task stays claimed.
    if (!ticket.ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    // Only the first of a burst wakes the syncer: then it waits for the
    // burst's end (EndBurstLocked), and more would only wake it for nothing.
    wake_syncer = unsynced_.empty();
    unsynced_.push_back({std::move(e), *ticket});
    // Shutdown stops the syncer only after the workers, the only callers.
    if (!syncer_.joinable()) syncer_ = std::thread([this] { SyncLoop(); });
  }
  if (wake_syncer) sync_cv_.notify_one();
  events_since_checkpoint_.fetch_add(1);
  MaybeCheckpoint();
}

void Executor::LogFinal(Event e) {
  std::vector<Event> report;
  {
    std::shared_lock<std::shared_mutex> cp(checkpoint_mu_);
    Result<uint64_t> ticket = QueueInWal(e);
    // As for Log: the WAL is unusable, and the task stays claimed.
    if (!ticket.ok() || !wal_.AwaitDurable(*ticket).ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    // Group commits are durable in ticket order: every event queued under
    // this ticket or an earlier one (any worker's) is durable now. Taken
    // and applied under one lock, so Checkpoint never sees one in neither.
    std::vector<Unsynced> later;
    for (Unsynced& u : unsynced_) {
      if (u.ticket <= *ticket) {
        table_.ApplyEvent(u.event);
        report.push_back(std::move(u.event));
      } else {
        later.push_back(std::move(u));
      }
    }
    unsynced_.swap(later);
    table_.ApplyEvent(e);
    report.push_back(std::move(e));
  }
  sink_.OnDurableEvents(report);
  events_since_checkpoint_.fetch_add(1);
  MaybeCheckpoint();
}

void Executor::SyncLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    sync_cv_.wait(lock, [this] { return syncer_stop_ || !unsynced_.empty(); });
    if (unsynced_.empty()) return;  // stopping, and everything queued is reported
    // A worker still in its burst adds more, and its last Log writes them
    // all with one fdatasync: wait for that, but never long.
    sync_cv_.wait_for(lock, kSyncGather, [this] { return syncer_stop_ || bursting_ == 0; });
    if (unsynced_.empty()) continue;  // the burst's LogFinal reported them
    std::vector<Unsynced> batch;
    batch.swap(unsynced_);
    syncing_ = batch.size();
    uint64_t ticket = 0;
    for (const Unsynced& u : batch) ticket = std::max(ticket, u.ticket);
    lock.unlock();
    Status s = wal_.AwaitDurable(ticket);
    lock.lock();
    // A failed WAL: as for Log, the tasks stay claimed and are reported
    // FAILED(interrupted) when the agent restarts on a healthy log.
    if (s.ok()) {
      for (const Unsynced& u : batch) table_.ApplyEvent(u.event);
    }
    syncing_ = 0;
    drained_cv_.notify_all();
    if (!s.ok()) continue;
    lock.unlock();
    std::vector<Event> events;
    events.reserve(batch.size());
    for (Unsynced& u : batch) events.push_back(std::move(u.event));
    sink_.OnDurableEvents(events);
    lock.lock();
  }
}

void Executor::MaybeCheckpoint() {
  if (options_.checkpoint_every == 0) return;
  uint64_t n = events_since_checkpoint_.load();
  if (n < options_.checkpoint_every) return;
  // One thread wins the right to checkpoint; the others go on.
  if (!events_since_checkpoint_.compare_exchange_strong(n, 0)) return;
  (void)Checkpoint();  // a failed checkpoint only makes replay longer
}

Status Executor::Checkpoint() {
  std::unique_lock<std::shared_mutex> cp(checkpoint_mu_);
  std::string snapshot;
  {
    // Nothing more can be queued (LogQueued queues under checkpoint_mu_);
    // what is queued is in the WAL before this checkpoint, so it must be in
    // the table too. Never called on the syncer thread.
    std::unique_lock<std::mutex> lock(mu_);
    drained_cv_.wait(lock, [this] { return unsynced_.empty() && syncing_ == 0; });
    snapshot = table_.Serialize();
  }
  return wal_.Checkpoint(snapshot);
}

Result<std::string> Executor::Recover() {
  wal::RecoveredState state = wal_.TakeRecoveredState();
  std::string note;
  std::vector<std::pair<std::string, uint32_t>> interrupted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state.checkpoint) {
      Status s = table_.Restore(*state.checkpoint);
      if (!s.ok()) note = "checkpoint skipped: " + s.message() + "; ";
    }
    size_t replayed = 0, bad = 0;
    for (const auto& rec : state.since_checkpoint) {
      if (rec.type != wal::RecordType::kEvent) continue;
      auto e = DecodeEvent(rec.payload);
      if (!e.ok()) {
        ++bad;
        continue;
      }
      table_.ApplyEvent(*e);
      ++replayed;
    }
    for (const LocalTask* t : table_.Unfinished()) interrupted.emplace_back(t->task_id, t->attempt);
    note += "replayed " + std::to_string(replayed) + " events (" + std::to_string(bad) +
            " undecodable), " + std::to_string(table_.size()) + " tasks known, " +
            std::to_string(interrupted.size()) + " interrupted";
  }
  for (const auto& [task_id, attempt] : interrupted) {
    auto r = Log(MakeEvent(task_id, attempt, EventType::kFailed,
                           {{"error", "interrupted by agent restart"}, {"kind", "transient"}}));
    if (!r.ok()) return r.status();
  }
  return note;
}

Result<Delivery> Executor::Deliver(const IntentRequest& req) {
  auto r = DeliverBatch(std::vector<IntentRequest>{req});
  if (!r.ok()) return r.status();
  return r->front();
}

Result<std::vector<Delivery>> Executor::DeliverBatch(const std::vector<IntentRequest>& requests) {
  // Decided under one lock, intent by intent (a repeat within the batch
  // sees the claim made before it); logged together; queued to run only
  // once their ACCEPTED is durable.
  std::vector<Delivery> out(requests.size(), Delivery::kAlreadyFinished);
  std::vector<Event> events;
  std::vector<size_t> claimed;  // indexes of kNew claims, in order
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::FailedPrecondition("the agent is shutting down");
    for (size_t i = 0; i < requests.size(); ++i) {
      const IntentRequest& req = requests[i];
      if (conservative_.load()) {
        // Repeats of known work are still answered; only new work is refused.
        const LocalTask* t = table_.Find(req.task_id);
        bool reject = t == nullptr || (t->state != TaskState::kRunning &&
                                       t->state != TaskState::kSucceeded && req.attempt > t->attempt);
        if (reject) {
          events.push_back(MakeEvent(
              req.task_id, req.attempt, EventType::kRejected,
              {{"reason", "conservative_mode"},
               {"error", "agent is in conservative mode (cut off from the center past "
                         "its autonomy window); it takes no new work until it "
                         "reconnects"}}));
          out[i] = Delivery::kRejected;
          continue;
        }
      }
      Claim claim = table_.ClaimTask(req.task_id, req.attempt, req.intent, ToUnixMicros(clock_.Now()));
      if (options_.test_disable_claim_check &&
          (claim == Claim::kAlreadyDone || claim == Claim::kAlreadyFinished)) {
        table_.Forget(req.task_id);
        claim = table_.ClaimTask(req.task_id, req.attempt, req.intent, ToUnixMicros(clock_.Now()));
      }
      const LocalTask known = *table_.Find(req.task_id);
      switch (claim) {
        case Claim::kNew: {
          auto run = std::make_shared<Run>(clock_);
          run->request = req;
          runs_[req.task_id] = run;
          claimed.push_back(i);
          events.push_back(MakeEvent(req.task_id, req.attempt, EventType::kAccepted,
                                     {{"intent", req.intent}}));
          out[i] = Delivery::kAccepted;
          break;
        }
        case Claim::kAlreadyRunning:
          // Until its ACCEPTED is durable the claimant answers for the task.
          if (known.accepted_logged) {
            events.push_back(MakeEvent(req.task_id, known.attempt, EventType::kAlreadyRunning, nullptr));
          }
          out[i] = Delivery::kAlreadyRunning;
          break;
        case Claim::kAlreadyDone: {
          auto result = nlohmann::json::parse(
              known.result_json.empty() ? "{}" : known.result_json, nullptr, false);
          // Answered for the attempt asked about: a retry granted after the
          // center gave up on attempt N (e.g. its execution timeout fired as
          // the run finished) is satisfied by that finished run, since
          // instructions are idempotent. Stamped with the old attempt it
          // would be fenced as stale and the row resent forever (chaos seed
          // 718046453). `ran_attempt` says which run did the work.
          events.push_back(MakeEvent(req.task_id, std::max(req.attempt, known.attempt),
                                     EventType::kAlreadyDone,
                                     {{"result", result}, {"ran_attempt", known.attempt}}));
          out[i] = Delivery::kAlreadyDone;
          break;
        }
        case Claim::kAlreadyFinished: out[i] = Delivery::kAlreadyFinished; break;
      }
    }
  }
  Status logged = LogBatch(std::move(events));
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i : claimed) {
    const IntentRequest& req = requests[i];
    if (!logged.ok()) {
      runs_.erase(req.task_id);
      table_.Forget(req.task_id);
      continue;
    }
    queue_.push({static_cast<int>(req.priority), next_order_++, req.task_id});
  }
  // Workers start with the first work (threads, not memory, are what a
  // process running thousands of simulated agents runs out of). Never after
  // Shutdown began: it joins the workers it found.
  const size_t max_workers = static_cast<size_t>(std::max(1, options_.max_concurrency));
  for (size_t k = 0;
       k < claimed.size() && logged.ok() && !stopping_ && workers_.size() < max_workers; ++k) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
  if (!logged.ok()) return logged;
  if (!claimed.empty()) work_cv_.notify_all();
  return out;
}

Status Executor::Cancel(const std::string& task_id, uint32_t attempt, bool as_timeout) {
  std::shared_ptr<Run> queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(task_id);
    if (it == runs_.end() || (attempt != 0 && it->second->request.attempt != attempt)) {
      return Status::NotFound("task " + task_id + " is not queued or running here");
    }
    if (as_timeout) {
      it->second->token.Timeout();
    } else {
      it->second->token.Cancel();
    }
    if (!it->second->started) {
      // Never started: take it out of the queue (its entry goes stale) and
      // report CANCELLED now rather than when a slot frees up.
      it->second->started = true;
      queued = it->second;
      runs_.erase(it);
    }
  }
  if (queued) {
    auto r = Log(as_timeout ? MakeEvent(task_id, queued->request.attempt, EventType::kTimeout,
                                        {{"error",
                                          "timed out (the center's deadline) before it "
                                          "started"}})
                            : MakeEvent(task_id, queued->request.attempt, EventType::kCancelled,
                                        {{"error", "cancelled before it started"}}));
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

void Executor::WorkerLoop() {
  bool bursting = false;
  for (;;) {
    std::shared_ptr<Run> run;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (stopping_ && queue_.empty()) {
          EndBurstLocked(bursting);
          return;
        }
        if (!queue_.empty()) {
          // In conservative mode only cancelled runs leave the queue (to
          // report CANCELLED); nothing new starts.
          auto top = runs_.find(queue_.top().task_id);
          bool runnable = !conservative_.load() || stopping_ ||
                          (top != runs_.end() && top->second->token.stopped());
          if (runnable) break;
        }
        EndBurstLocked(bursting);  // nothing to run: the syncer need not wait
        work_cv_.wait(lock);
      }
      QueueEntry entry = queue_.top();
      queue_.pop();
      auto it = runs_.find(entry.task_id);
      if (it == runs_.end() || it->second->started) continue;  // stale entry
      run = it->second;
      run->started = true;
    }
    Execute(run, bursting);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(run->request.task_id);
    if (it != runs_.end() && it->second == run) runs_.erase(it);
  }
}

void Executor::Execute(const std::shared_ptr<Run>& run, bool& bursting) {
  const IntentRequest& req = run->request;
  const log::Fields fields = log::Fields::Of(req.task_id, options_.node_id, req.attempt);
  const std::string what =
      "task " + req.task_id + " attempt " + std::to_string(req.attempt) + ": " + req.intent;
  const auto started = std::chrono::steady_clock::now();
  HandlerResult result;
  if (run->token.stopped()) {
    result = HandlerResult::Stopped(run->token.reason());
  } else if (auto handler = registry_.NewHandler(req.intent); !handler.ok()) {
    result = UnavailableIntentResult(req.intent, handler.status());
  } else {
    HandlerContext ctx;
    ctx.task_id = req.task_id;
    ctx.attempt = req.attempt;
    ctx.node_id = options_.node_id;
    ctx.intent = req.intent;
    ctx.params = req.params;
    ctx.metadata = req.metadata;
    ctx.clock = &clock_;
    if (req.timeout.count() > 0) ctx.deadline = clock_.Now() + Duration(req.timeout);
    ctx.cancel = &run->token;
    ctx.progress = &run->progress;
    log::Info(what + " started", fields);
    result = RunHandler(**handler, ctx);
  }
  EventType type = EventType::kFailed;
  nlohmann::json payload = {{"detail", result.detail}};
  switch (result.outcome) {
    case Outcome::kSucceeded:
      type = EventType::kSucceeded;
      payload["result"] = result.result;
      break;
    case Outcome::kFailed:
      payload["error"] = result.error;
      payload["kind"] = result.permanent ? "permanent" : "transient";
      break;
    case Outcome::kCancelled:
      type = EventType::kCancelled;
      payload["error"] = result.error.empty() ? "cancelled" : result.error;
      break;
    case Outcome::kTimeout:
      type = EventType::kTimeout;
      payload["error"] = result.error.empty() ? "timed out on the agent" : result.error;
      break;
  }
  bool more_queued = false;
  {
    // Stopped because the agent itself stops: report nothing. The task
    // stays claimed in the WAL and is reported FAILED(interrupted) at the
    // next start, so the center's retry policy decides, instead of a
    // CANCELLED that would end the task for good.
    std::lock_guard<std::mutex> lock(mu_);
    if (run->by_shutdown) return;
    // No longer cancellable or running from here on; the table still says
    // RUNNING until the final event is logged, so repeats stay answered.
    auto it = runs_.find(req.task_id);
    if (it != runs_.end() && it->second == run) runs_.erase(it);
    // More queued: this worker runs on while the final event syncs.
    more_queued = !queue_.empty() && !stopping_;
    if (more_queued && !bursting) {
      bursting = true;
      ++bursting_;
    }
  }
  Event final_event = MakeEvent(req.task_id, req.attempt, type, std::move(payload));
  if (more_queued) {
    // The next task starts before this event is durable (its own ACCEPTED
    // is); this one is reported once durable, as any other.
    LogQueued(std::move(final_event));
  } else {
    // If this fails the WAL is unusable; the task stays claimed and is
    // reported FAILED(interrupted) when the agent restarts on a healthy log.
    // It also writes this worker's queued events, if any: the burst ends
    // only after, so the syncer does not race it with a second fdatasync.
    LogFinal(std::move(final_event));
    std::lock_guard<std::mutex> lock(mu_);
    EndBurstLocked(bursting);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  std::string ended =
      what + " " + std::string(EventTypeName(type)) + " in " + std::to_string(ms) + " ms";
  if (type != EventType::kSucceeded && !result.error.empty()) ended += ": " + result.error;
  log::Info(ended, fields);
}

std::optional<TaskProgress> Executor::Progress(const std::string& task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = runs_.find(task_id);
  if (it == runs_.end()) return std::nullopt;
  const Run& run = *it->second;
  TaskProgress p{task_id, run.request.attempt, run.started, -1, {}};
  agent::Progress latest = run.progress.Latest();
  if (latest.at != TimePoint{} || !latest.message.empty() || latest.fraction > 0) {
    p.fraction = latest.fraction;
    p.message = latest.message;
    p.reported_at = latest.at;
  }
  return p;
}

std::vector<TaskProgress> Executor::Running() const {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, run] : runs_) ids.push_back(id);
  }
  std::vector<TaskProgress> out;
  for (const auto& id : ids) {
    if (auto p = Progress(id)) out.push_back(*p);
  }
  return out;
}

std::vector<LocalTask> Executor::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.All();
}

size_t Executor::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [id, run] : runs_) n += run->started ? 0 : 1;
  return n;
}

void Executor::SetConservative(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  conservative_.store(on);
  work_cv_.notify_all();
}

void Executor::Shutdown() {
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [id, run] : runs_) {
      if (!run->token.stopped()) run->by_shutdown = true;
      run->token.Cancel();
    }
    work_cv_.notify_all();
    workers.swap(workers_);  // none starts once stopping_ is set
  }
  for (auto& w : workers) {
    if (w.joinable()) w.join();
  }
  // Then the syncer: it reports what the workers queued before it ends.
  std::thread syncer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    syncer_stop_ = true;
    syncer.swap(syncer_);
  }
  sync_cv_.notify_all();
  if (syncer.joinable()) syncer.join();
}

}  // namespace apollo::agent
