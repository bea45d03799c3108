#pragma once

// The operator API (apollo.v1.Orchestrator), served to apollo-cli. Reads go
// straight to the store; writes go through the store's checked transitions
// and then wake the dispatcher.
//
// The event-bus RPCs (dead letters, lag) are in bus_api.cc: lists and reads
// go to the store, replay / drop through the bus (it keeps the parked ids).
//
// Access: every method first asks AccessControl whether the caller's token
// has the role the call needs (the table is in access_control.h); every
// mutating call is then written to the audit trail with its outcome.
// Operator tokens themselves and the audit trail are served by acl_api.cc.
//
// Thread-safety: gRPC calls methods concurrently; all state is in the store,
// the (thread-safe) Orchestrator and the (thread-safe) EventBus.

#include <algorithm>
#include <type_traits>

#include "apollo/v1/api.grpc.pb.h"
#include "bus/event_bus.h"
#include "orchestrator/access_control.h"
#include "orchestrator/orchestrator.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

// The page size of a list call: the request's limit, at most 1000; 100 when
// the request leaves it unset (0 or negative). Every list RPC pages this way.
inline int PageLimit(int requested) {
  return requested > 0 ? std::min(requested, 1000) : 100;
}

// Status <-> grpc::Status (the codes are the same numbers).
grpc::Status ToGrpc(const Status& s);
Status FromGrpc(const grpc::Status& s);

class ApiService final : public apollo::v1::Orchestrator::Service {
 public:
  // `access` decides who may call what; it must outlive the service.
  ApiService(store::StateStore& store, Orchestrator& orchestrator, const Clock& clock,
             const AccessControl& access)
      : store_(store), orchestrator_(orchestrator), clock_(clock), access_(access) {}

  grpc::Status SubmitTasks(grpc::ServerContext*, const apollo::v1::SubmitTasksRequest* req,
                           apollo::v1::SubmitTasksResponse* resp) override;
  grpc::Status GetTask(grpc::ServerContext*, const apollo::v1::GetTaskRequest* req,
                       apollo::v1::Task* resp) override;
  grpc::Status ListTasks(grpc::ServerContext*, const apollo::v1::ListTasksRequest* req,
                         apollo::v1::ListTasksResponse* resp) override;
  grpc::Status CancelTask(grpc::ServerContext*, const apollo::v1::CancelTaskRequest* req,
                          apollo::v1::Task* resp) override;
  grpc::Status RetryTask(grpc::ServerContext*, const apollo::v1::RetryTaskRequest* req,
                         apollo::v1::Task* resp) override;
  grpc::Status ControlRollout(grpc::ServerContext*, const apollo::v1::ControlRolloutRequest* req,
                              apollo::v1::Task* resp) override;
  grpc::Status ChangeDependencies(grpc::ServerContext*,
                                  const apollo::v1::ChangeDependenciesRequest* req,
                                  apollo::v1::Task* resp) override;
  grpc::Status HoldTask(grpc::ServerContext*, const apollo::v1::HoldTaskRequest* req,
                        apollo::v1::Task* resp) override;
  grpc::Status ListNodes(grpc::ServerContext*, const apollo::v1::ListNodesRequest* req,
                         apollo::v1::ListNodesResponse* resp) override;
  grpc::Status TaskEvents(grpc::ServerContext*, const apollo::v1::TaskEventsRequest* req,
                          apollo::v1::TaskEventsResponse* resp) override;
  grpc::Status WatchTask(grpc::ServerContext* ctx, const apollo::v1::WatchTaskRequest* req,
                         grpc::ServerWriter<apollo::v1::Task>* writer) override;
  grpc::Status WatchTasks(grpc::ServerContext* ctx, const apollo::v1::WatchTasksRequest* req,
                          grpc::ServerWriter<apollo::v1::WatchTasksResponse>* writer) override;
  grpc::Status SyncNode(grpc::ServerContext*, const apollo::v1::SyncNodeRequest* req,
                        apollo::v1::SyncNodeResponse* resp) override;
  grpc::Status Reconcile(grpc::ServerContext*, const apollo::v1::ReconcileRequest* req,
                         apollo::v1::ReconcileResponse* resp) override;
  grpc::Status ListIntents(grpc::ServerContext*, const apollo::v1::ListIntentsRequest* req,
                           apollo::v1::ListIntentsResponse* resp) override;

  // Event bus (bus_api.cc). `bus` must outlive the service; set before serving.
  void SetEventBus(bus::EventBus* bus) { bus_ = bus; }
  grpc::Status ListDeadLetters(grpc::ServerContext*, const apollo::v1::ListDeadLettersRequest* req,
                               apollo::v1::ListDeadLettersResponse* resp) override;
  grpc::Status GetDeadLetter(grpc::ServerContext*, const apollo::v1::GetDeadLetterRequest* req,
                             apollo::v1::DeadLetter* resp) override;
  grpc::Status ReplayDeadLetters(grpc::ServerContext*,
                                 const apollo::v1::ReplayDeadLettersRequest* req,
                                 apollo::v1::ReplayDeadLettersResponse* resp) override;
  grpc::Status DropDeadLetter(grpc::ServerContext*, const apollo::v1::DropDeadLetterRequest* req,
                              apollo::v1::DropDeadLetterResponse* resp) override;
  grpc::Status BusStatus(grpc::ServerContext*, const apollo::v1::BusStatusRequest* req,
                         apollo::v1::BusStatusResponse* resp) override;

