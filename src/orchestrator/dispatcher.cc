// The dispatch loop of Orchestrator: everything that moves a (task, node)
// row without an agent event — dispatch, resend on ack timeout, execution
// timeout (after asking the run for progress), the schedule-to-start
// deadline, retry decisions, compensation, cancelling downstream of a
// failed dependency.
// Every change goes through StateStore::Transition (checked, versioned,
// in the history); intents are sent only after the store committed the
// dispatch, so a crash in between re-sends rather than loses. A pass
// commits its row changes in chunks (one transaction per chunk, not per
// row: the commit's fsync is the cost) and sends each chunk's intents as
// soon as the chunk committed.
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/config_values.h"
#include "core/event.h"
#include "core/task_id.h"
#include "orchestrator/intent_batches.h"
#include "orchestrator/orchestrator.h"

namespace apollo::orchestrator {

using apollo::v1::CenterMessage;

namespace {
// A bound on the spec cache, not an LRU: a spec missing from it is read back
// from the store.
constexpr size_t kMaxCachedSpecs = 100'000;
// A bound on the blocked-reason memo (it only saves rewriting a reason).
constexpr size_t kMaxBlocked = 100'000;

// "45% "copying files", last moved 2026-12-01T03:00:00Z"
std::string DescribeProgress(const apollo::v1::ProgressReply& reply) {
  std::string out;
  if (reply.fraction() >= 0) {
    out = std::to_string(static_cast<int>(reply.fraction() * 100 + 0.5)) + "%";
  } else {
    out = "progress";
  }
  if (!reply.message().empty()) out += " \"" + reply.message().substr(0, 200) + "\"";
  if (reply.last_progress_us() > 0) {
    out += ", last moved " + FormatRfc3339(FromUnixMicros(reply.last_progress_us()));
  } else {
    out = "no progress reported";
  }
  return out;
}

}  // namespace

std::string CompensationTaskId(const std::string& task_id, const std::string& node_id) {
  std::string id = task_id + "-compensate-" + node_id;
  if (TaskIdProblem(id).empty()) return id;
  // Too long, or the node id has characters a task id may not: a digest of
  // the node id keeps it unique and the same every time.
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char ch : node_id) h = (h ^ ch) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, h);
  return task_id.substr(0, kMaxTaskIdLength - 12 - 16) + "-compensate-" + hex;
}

void Orchestrator::DispatchLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(loop_mu_);
      loop_cv_.wait_for(lock, options_.dispatch_interval, [this] { return stop_ || kicked_; });
      if (stop_) return;
      kicked_ = false;
    }
    PaceHeartbeats(clock_.Now());
    // A follower dispatches nothing: the due work is the leader's.
    if (!Leads()) continue;
    // Every write of the pass is the leader's, fenced by its epoch.
    LeaderScope fenced(leadership_);
    // A full pass means more may be due right away.
    while (DispatchPass() >= static_cast<size_t>(options_.due_batch)) {
      std::lock_guard<std::mutex> lock(loop_mu_);
      if (stop_) return;
    }
  }
}

size_t Orchestrator::DispatchPass() {
  UpdateWatermarks();
  heartbeats_.Flush(store_, clock_.Now(), /*force=*/false);
  {
    Pass rollouts;  // first: a batch it opens is dispatched by this pass
    DriveRollouts(rollouts);
  }
  auto due = store_.DueWork(clock_.Now(), options_.due_batch);
  if (!due.ok()) return 0;  // store unavailable: try again next tick
  const size_t chunk = static_cast<size_t>(std::max(1, options_.dispatch_chunk));
  Pass pass;
  HandleProgressReplies(pass);
  const TimePoint now = clock_.Now();
  for (const store::DueItem& item : *due) {
    if (item.start_deadline && now >= *item.start_deadline && item.state != TaskState::kRunning &&
        !IsFinal(item.state)) {
      HandleNotStarted(item, pass);
      if (pass.staged.size() >= chunk) CommitStaged(pass);
      continue;
    }
    switch (item.kind) {
      case store::DueKind::kDispatch:
      case store::DueKind::kRetry: HandleDispatch(item, pass); break;
      case store::DueKind::kAckTimeout: HandleAckTimeout(item, pass); break;
      case store::DueKind::kExecTimeout: HandleExecTimeout(item, pass); break;
      case store::DueKind::kRetryDecision: HandleRetryDecision(item, pass); break;
      case store::DueKind::kUpstreamFailed:
        HandleUpstreamFailed(item, pass);
        break;
      case store::DueKind::kCompensate:
        HandleCompensate(item, pass);
        break;
      case store::DueKind::kDeliverCancel:
        HandleDeliverCancel(item, pass);
        break;
      case store::DueKind::kNone: break;
    }
    if (pass.staged.size() >= chunk) CommitStaged(pass);
  }
  CommitStaged(pass);
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_back_ = std::move(pass.held_back);
    pass_full_ = due->size() >= static_cast<size_t>(options_.due_batch);
  }
  return due->size();
}

