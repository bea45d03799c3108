#include "orchestrator/api_service.h"

#include <thread>

#include "orchestrator/submit.h"

namespace apollo::orchestrator {
namespace {

void FillNode(const store::NodeRow& row, apollo::v1::NodeTask* out) {
  out->set_node_id(row.node_id);
  out->set_status(std::string(TaskStateName(row.state)));
  out->set_version(row.version);
  out->set_attempt(row.attempt);
  out->set_retries(static_cast<uint32_t>(row.retries));
  out->set_updated_at_us(ToUnixMicros(row.updated_at));
  out->set_last_error(row.last_error);
  out->set_blocked_reason(row.blocked_reason);
  out->set_permanent(row.permanent);
  out->set_batch(row.batch);
  // The SUCCEEDED event's payload is {"result": ..., "detail": ...}; the
  // operator wants the handler's result itself.
  auto payload = nlohmann::json::parse(row.result, nullptr, false);
  if (payload.is_object() && payload.contains("result")) {
    out->set_result_json(payload["result"].dump());
  } else {
    out->set_result_json(row.result);
  }
}

// True when nothing more will happen to the task without an operator:
// every node SUCCEEDED or CANCELLED, or FAILED/TIMEOUT with its retries
// used up.
bool Settled(const apollo::v1::Task& t) {
  int max_retries = 0;
  auto spec = SpecFromJson(nlohmann::json::parse(t.spec_json(), nullptr, false));
  if (spec.ok()) max_retries = spec->retry_policy.max_retries;
  for (const auto& n : t.nodes()) {
    auto s = ParseTaskState(n.status());
    if (!s) return false;
    bool exhausted = static_cast<int>(n.retries()) >= max_retries || n.permanent();
    if (!IsSettled(*s, exhausted)) return false;
  }
  return true;
}

}  // namespace

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), s.message());
}

Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return Status::Ok();
  return Status(static_cast<StatusCode>(s.error_code()), s.error_message());
}

grpc::Status ApiService::LoadTask(const std::string& task_id, apollo::v1::Task* out) {
  store::TaskRow t;
  grpc::Status s = ReadTask(task_id, &t);
  if (s.ok()) FillTask(t, out);
  return s;
}

grpc::Status ApiService::ReadTask(const std::string& task_id, store::TaskRow* out) {
  auto t = store_.GetTask(task_id);
  if (!t.ok()) {
    if (t.status().code() == StatusCode::kNotFound) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no task '" + task_id + "'");
    }
    return ToGrpc(t.status());
  }
  *out = std::move(*t);
  return grpc::Status::OK;
}

void ApiService::FillTask(const store::TaskRow& t, apollo::v1::Task* out) {
  out->set_task_id(t.spec.task_id);
  out->set_intent(t.spec.intent);
  out->set_status(std::string(TaskStateName(t.status)));
  out->set_spec_json(CanonicalSpec(t.spec));
  out->set_created_at_us(ToUnixMicros(t.created_at));
  out->mutable_metadata()->insert(t.spec.metadata.begin(), t.spec.metadata.end());
  out->set_compensates(t.spec.compensates);
  out->set_start_timeout_s(t.start_timeout.count());
  for (const auto& n : t.nodes) FillNode(n, out->add_nodes());
  out->set_held_by(t.held_by);
  if (t.rollout && t.spec.rollout) {
    const store::RolloutRow& r = *t.rollout;
    const RolloutTally tally = TallyRollout(t);
    apollo::v1::RolloutStatus* ro = out->mutable_rollout();
    ro->set_state(std::string(RolloutStateName(r.state)));
    ro->set_open_batch(r.open_batch);
    ro->set_batches(r.batches);
    ro->set_failures(tally.failures);
    ro->set_tolerated(ToleratedFailures(*t.spec.rollout, r, tally.nodes));
    ro->set_paused_by(r.paused_by);
    ro->set_reason(r.reason);
    if (r.next_at) ro->set_next_at_us(ToUnixMicros(*r.next_at));
    ro->set_summary(DescribeRollout(*t.spec.rollout, r, tally));
  }
}