  // Alerts (alert_api.cc).
  grpc::Status ListAlerts(grpc::ServerContext*, const apollo::v1::ListAlertsRequest* req,
                          apollo::v1::ListAlertsResponse* resp) override;

  // Operator tokens and the audit trail (acl_api.cc).
  grpc::Status BootstrapAcl(grpc::ServerContext*, const apollo::v1::BootstrapAclRequest* req,
                            apollo::v1::CreateTokenResponse* resp) override;
  grpc::Status CreateToken(grpc::ServerContext*, const apollo::v1::CreateTokenRequest* req,
                           apollo::v1::CreateTokenResponse* resp) override;
  grpc::Status WhoAmI(grpc::ServerContext*, const apollo::v1::WhoAmIRequest*,
                      apollo::v1::WhoAmIResponse* resp) override;
  grpc::Status ListTokens(grpc::ServerContext*, const apollo::v1::ListTokensRequest* req,
                          apollo::v1::ListTokensResponse* resp) override;
  grpc::Status RevokeToken(grpc::ServerContext*, const apollo::v1::RevokeTokenRequest* req,
                           apollo::v1::RevokeTokenResponse* resp) override;
  grpc::Status ListAudit(grpc::ServerContext*, const apollo::v1::ListAuditRequest* req,
                         apollo::v1::ListAuditResponse* resp) override;
  // Online backup of the store (backup_api.cc). `url`: the store's URL, set
  // before serving.
  void SetStoreUrl(std::string url) { store_url_ = std::move(url); }
  grpc::Status BackupStore(grpc::ServerContext*, const apollo::v1::BackupStoreRequest* req,
                           grpc::ServerWriter<apollo::v1::BackupChunk>* writer) override;
  // Replicas and the leader lease (cluster_api.cc).
  grpc::Status ClusterStatus(grpc::ServerContext*, const apollo::v1::ClusterStatusRequest* req,
                             apollo::v1::ClusterStatusResponse* resp) override;

 private:
  grpc::Status LoadTask(const std::string& task_id, apollo::v1::Task* out);
  // LoadTask's halves: the read, and the task as the API shows it.
  grpc::Status ReadTask(const std::string& task_id, store::TaskRow* out);
  static void FillTask(const store::TaskRow& t, apollo::v1::Task* out);
  // The bodies of the mutating calls, after the access check.
  // `audit`: stored with the tasks (see SubmitOptions::audit).
  grpc::Status Submit(const apollo::v1::SubmitTasksRequest* req,
                      apollo::v1::SubmitTasksResponse* resp, const store::AuditRow* audit);
  grpc::Status Cancel(const apollo::v1::CancelTaskRequest* req, apollo::v1::Task* resp);
  grpc::Status Retry(const apollo::v1::RetryTaskRequest* req, apollo::v1::Task* resp);
  grpc::Status RunReconcile(const apollo::v1::ReconcileRequest* req,
                            apollo::v1::ReconcileResponse* resp);
  grpc::Status Replay(const apollo::v1::ReplayDeadLettersRequest* req,
                      apollo::v1::ReplayDeadLettersResponse* resp);
  // Not OK (UNAUTHENTICATED / PERMISSION_DENIED) when the caller of `ctx`
  // may not do `action`, which needs `needed`. For reads.
  grpc::Status Allow(const grpc::ServerContextBase& ctx, Role needed,
                     std::string_view action) const {
    return ToGrpc(access_.Check(ctx, needed, action).status);
  }
  // A mutating call: checks the caller, runs `body` if allowed, and writes
  // the audit row (`target`: what it acted on, read after `body` ran, so the
  // body may fill it in) with the outcome either way.
  // `body` may take the caller (const Caller&), or the caller and a flag it
  // sets when it stored the audit row itself, with its own write (bool&).
  template <typename Body>
  grpc::Status Audited(const grpc::ServerContextBase& ctx, Role needed, std::string_view action,
                       const std::string& target, const google::protobuf::Message& request,
                       Body body) {
    Decision d = access_.Check(ctx, needed, action);
    grpc::Status s = ToGrpc(d.status);
    bool audited = false;
    if (d.status.ok()) {
      if constexpr (std::is_invocable_v<Body, const Caller&, bool&>) {
        s = body(d.caller, audited);
      } else if constexpr (std::is_invocable_v<Body, const Caller&>) {
        s = body(d.caller);
      } else {
        s = body();
      }
    }
    if (!audited) access_.Audit(d.caller, action, target, request, FromGrpc(s));
    return s;
  }

  store::StateStore& store_;
  Orchestrator& orchestrator_;
  const Clock& clock_;
  const AccessControl& access_;
  bus::EventBus* bus_ = nullptr;  // optional (SetEventBus)
  std::string store_url_;         // for BackupStore; set before serving
};

}  // namespace apollo::orchestrator