void Orchestrator::PlanDispatch(store::NewTask& task) const {
  task.dispatch_now.clear();
  if (!task.spec.depends_on.empty() || !breakers_.Closed(task.spec.intent)) return;
  std::vector<std::string> ready;
  for (const std::string& n : task.node_ids) {
    if (SessionFor(n)) ready.push_back(n);
  }
  if (ready.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pass_full_) return;
    std::erase_if(ready, [this](const std::string& n) { return held_back_.count(n) > 0; });
  }
  task.dispatch_now = std::move(ready);
  task.ack_deadline = clock_.Now() + options_.ack_timeout;
}

void Orchestrator::Stage(Pass& pass, store::TransitionRequest request,
                         std::function<void(Outbox&)> on_applied) {
  pass.staged.push_back(Staged{std::move(request), std::move(on_applied)});
}

void Orchestrator::CommitStaged(Pass& pass) {
  if (pass.staged.empty()) return;
  std::vector<store::TransitionRequest> requests;
  requests.reserve(pass.staged.size());
  for (const Staged& s : pass.staged) requests.push_back(s.request);
  // One transaction for the chunk. Each row has its own outcome: a row
  // someone else moved first (version conflict) is not applied and its
  // follow-up does not run. A store error applies none of them; the rows
  // stay due and the next pass tries again.
  auto r = store_.Transition(requests);
  if (r.ok()) {
    for (size_t i = 0; i < pass.staged.size() && i < r->size(); ++i) {
      if ((*r)[i].outcome != store::Outcome::kApplied) continue;
      const Staged& s = pass.staged[i];
      task_watches_.Notify(s.request.task_id);
      if (s.request.to && (IsFinal(*s.request.to) || IsFinalUnlessRetried(*s.request.to))) {
        TaskMayHaveSettled(s.request.task_id);
      }
      if (s.on_applied) s.on_applied(pass.out);
    }
  } else if (store::IsFenced(r.status())) {
    // Fenced (store/lease.h): another replica leads now; nothing of the
    // chunk was written. The lease thread steps this one down.
    Alert("the store refused this replica's dispatch writes: " + r.status().message());
  }
  pass.staged.clear();
  SendOutbox(pass.out);
}

void Orchestrator::SendOutbox(Outbox& out) {
  // Queued intents for one node go out in as few messages as fit, high priority first
  // (after an outage the backlog drains in priority order).
  for (auto& [node_id, intents] : out) {
    std::stable_sort(intents.begin(), intents.end(),
                     [](const auto& a, const auto& b) { return IntentRank(a) < IntentRank(b); });
    auto session = SessionFor(node_id);
    if (!session) continue;  // the ack timeout resends them
    // In messages the agent accepts (core/wire_limits.h).
    for (CenterMessage& msg : BatchIntents(std::move(intents))) session->Send(std::move(msg));
  }
  out.clear();
}

std::shared_ptr<const TaskSpec> Orchestrator::Spec(const std::string& task_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = specs_.find(task_id);
    if (it != specs_.end()) return it->second;
  }
  auto task = store_.GetTask(task_id);
  if (!task.ok()) return nullptr;
  auto spec = std::make_shared<const TaskSpec>(std::move(task->spec));
  std::lock_guard<std::mutex> lock(mu_);
  if (specs_.size() > kMaxCachedSpecs) specs_.clear();  // a bound, not an LRU: specs reload
  specs_[task_id] = spec;
  return spec;
}