grpc::Status ApiService::SubmitTasks(grpc::ServerContext* ctx,
                                     const apollo::v1::SubmitTasksRequest* req,
                                     apollo::v1::SubmitTasksResponse* resp) {
  constexpr std::string_view kAction = "task.submit";
  if (req->dry_run()) {  // stores nothing: checked, not audited
    if (grpc::Status a = Allow(*ctx, Role::kOperator, kAction); !a.ok()) return a;
    return Submit(req, resp, nullptr);
  }
  std::string target;  // the stored tasks' ids, known once stored
  return Audited(
      *ctx, Role::kOperator, kAction, target, *req, [&](const Caller& caller, bool& audited) {
        // The row rides in the tasks' own transaction: no commit
        // of its own between the tasks and their dispatch.
        store::AuditRow row = access_.AuditRowOf(caller, kAction, "", *req, Status::Ok());
        grpc::Status s = Submit(req, resp, &row);
        audited = s.ok() && resp->errors_size() == 0;
        for (const auto& t : resp->tasks()) {
          target += (target.empty() ? "" : ",") + t.task_id();
        }
        if (resp->errors_size() > 0) target = "(rejected task file)";
        return s;
      });
}

grpc::Status ApiService::Submit(const apollo::v1::SubmitTasksRequest* req,
                                apollo::v1::SubmitTasksResponse* resp,
                                const store::AuditRow* audit) {
  if (!req->dry_run() && orchestrator_.QueuePaused()) {
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        "queue_paused: the dispatch queue holds " + std::to_string(orchestrator_.QueueDepth()) +
            " of " + std::to_string(orchestrator_.QueueCapacity()) +
            " rows; new submissions are refused until it drains (accepted work continues); "
            "retry later");
  }
  std::vector<store::NewTask> stored;
  SubmitOptions options;
  options.presets = &orchestrator_.options().retry_presets;
  options.default_start_timeout = orchestrator_.options().default_start_timeout;
  options.audit = audit;
  options.plan_dispatch = [this](store::NewTask& t) { orchestrator_.PlanDispatch(t); };
  Status s;
  {
    // Rows the create dispatches are the leader's work: fenced by its epoch
    // like every dispatch (no fence on a follower, which plans none).
    LeaderScope fenced(orchestrator_.leadership());
    s = SubmitTaskFile(*req, options, store_, orchestrator_.ids(), resp, &stored);
  }
  if (store::IsFenced(s)) {
    // This replica was deposed and does not know yet: the tasks are stored
    // without dispatch (nothing of the refused create was), for the new
    // leader's next pass. The operator's submission does not fail for it.
    resp->Clear();
    stored.clear();
    options.plan_dispatch = nullptr;
    s = SubmitTaskFile(*req, options, store_, orchestrator_.ids(), resp, &stored);
  }
  if (s.ok() && !req->dry_run() && resp->errors_size() == 0) {
    // Rows the create did not dispatch are the dispatch loop's (a kick,
    // not its next tick); a submit dispatched whole needs no pass.
    bool left = false;
    for (const auto& t : stored) left = left || t.dispatch_now.size() < t.node_ids.size();
    // Dispatch, ingest and callbacks find these cached instead of reading
    // each task back from the store.
    orchestrator_.TasksStored(std::move(stored));
    if (left) orchestrator_.Kick();
  }
  return ToGrpc(s);
}

grpc::Status ApiService::GetTask(grpc::ServerContext* ctx, const apollo::v1::GetTaskRequest* req,
                                 apollo::v1::Task* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "task.get"); !a.ok()) return a;
  return LoadTask(req->task_id(), resp);
}

grpc::Status ApiService::ListTasks(grpc::ServerContext* ctx,
                                   const apollo::v1::ListTasksRequest* req,
                                   apollo::v1::ListTasksResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "task.list"); !a.ok()) return a;
  store::TaskQuery q;
  if (!req->status().empty()) {
    auto s = ParseTaskState(req->status());
    if (!s) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "unknown status '" + req->status() + "' (use PENDING, RUNNING, ...)");
    }
    q.status = *s;
  }
  if (!req->intent().empty()) q.intent = req->intent();
  if (static_cast<size_t>(req->metadata_size()) > store::kMaxMetadataFilters) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        "at most " + std::to_string(store::kMaxMetadataFilters) + " metadata filters (--meta)");
  }
  q.metadata.insert(req->metadata().begin(), req->metadata().end());
  q.limit = PageLimit(req->limit());
  q.page_token = req->page_token();
  auto page = store_.ListTasks(q);
  if (!page.ok()) return ToGrpc(page.status());
  for (const auto& t : page->tasks) {
    auto* out = resp->add_tasks();
    out->set_task_id(t.task_id);
    out->set_intent(t.intent);
    out->set_status(std::string(TaskStateName(t.status)));
    out->set_created_at_us(ToUnixMicros(t.created_at));
    out->mutable_metadata()->insert(t.metadata.begin(), t.metadata.end());
  }
  resp->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status ApiService::CancelTask(grpc::ServerContext* ctx,
                                    const apollo::v1::CancelTaskRequest* req,
                                    apollo::v1::Task* resp) {
  return Audited(*ctx, Role::kOperator, "task.cancel", req->task_id(), *req,
                 [&] { return Cancel(req, resp); });
}

grpc::Status ApiService::Cancel(const apollo::v1::CancelTaskRequest* req, apollo::v1::Task* resp) {
  auto t = store_.GetTask(req->task_id());
  if (!t.ok()) return LoadTask(req->task_id(), resp);
  std::string reason = req->reason().empty() ? "cancelled by an operator" : req->reason();
  if (t->spec.target_selector.follow) {
    // First: a node registering meanwhile must not get a fresh row of it.
    if (Status st = store_.StopFollowing(req->task_id()); !st.ok()) return ToGrpc(st);
    orchestrator_.FollowingChanged();
  }
  // Rows whose agent may hold a run to stop (sent, running, or between
  // attempts of one it was sent).
  auto may_run = [](TaskState s) {
    return s == TaskState::kDispatched || s == TaskState::kRunning || s == TaskState::kRetrying;
  };
  // A row another writer moved meanwhile (a dispatch, a batch opening, a
  // hold) loses its compare-and-set: read it again and cancel it as it is
  // now, a few times at most.
  for (int round = 0; round < 5; ++round) {
    std::vector<store::TransitionRequest> requests;
    for (const auto& n : t->nodes) {
      if (!IsTransitionAllowed(n.state, TaskState::kCancelled)) continue;
      store::TransitionRequest r;
      r.task_id = n.task_id;
      r.node_id = n.node_id;
      r.to = TaskState::kCancelled;
      r.cause = store::Cause::kCancel;
      r.expected_version = n.version;
      r.detail = reason;
      // Only the leader holds the agents' sessions: through a follower, the
      // row becomes due for the leader to tell the agent.
      r.deliver_cancel = !orchestrator_.Leads() && may_run(n.state);
      requests.push_back(std::move(r));
    }
    if (requests.empty()) break;
    auto outcomes = store_.Transition(requests);
    if (!outcomes.ok()) return ToGrpc(outcomes.status());
    bool conflict = false;
    for (size_t i = 0; i < requests.size(); ++i) {
      conflict = conflict || (*outcomes)[i].outcome == store::Outcome::kVersionConflict;
      if ((*outcomes)[i].outcome != store::Outcome::kApplied) continue;
      for (const auto& row : t->nodes) {
        if (row.node_id == requests[i].node_id && may_run(row.state)) {
          orchestrator_.SendCancel(row.task_id, row.node_id, row.attempt, reason);
        }
      }
    }
    if (!conflict) break;
    t = store_.GetTask(req->task_id());
    if (!t.ok()) return ToGrpc(t.status());
  }
  orchestrator_.task_watches().Notify(req->task_id());
  orchestrator_.TaskMayHaveSettled(req->task_id());
  orchestrator_.Kick();
  return LoadTask(req->task_id(), resp);
}