void Orchestrator::TasksStored(std::vector<store::NewTask> tasks) {
  if (bus_ != nullptr) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const store::NewTask& t : tasks) {
      for (const std::string& n : t.node_ids) rows.emplace_back(t.spec.task_id, n);
    }
    bus_->RowsStored(rows);
  }
  std::vector<std::shared_ptr<const TaskSpec>> made;
  made.reserve(tasks.size());
  Outbox out;
  std::vector<std::pair<std::string, std::string>> follow_rows;
  for (store::NewTask& t : tasks) {
    if (t.spec.target_selector.follow) {
      for (const std::string& n : t.node_ids) follow_rows.emplace_back(t.spec.task_id, n);
    }
    // Dispatched by the create (attempt 1), sent now: the rows are stored.
    for (const std::string& n : t.dispatch_now) out[n].push_back(MakeIntent(t.spec, 1));
    task_watches_.Notify(t.spec.task_id);
    made.push_back(std::make_shared<const TaskSpec>(std::move(t.spec)));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (specs_.size() + made.size() > kMaxCachedSpecs) specs_.clear();
    for (auto& s : made) {
      std::string id = s->task_id;
      specs_.insert_or_assign(std::move(id), std::move(s));
    }
  }
  SendOutbox(out);
  if (!follow_rows.empty()) FollowingStored(follow_rows);
}

void Orchestrator::ForgetTask(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  // Keyed (task, node): the task's entries are one range.
  auto in_task = [&](const auto& entry) { return entry.first.first == task_id; };
  for (auto it = blocked_.lower_bound({task_id, ""}); it != blocked_.end() && in_task(*it);) {
    it = blocked_.erase(it);
  }
  for (auto it = progress_asks_.lower_bound({task_id, ""});
       it != progress_asks_.end() && in_task(*it);) {
    it = progress_asks_.erase(it);
  }
}

void Orchestrator::TaskMayHaveSettled(const std::string& task_id) {
  ForgetTask(task_id);
  if (callbacks_ == nullptr) return;
  {
    // Most tasks have no callback_url: no need for the notifier to read
    // the task back. An uncached spec goes to the notifier, which reads it.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = specs_.find(task_id);
    if (it != specs_.end() && it->second->callback_url.empty()) return;
  }
  callbacks_->TaskMayHaveSettled(task_id);
}

void Orchestrator::Block(Pass& pass, const store::DueItem& item, const std::string& reason) {
  pass.held_back.insert(item.node_id);
  // The row says so already (its create wrote it, or an earlier run of the
  // center did): nothing to write, and nothing to remember either. The
  // memo holds only what the store took: a row read before it moved on
  // (cancelled, say) must not be remembered after its task settled.
  // Without this, each start of the center wrote one more identical
  // history entry for every row still waiting. Asked first: it needs no
  // lock.
  if (item.kind != store::DueKind::kAckTimeout && item.blocked_reason == reason) return;
  auto key = std::make_pair(item.task_id, item.node_id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocked_.find(key);
    if (it != blocked_.end() && it->second == reason) return;
  }
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.cause = store::Cause::kDispatch;
  r.expected_version = item.version;
  r.blocked_reason = reason;
  r.detail = reason;
  if (item.kind == store::DueKind::kAckTimeout) {
    r.ack_deadline = clock_.Now() + options_.ack_timeout;
  }
  // Remembered once the store took it: a row that moved on meanwhile (e.g.
  // cancelled, its memo already forgotten) leaves nothing behind.
  Stage(pass, std::move(r), [this, key, reason](Outbox&) {
    std::lock_guard<std::mutex> lock(mu_);
    // Erased when the row moves on or its task settles (ForgetTask); the
    // bound only guards against rows that wait for ever (start_timeout 0).
    if (blocked_.size() >= kMaxBlocked && !blocked_.count(key)) blocked_.clear();
    blocked_[key] = reason;
  });
}

apollo::v1::Intent Orchestrator::MakeIntent(const TaskSpec& spec, uint32_t attempt) const {
  apollo::v1::Intent i;
  i.set_task_id(spec.task_id);
  i.set_attempt(attempt);
  i.set_intent(spec.intent);
  i.set_params_json(spec.params.dump());
  for (const auto& [k, v] : spec.metadata) (*i.mutable_metadata())[k] = v;
  i.set_timeout_s(static_cast<uint32_t>(spec.timeout.count()));
  if (spec.timeout.count() > 0 && options_.max_extensions > 0) {
    // The center decides at the timeout whether the run goes on (progress
    // query, HandleExecTimeout); the agent stops it by itself only once
    // every extension would have run out, plus a query and a cancel each.
    Duration extend_by = options_.extend_by > Duration::zero() ? options_.extend_by : spec.timeout;
    Duration slack = options_.ack_timeout + options_.dispatch_interval;
    Duration backstop = spec.timeout + options_.max_extensions * (extend_by + slack) + slack;
    i.set_stop_after_s(
        static_cast<uint32_t>(std::chrono::ceil<std::chrono::seconds>(backstop).count()));
  }
  switch (spec.priority) {
    case Priority::kHigh: i.set_priority(apollo::v1::PRIORITY_HIGH); break;
    case Priority::kLow: i.set_priority(apollo::v1::PRIORITY_LOW); break;
    case Priority::kNormal: i.set_priority(apollo::v1::PRIORITY_NORMAL); break;
  }
  return i;
}