grpc::Status ApiService::RetryTask(grpc::ServerContext* ctx,
                                   const apollo::v1::RetryTaskRequest* req,
                                   apollo::v1::Task* resp) {
  return Audited(*ctx, Role::kOperator, "task.retry", req->task_id(), *req,
                 [&] { return Retry(req, resp); });
}

grpc::Status ApiService::Retry(const apollo::v1::RetryTaskRequest* req, apollo::v1::Task* resp) {
  auto t = store_.GetTask(req->task_id());
  if (!t.ok()) return LoadTask(req->task_id(), resp);
  std::vector<store::TransitionRequest> requests;
  for (const auto& n : t->nodes) {
    if (n.state != TaskState::kFailed && n.state != TaskState::kTimeout) continue;
    store::TransitionRequest r;
    r.task_id = n.task_id;
    r.node_id = n.node_id;
    r.to = TaskState::kRetrying;
    r.cause = store::Cause::kOperator;
    r.expected_version = n.version;
    r.next_attempt_at = clock_.Now();
    r.detail = "retry requested by an operator";
    requests.push_back(std::move(r));
  }
  if (requests.empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "task '" + req->task_id() + "' has no FAILED or TIMEOUT node to retry");
  }
  auto outcomes = store_.Transition(requests);
  if (!outcomes.ok()) return ToGrpc(outcomes.status());
  orchestrator_.task_watches().Notify(req->task_id());
  orchestrator_.Kick();
  return LoadTask(req->task_id(), resp);
}

namespace {
std::string Who(const Caller& caller) {
  return caller.who.empty() ? "an operator at " + caller.peer : caller.who;
}
}  // namespace

grpc::Status ApiService::ControlRollout(grpc::ServerContext* ctx,
                                        const apollo::v1::ControlRolloutRequest* req,
                                        apollo::v1::Task* resp) {
  auto action = ParseRolloutAction(req->action());
  const std::string audit_action =
      "task." + (action ? std::string(RolloutActionName(*action)) : std::string("rollout"));
  return Audited(
      *ctx, Role::kOperator, audit_action, req->task_id(), *req, [&](const Caller& caller) {
        if (!action) {
          return grpc::Status(
              grpc::StatusCode::INVALID_ARGUMENT,
              "action must be pause, resume, approve or abort, got '" + req->action() + "'");
        }
        const std::string who = Who(caller);
        auto r = orchestrator_.ControlRollout(req->task_id(), *action, who, req->reason());
        if (!r.ok()) {
          if (r.status().code() == StatusCode::kNotFound) {
            return LoadTask(req->task_id(), resp);
          }
          return ToGrpc(r.status());
        }
        return LoadTask(req->task_id(), resp);
      });
}

grpc::Status ApiService::ChangeDependencies(grpc::ServerContext* ctx,
                                            const apollo::v1::ChangeDependenciesRequest* req,
                                            apollo::v1::Task* resp) {
  return Audited(
      *ctx, Role::kOperator, "task.deps", req->task_id(), *req, [&](const Caller& caller) {
        if (req->add_size() == 0 && req->remove_size() == 0) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "nothing to change: give dependencies to add or remove");
        }
        store::DependencyChange c;
        c.task_id = req->task_id();
        c.add.assign(req->add().begin(), req->add().end());
        c.remove.assign(req->remove().begin(), req->remove().end());
        c.who = Who(caller);
        c.reason = req->reason();
        if (Status st = store_.ChangeDependencies(c); !st.ok()) {
          if (st.code() == StatusCode::kNotFound && st.message() == "no task " + req->task_id()) {
            return LoadTask(req->task_id(), resp);
          }
          return ToGrpc(st);
        }
        orchestrator_.task_watches().Notify(req->task_id());
        orchestrator_.Kick();
        return LoadTask(req->task_id(), resp);
      });
}

grpc::Status ApiService::HoldTask(grpc::ServerContext* ctx, const apollo::v1::HoldTaskRequest* req,
                                  apollo::v1::Task* resp) {
  return Audited(*ctx, Role::kOperator, req->release() ? "task.release" : "task.hold",
                 req->task_id(), *req, [&](const Caller& caller) {
                   store::HoldChange c{req->task_id(), !req->release(), Who(caller), req->reason()};
                   if (Status st = store_.HoldTask(c); !st.ok()) {
                     if (st.code() == StatusCode::kNotFound) return LoadTask(req->task_id(), resp);
                     return ToGrpc(st);
                   }
                   orchestrator_.task_watches().Notify(req->task_id());
                   orchestrator_.Kick();
                   return LoadTask(req->task_id(), resp);
                 });
}

grpc::Status ApiService::ListNodes(grpc::ServerContext* ctx, const apollo::v1::ListNodesRequest*,
                                   apollo::v1::ListNodesResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "node.list"); !a.ok()) return a;
  auto nodes = store_.ListNodes();
  if (!nodes.ok()) return ToGrpc(nodes.status());
  for (const auto& n : *nodes) {
    auto* out = resp->add_nodes();
    out->set_node_id(n.node_id);
    out->mutable_labels()->insert(n.labels.begin(), n.labels.end());
    for (const auto& g : n.groups) out->add_groups(g);
    for (const auto& i : n.intents) out->add_intents(i);
    for (const auto& i : n.disabled_intents) out->add_disabled_intents(i);
    out->set_liveness(std::string(LivenessName(orchestrator_.NodeLiveness(n))));
    out->set_mode(n.mode.empty() ? "normal" : n.mode);
    if (n.last_heartbeat) out->set_last_heartbeat_us(ToUnixMicros(*n.last_heartbeat));
    out->set_connected(orchestrator_.Connected(n.node_id));
  }
  return grpc::Status::OK;
}

grpc::Status ApiService::TaskEvents(grpc::ServerContext* ctx,
                                    const apollo::v1::TaskEventsRequest* req,
                                    apollo::v1::TaskEventsResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "task.events"); !a.ok()) return a;
  auto history = store_.GetHistory(req->task_id());
  if (!history.ok()) return ToGrpc(history.status());
  if (history->empty()) {
    apollo::v1::Task probe;
    grpc::Status s = LoadTask(req->task_id(), &probe);
    if (!s.ok()) return s;
  }
  for (const auto& h : *history) {
    auto* e = resp->add_entries();
    e->set_task_id(h.task_id);
    e->set_node_id(h.node_id);
    // A row's creation has no "from": the CLI shows it as "(new)".
    if (h.cause != store::Cause::kCreate) e->set_from_status(std::string(TaskStateName(h.from)));
    e->set_to_status(std::string(TaskStateName(h.to)));
    e->set_version(h.version);
    e->set_attempt(h.attempt);
    std::string cause(store::CauseName(h.cause));
    if (!h.event_id.empty()) cause += " " + h.event_id;
    if (h.event_type) cause += " " + std::string(EventTypeName(*h.event_type));
    if (h.outcome != store::Outcome::kApplied) cause += " (" + std::string(store::OutcomeName(h.outcome)) + ")";
    e->set_cause(cause);
    e->set_detail(h.detail);
    e->set_at_us(ToUnixMicros(h.at));
    e->set_id(h.id);
    e->set_epoch(h.epoch);
  }
  return grpc::Status::OK;
}