std::string Orchestrator::NodeAbsentReason(Pass& pass, const std::string& node_id) {
  // The center learns of conservative mode only from the agent: while it
  // is cut off the node just shows as disconnected / lost; once it is back,
  // its Hello says conservative and it stays so until the center has
  // acknowledged its backlog and snapshot (then it is ready and takes work).
  if (ConnectedConservative(node_id)) {
    return "conservative_mode (the agent was cut off past its autonomy window; it takes new "
           "work once its backlog and snapshot are reconciled)";
  }
  if (Connected(node_id)) return "node_syncing (reconnected; reconciling before new work)";
  if (!pass.nodes) {
    auto nodes = store_.ListNodes();
    pass.nodes = nodes.ok() ? std::move(*nodes) : std::vector<store::NodeInfo>{};
  }
  for (const auto& n : *pass.nodes) {
    if (n.node_id != node_id) continue;
    if (!n.registered) return "node_not_registered";
    std::string since = n.last_heartbeat ? " since " + FormatRfc3339(*n.last_heartbeat) : "";
    return (NodeLiveness(n) == Liveness::kLost ? "node_lost" : "node_disconnected") + since;
  }
  return "node_not_registered";
}

std::shared_ptr<SessionHandle> Orchestrator::PassSession(Pass& pass,
                                                         const std::string& node_id) const {
  auto [it, first] = pass.sessions.try_emplace(node_id);
  if (first) it->second = SessionFor(node_id);
  return it->second;
}

void Orchestrator::HandleDispatch(const store::DueItem& item, Pass& pass) {
  auto session = PassSession(pass, item.node_id);
  if (!session) {
    Block(pass, item, NodeAbsentReason(pass, item.node_id));
    return;
  }
  auto spec = Spec(item.task_id);
  if (!spec) return;
  if (!breakers_.Allow(spec->intent, clock_.Now())) {
    Block(pass, item, "circuit_open " + spec->intent);
    return;
  }
  if (item.kind == store::DueKind::kRetry &&
      !retry_budget_.Take(clock_.Now(), RetryReserve(item.priority))) {
    Block(pass, item, "retry_budget");
    return;
  }
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  // PENDING -> DISPATCHED; a RETRYING row stays RETRYING until the agent
  // accepts, but gets its new attempt number now (fencing).
  if (item.kind == store::DueKind::kDispatch) r.to = TaskState::kDispatched;
  r.cause = store::Cause::kDispatch;
  r.expected_version = item.version;
  r.new_attempt = true;
  r.ack_deadline = clock_.Now() + options_.ack_timeout;
  r.detail = "sent to " + item.node_id;
  // Sent only if applied: a row someone else moved first has nothing to send.
  Stage(pass, std::move(r), [this, item, spec](Outbox& out) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocked_.erase({item.task_id, item.node_id});
    }
    out[item.node_id].push_back(MakeIntent(*spec, item.attempt + 1));
  });
}

// The retry budget serves high priority first: normal work leaves a tenth
// of the burst, low work a quarter, for high-priority retries.
double Orchestrator::RetryReserve(Priority p) const {
  switch (p) {
    case Priority::kHigh:
      return 0;
    case Priority::kNormal:
      return retry_budget_.burst() / 10;
    case Priority::kLow:
      return retry_budget_.burst() / 4;
  }
  return 0;
}

void Orchestrator::HandleAckTimeout(const store::DueItem& item, Pass& pass) {
  auto session = PassSession(pass, item.node_id);
  auto spec = Spec(item.task_id);
  if (!session || !spec) {
    Block(pass, item, NodeAbsentReason(pass, item.node_id));
    return;
  }
  if (!retry_budget_.Take(clock_.Now(), RetryReserve(item.priority))) {
    Block(pass, item, "retry_budget");
    return;
  }
  // Not acknowledged: send the same intent again, same task_id and attempt.
  // The agent answers a repeat with its current state, never a second run.
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.cause = store::Cause::kAckTimeout;
  r.expected_version = item.version;
  r.ack_deadline = clock_.Now() + options_.ack_timeout;
  r.blocked_reason = "awaiting_ack since " + FormatRfc3339(clock_.Now());
  r.detail = "no acknowledgement; intent sent again";
  Stage(pass, std::move(r), [this, item, spec](Outbox& out) {
    out[item.node_id].push_back(MakeIntent(*spec, item.attempt));
  });
}

void Orchestrator::HandleExecTimeout(const store::DueItem& item, Pass& pass) {
  if (pass.progressed.count({item.task_id, item.node_id})) return;  // decided this pass
  // Ran past its timeout. A live node that may extend is first asked how
  // the run is doing (the reply decides: extend or stop, see
  // HandleProgressReplies); the row waits one ack timeout for the answer.
  const bool connected = Connected(item.node_id);
  if (connected && item.extensions < options_.max_extensions) {
    bool asked = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = progress_asks_.find({item.task_id, item.node_id});
      asked =
          it != progress_asks_.end() && it->second.attempt == item.attempt && it->second.pending;
    }
    if (!asked) {
      AskProgress(item, pass);
      return;
    }
  }
  TimeOut(item, pass,
          !connected ? "ran past its timeout and the node is not connected"
          : item.extensions >= options_.max_extensions
              ? "ran past its timeout (" + std::to_string(item.extensions) +
                    " extension(s), the most allowed); told the agent to stop it"
              : "ran past its timeout and did not answer the progress query within " +
                    FormatDuration(options_.ack_timeout) + "; told the agent to stop it");
}

void Orchestrator::TimeOut(const store::DueItem& item, Pass& pass, std::string detail) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_asks_.erase({item.task_id, item.node_id});
  }
  const bool connected = Connected(item.node_id);
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.to = TaskState::kTimeout;
  r.cause = store::Cause::kExecTimeout;
  r.expected_version = item.version;
  r.detail = std::move(detail);
  std::function<void(Outbox&)> then;
  if (connected) {
    then = [this, item](Outbox&) { SendCancel(item.task_id, item.node_id, item.attempt, "timeout"); };
  }
  Stage(pass, std::move(r), std::move(then));
}

void Orchestrator::AskProgress(const store::DueItem& item, Pass& pass) {
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.cause = store::Cause::kExecTimeout;
  r.expected_version = item.version;
  r.exec_deadline = clock_.Now() + options_.ack_timeout;
  r.detail = "reached its execution timeout; asked the agent whether it still progresses";
  Stage(pass, std::move(r), [this, item](Outbox&) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (progress_asks_.size() >= kMaxProgressAsks) progress_asks_.clear();
      ProgressAsk& ask = progress_asks_[{item.task_id, item.node_id}];
      if (ask.attempt != item.attempt) ask = ProgressAsk{};  // a new run: nothing seen yet
      ask.attempt = item.attempt;
      ask.version = item.version;
      ask.extensions = item.extensions;
      ask.pending = true;
    }
    auto session = SessionFor(item.node_id);
    if (!session) return;  // no answer: the next due pass stops it
    CenterMessage msg;
    msg.mutable_progress_query()->set_task_id(item.task_id);
    msg.mutable_progress_query()->set_attempt(item.attempt);
    session->Send(std::move(msg));
  });
}

void Orchestrator::OnProgress(const std::shared_ptr<SessionHandle>& handle,
                              const apollo::v1::ProgressReply& reply) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = progress_asks_.find({reply.task_id(), handle->node_id()});
    if (it == progress_asks_.end() || !it->second.pending ||
        it->second.attempt != reply.attempt()) {
      return;  // not asked, or a stale answer
    }
    if (progress_replies_.size() >= kMaxProgressAsks) return;  // bounded; the ask times out
    progress_replies_.emplace_back(handle->node_id(), reply);
  }
  Kick();
}