grpc::Status ApiService::WatchTask(grpc::ServerContext* ctx, const apollo::v1::WatchTaskRequest* req,
                                   grpc::ServerWriter<apollo::v1::Task>* writer) {
  if (grpc::Status a = Allow(*ctx, Role::kOperator, "task.watch"); !a.ok()) return a;
  auto slot = orchestrator_.watchers().TryAcquire();  // held until the watch ends
  if (!slot) {
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        "too many watchers: " + std::to_string(orchestrator_.watchers().capacity()) +
            " at once (limits.max_watchers); try again later, or poll with apollo-cli task status");
  }
  std::string last;
  // Reads the task, then sends each change as soon as the center commits
  // it (TaskWatchHub). A commit of agent events comes with what it changed
  // and is applied to the copy read (store::CatchUp); any other change, or
  // 200 ms without one, reads the task again. Ends when every node is
  // settled or the client goes away. Bounded by a day.
  TaskWatchHub::Watch watch(orchestrator_.task_watches(), req->task_id());
  const auto end = std::chrono::steady_clock::now() + std::chrono::hours(24);
  store::TaskRow row;
  bool read = true;
  while (!ctx->IsCancelled() && std::chrono::steady_clock::now() < end) {
    TaskWatchHub::Watch::Changes told = watch.Take();  // before the read: nothing slips between
    read = read || told.stale;
    for (size_t i = 0; !read && i < told.commits.size(); ++i) {
      read = !store::CatchUp(row, *told.commits[i]);
    }
    if (read) {
      grpc::Status s = ReadTask(req->task_id(), &row);
      if (!s.ok()) return s;
    }
    apollo::v1::Task t;
    FillTask(row, &t);
    std::string now = t.SerializeAsString();
    if (now != last) {
      if (!writer->Write(t)) return grpc::Status::OK;
      last = std::move(now);
    }
    if (Settled(t)) return grpc::Status::OK;
    read = !watch.Wait(std::chrono::milliseconds(200));
  }
  return grpc::Status::OK;
}

grpc::Status ApiService::WatchTasks(grpc::ServerContext* ctx,
                                    const apollo::v1::WatchTasksRequest* req,
                                    grpc::ServerWriter<apollo::v1::WatchTasksResponse>* writer) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "task.stream"); !a.ok()) return a;
  auto slot = orchestrator_.watchers().TryAcquire();  // held until the watch ends
  if (!slot) {
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        "too many watchers: " + std::to_string(orchestrator_.watchers().capacity()) +
            " at once (limits.max_watchers); try again later");
  }
  // A keep-alive (an empty message) after this long without a change: the
  // client knows the stream is alive, and a client that went away is seen
  // by the failed write. Bounded by a day.
  constexpr auto kKeepAlive = std::chrono::seconds(5);
  const auto end = std::chrono::steady_clock::now() + std::chrono::hours(24);
  apollo::v1::WatchTasksResponse out;
  auto send_task = [&](const std::string& id) {
    out.Clear();
    grpc::Status s = LoadTask(id, out.mutable_task());
    // A task that is gone (or unreadable for now) is not news; the next
    // change of it is.
    return !s.ok() || writer->Write(out);
  };
  if (!req->task_id().empty()) {
    // One task: its state now, then each change (as WatchTask, but past
    // settling: a retry or a cancel is news too).
    TaskWatchHub::Watch watch(orchestrator_.task_watches(), req->task_id());
    std::string last;
    auto last_write = std::chrono::steady_clock::now();
    while (!ctx->IsCancelled() && std::chrono::steady_clock::now() < end) {
      const uint64_t seen = watch.generation();  // before the read: no change slips between
      out.Clear();
      grpc::Status s = LoadTask(req->task_id(), out.mutable_task());
      if (!s.ok()) return s;
      std::string now = out.task().SerializeAsString();
      const auto t = std::chrono::steady_clock::now();
      if (now != last || t - last_write >= kKeepAlive) {
        if (now == last) out.Clear();  // nothing new: a keep-alive
        if (!writer->Write(out)) return grpc::Status::OK;
        last = std::move(now);
        last_write = t;
      }
      watch.WaitPast(seen, kKeepAlive);
    }
    return grpc::Status::OK;
  }
  // Every task: the ids the hub's feed names, each read when sent (the
  // state after its latest change; changes in between fold into one).
  TaskWatchHub::Feed feed(orchestrator_.task_watches());
  out.Clear();  // at once: the caller sees the stream is open (or why not) now
  if (!writer->Write(out)) return grpc::Status::OK;
  while (!ctx->IsCancelled() && std::chrono::steady_clock::now() < end) {
    TaskWatchHub::Feed::Changes c = feed.Next(kKeepAlive, 256);
    if (c.overflow) {
      out.Clear();
      out.set_resync(true);
      if (!writer->Write(out)) return grpc::Status::OK;
      continue;
    }
    if (c.task_ids.empty()) {
      out.Clear();
      if (!writer->Write(out)) return grpc::Status::OK;
      continue;
    }
    for (const std::string& id : c.task_ids) {
      if (!send_task(id)) return grpc::Status::OK;
    }
  }
  return grpc::Status::OK;
}