void Orchestrator::HandleProgressReplies(Pass& pass) {
  std::vector<std::pair<std::string, apollo::v1::ProgressReply>> replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replies.swap(progress_replies_);
  }
  for (const auto& [node_id, reply] : replies) {
    ProgressAsk ask;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = progress_asks_.find({reply.task_id(), node_id});
      if (it == progress_asks_.end() || !it->second.pending ||
          it->second.attempt != reply.attempt()) {
        continue;
      }
      ask = it->second;
    }
    if (!reply.running()) continue;  // it just ended: its final event is on its way
    store::DueItem item;
    item.task_id = reply.task_id();
    item.node_id = node_id;
    item.attempt = reply.attempt();
    item.version = ask.version;
    item.extensions = ask.extensions;
    pass.progressed.insert({item.task_id, node_id});
    const std::string progress = DescribeProgress(reply);
    // Advanced: it moved since the previous query (its own clock both times),
    // or, at the first query, it reported any progress at all.
    if (reply.last_progress_us() <= ask.last_progress_us) {
      TimeOut(item, pass,
              std::string("ran past its timeout without progress since ") +
                  (ask.last_progress_us > 0 ? "the last query" : "it started") + " (" + progress +
                  "); told the agent to stop it");
      continue;
    }
    auto spec = Spec(item.task_id);
    Duration extend_by = options_.extend_by;
    if (extend_by <= Duration::zero() && spec) extend_by = spec->timeout;
    if (extend_by <= Duration::zero()) extend_by = options_.ack_timeout;
    store::TransitionRequest r;
    r.task_id = item.task_id;
    r.node_id = node_id;
    r.cause = store::Cause::kExtended;
    r.expected_version = ask.version;
    r.exec_deadline = clock_.Now() + extend_by;
    r.extend = true;
    r.detail = "execution timeout extended by " + FormatDuration(extend_by) + " (extension " +
               std::to_string(ask.extensions + 1) + " of " +
               std::to_string(options_.max_extensions) + "): " + progress;
    const int64_t seen = reply.last_progress_us();
    Stage(pass, std::move(r), [this, item, seen](Outbox&) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = progress_asks_.find({item.task_id, item.node_id});
      if (it == progress_asks_.end() || it->second.attempt != item.attempt) return;
      it->second.pending = false;
      it->second.last_progress_us = seen;
    });
  }
}

void Orchestrator::HandleNotStarted(const store::DueItem& item, Pass& pass) {
  // Not RUNNING by its schedule-to-start deadline (node lost, never
  // registered, never acknowledging, breaker open...): TIMEOUT, cause
  // not_started, saying why; then the retry policy decides like for any
  // TIMEOUT. If the intent did reach the node, the agent is told to drop
  // it; a late run of this attempt is fenced off (stale) anyway.
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocked_.find({item.task_id, item.node_id});
    if (it != blocked_.end()) why = it->second;
    blocked_.erase({item.task_id, item.node_id});
  }
  const bool connected = Connected(item.node_id);
  if (why.empty()) {
    if (!connected) {
      why = NodeAbsentReason(pass, item.node_id);
    } else {
      why = item.state == TaskState::kDispatched ? "sent, never acknowledged"
            : item.state == TaskState::kRetrying ? "waiting for its retry"
                                                 : "waiting to be dispatched";
    }
  }
  auto spec = Spec(item.task_id);
  std::string limit;
  if (spec) {
    limit = " (start_timeout " +
            FormatDuration(spec->start_timeout.value_or(options_.default_start_timeout)) + ")";
  }
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.to = TaskState::kTimeout;
  r.cause = store::Cause::kNotStarted;
  r.expected_version = item.version;
  r.detail =
      "not started by its deadline " + FormatRfc3339(*item.start_deadline) + limit + ": " + why;
  std::function<void(Outbox&)> then;
  if (connected && item.state != TaskState::kPending) {
    then = [this, item](Outbox&) {
      SendCancel(item.task_id, item.node_id, item.attempt, "not_started");
    };
  }
  Stage(pass, std::move(r), std::move(then));
}

void Orchestrator::HandleRetryDecision(const store::DueItem& item, Pass& pass) {
  auto spec = Spec(item.task_id);
  if (!spec) return;
  RetryDecision d;
  {
    std::lock_guard<std::mutex> lock(mu_);
    d = DecideRetry(spec->retry_policy, item.retries, &rng_);
  }
  if (!d.retry) return;
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.to = TaskState::kRetrying;
  r.cause = store::Cause::kRetry;
  r.expected_version = item.version;
  r.next_attempt_at = clock_.Now() + d.delay;
  r.detail = "retry " + std::to_string(d.retry_number) + " of " +
             std::to_string(spec->retry_policy.max_retries);
  if (!d.tier.empty()) {
    r.detail += ", " + d.tier + " tier " + std::to_string(d.tier_retry) + " of " +
                std::to_string(d.tier_retries);
  }
  r.detail += ", in " + FormatDuration(d.delay);
  Stage(pass, std::move(r));
}

void Orchestrator::HandleDeliverCancel(const store::DueItem& item, Pass& pass) {
  store::TransitionRequest done;
  done.task_id = item.task_id;
  done.node_id = item.node_id;
  done.cause = store::Cause::kCancel;
  done.expected_version = item.version;
  done.cancel_delivered = true;
  std::shared_ptr<SessionHandle> session = PassSession(pass, item.node_id);
  if (!session) {
    // Away: the agent's sync when it is back stops the run (OnSnapshot).
    done.detail = "cancel not sent: " + item.node_id +
                  " is not connected; its sync on reconnect stops the run";
    Stage(pass, std::move(done));
    return;
  }
  done.detail = "cancel sent to " + item.node_id + " (made through another replica)";
  // Sent once the note committed, before this chunk's intents: the agent
  // hears of the cancel before any newer work.
  Stage(pass, std::move(done), [this, item](Outbox&) {
    SendCancel(item.task_id, item.node_id, item.attempt,
               "cancelled by an operator (through another replica)");
  });
}

void Orchestrator::HandleCompensate(const store::DueItem& item, Pass& pass) {
  auto spec = Spec(item.task_id);
  if (!spec) return;
  store::TransitionRequest done;
  done.task_id = item.task_id;
  done.node_id = item.node_id;
  done.cause = store::Cause::kCompensation;
  done.expected_version = item.version;
  done.compensated = true;
  if (!spec->compensates.empty()) {
    // A compensation that failed for good: a person must look. It is
    // never compensated itself, so nothing loops.
    RaiseAlert("compensation_failed", item.node_id, item.task_id,
               "compensation task " + item.task_id + " (for task " + spec->compensates +
                   ") ended " + std::string(TaskStateName(item.state)) + " on " + item.node_id +
                   ": the failed task's effects were not undone there");
    done.detail = "compensation did not succeed; alert raised";
    Stage(pass, std::move(done));
    return;
  }
  if (!spec->on_failure) {
    Stage(pass, std::move(done));
    return;
  }
  store::NewTask task = CompensationTask(*spec, item.node_id);
  // The same id every time: a crash between this create and the mark below
  // finds the task there (created = false), never a second one.
  auto created = store_.CreateTasks(std::span<const store::NewTask>(&task, 1));
  if (!created.ok()) return;  // the row stays due; the next pass tries again
  const std::string id = task.spec.task_id;
  TasksStored({std::move(task)});
  done.detail = "compensation task " + id + " (" + spec->on_failure->intent + ") started";
  Stage(pass, std::move(done), [this](Outbox&) { Kick(); });
}

store::NewTask Orchestrator::CompensationTask(const TaskSpec& failed,
                                              const std::string& node_id) const {
  TaskSpec c;
  c.task_id = CompensationTaskId(failed.task_id, node_id);
  c.intent = failed.on_failure->intent;
  c.params = failed.on_failure->params;
  c.timeout = failed.on_failure->timeout.count() > 0 ? failed.on_failure->timeout : failed.timeout;
  c.target_selector.type = SelectorType::kNodes;
  c.target_selector.nodes = {node_id};
  c.retry_policy = *RetryPolicy::Preset("none");  // a failed compensation alerts, never loops
  c.metadata = failed.metadata;
  c.priority = failed.priority;
  c.start_timeout = failed.start_timeout;
  c.compensates = failed.task_id;
  store::NewTask t;
  t.node_ids = {node_id};
  t.start_timeout = c.start_timeout.value_or(options_.default_start_timeout);
  t.spec = std::move(c);
  return t;
}

void Orchestrator::HandleUpstreamFailed(const store::DueItem& item, Pass& pass) {
  store::TransitionRequest r;
  r.task_id = item.task_id;
  r.node_id = item.node_id;
  r.to = TaskState::kCancelled;
  r.cause = store::Cause::kUpstreamFailed;
  r.expected_version = item.version;
  r.detail = "cancelled: a task it depends on ended without success";
  Stage(pass, std::move(r));
}

}  // namespace apollo::orchestrator