grpc::Status ApiService::SyncNode(grpc::ServerContext* ctx, const apollo::v1::SyncNodeRequest* req,
                                  apollo::v1::SyncNodeResponse* resp) {
  return Audited(*ctx, Role::kAdmin, "node.sync", req->node_id(), *req, [&] {
    Status s = orchestrator_.RequestSnapshot(req->node_id());
    if (!s.ok()) return ToGrpc(s);
    resp->set_message("snapshot requested from " + req->node_id() +
                      "; reconciliation runs when it arrives");
    return grpc::Status::OK;
  });
}

grpc::Status ApiService::Reconcile(grpc::ServerContext* ctx,
                                   const apollo::v1::ReconcileRequest* req,
                                   apollo::v1::ReconcileResponse* resp) {
  // A dry run only reads; a repair writes rows.
  if (req->dry_run()) {
    if (grpc::Status a = Allow(*ctx, Role::kViewer, "reconcile.check"); !a.ok()) return a;
    return RunReconcile(req, resp);
  }
  return Audited(*ctx, Role::kAdmin, "reconcile.repair",
                 req->node_id().empty() ? std::string("(every node)") : req->node_id(), *req,
                 [&] { return RunReconcile(req, resp); });
}

grpc::Status ApiService::RunReconcile(const apollo::v1::ReconcileRequest* req,
                                      apollo::v1::ReconcileResponse* resp) {
  auto r = orchestrator_.Reconcile(req->node_id(), req->dry_run());
  if (!r.ok()) return ToGrpc(r.status());
  for (const DriftItem& d : r->drift) {
    auto* out = resp->add_drift();
    out->set_node_id(d.node_id);
    out->set_task_id(d.task_id);
    out->set_attempt(d.attempt);
    if (d.store_state) out->set_store_status(std::string(TaskStateName(*d.store_state)));
    if (d.agent_state) out->set_agent_status(std::string(TaskStateName(*d.agent_state)));
    out->set_action(std::string(DriftActionName(d.action)));
    out->set_detail(d.detail);
  }
  resp->set_repaired(r->repaired);
  for (const auto& n : r->nodes_without_snapshot) resp->add_nodes_without_snapshot(n);
  resp->set_snapshot_age_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(r->oldest_snapshot_age).count());
  return grpc::Status::OK;
}

grpc::Status ApiService::ListIntents(grpc::ServerContext* ctx,
                                     const apollo::v1::ListIntentsRequest*,
                                     apollo::v1::ListIntentsResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "intent.list"); !a.ok()) return a;
  for (const BreakerInfo& b : orchestrator_.Breakers()) {
    auto* i = resp->add_intents();
    i->set_intent(b.intent);
    i->set_breaker(std::string(BreakerStateName(b.state)));
    i->set_consecutive_failures(b.consecutive_failures);
    if (b.opened_at != TimePoint{}) i->set_opened_at_us(ToUnixMicros(b.opened_at));
    i->set_times_opened(b.times_opened);
  }
  resp->set_queue_depth(orchestrator_.QueueDepth());
  resp->set_queue_capacity(orchestrator_.QueueCapacity());
  resp->set_queue_paused(orchestrator_.QueuePaused());
  resp->set_retry_budget_taken(orchestrator_.retry_budget().taken());
  resp->set_retry_budget_refused(orchestrator_.retry_budget().refused());
  return grpc::Status::OK;
}

}  // namespace apollo::orchestrator
