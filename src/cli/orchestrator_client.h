#pragma once

// The operator API as apollo-cli sees it: one method per RPC of
// apollo.v1.Orchestrator, every failure turned into a Status whose message is
// the one line to show the operator (see cli/rpc_error.h).
//
// Every call fails fast: wait_for_ready(false), so a server that refuses the
// connection is reported at once, and a deadline of `timeout_s`, so an address
// that never answers is reported when it expires.
//
// Token: set_token() sends it with every call (the orchestrator's ACL).
//
// TLS: given the operator's TLS files the channel is mutual TLS (the
// orchestrator's certificate must chain to the CA and name the address
// dialled); otherwise plaintext.
//
// Thread-safety: one instance per thread (the CLI is single-threaded).

#include <grpcpp/channel.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "apollo/v1/api.grpc.pb.h"
#include "core/status.h"
#include "tls/tls_files.h"

namespace apollo::cli {

class OrchestratorClient {
 public:
  // Never blocks: the channel connects on the first call. `tls`: mutual TLS
  // with these files (LoadTlsMaterial checked them); nullopt: plaintext.
  OrchestratorClient(std::string server, double timeout_s,
                     const std::optional<tls::TlsMaterial>& tls = std::nullopt);

  Result<v1::SubmitTasksResponse> SubmitTasks(const v1::SubmitTasksRequest& req);
  Result<v1::Task> GetTask(const std::string& task_id);
  Result<v1::ListTasksResponse> ListTasks(const v1::ListTasksRequest& req);
  Result<v1::Task> CancelTask(const std::string& task_id, const std::string& reason);
  Result<v1::Task> RetryTask(const std::string& task_id);
  // action: pause, resume, approve or abort.
  Result<v1::Task> ChangeDependencies(const v1::ChangeDependenciesRequest& req);
  Result<v1::Task> HoldTask(const v1::HoldTaskRequest& req);
  Result<v1::Task> ControlRollout(const std::string& task_id, const std::string& action,
                                  const std::string& reason);
  Result<v1::ListNodesResponse> ListNodes();
  Result<v1::TaskEventsResponse> TaskEvents(const std::string& task_id);
  Result<v1::SyncNodeResponse> SyncNode(const std::string& node_id);
  Result<v1::ListIntentsResponse> ListIntents();
  Result<v1::ReconcileResponse> Reconcile(const std::string& node_id, bool dry_run);
  Result<v1::ListDeadLettersResponse> ListDeadLetters(int64_t after_id, int32_t limit);
  Result<v1::DeadLetter> GetDeadLetter(int64_t id);
  Result<v1::ReplayDeadLettersResponse> ReplayDeadLetters(const v1::ReplayDeadLettersRequest& req);
  Result<v1::DropDeadLetterResponse> DropDeadLetter(int64_t id);
  Result<v1::BusStatusResponse> BusStatus();
  Result<v1::ListAlertsResponse> ListAlerts(const v1::ListAlertsRequest& req);
  Result<v1::CreateTokenResponse> BootstrapAcl(const std::string& name);
  Result<v1::CreateTokenResponse> CreateToken(const v1::CreateTokenRequest& req);
  Result<v1::ListTokensResponse> ListTokens();
  Result<v1::RevokeTokenResponse> RevokeToken(const std::string& name);
  Result<v1::ListAuditResponse> ListAudit(const v1::ListAuditRequest& req);

  // The operator token sent with every call (`authorization: Bearer`);
  // empty: none.
  void set_token(std::string token) { token_ = std::move(token); }

  // Follows the WatchTask stream, calling `on_update` for each Task it
  // carries until `on_update` returns false (the stream is then cancelled and
  // OK returned) or the stream ends (OK if the server closed it cleanly).
  // `max_wait_s` bounds the whole watch; 0 means no bound.
  Status WatchTask(const std::string& task_id, double max_wait_s,
                   const std::function<bool(const v1::Task&)>& on_update);

  // Streams the store's online backup (admin). `on_chunk` gets each chunk
  // in order; a non-OK Status from it cancels the call and is returned.
  // The deadline is the longer of --timeout and an hour (a large store).
  Status BackupStore(const std::function<Status(const v1::BackupChunk&)>& on_chunk);

  const std::string& server() const { return server_; }

 private:
  // Sets the deadline (if > 0) and fail-fast on `ctx`.
  void Prepare(grpc::ClientContext& ctx, double deadline_s) const;
  // One unary call: `invoke(ctx, resp)` performs it; `task_id` (may be
  // empty) words a NOT_FOUND. Defined and instantiated in the .cc only.
  template <typename Resp, typename Invoke>
  Result<Resp> Call(const std::string& task_id, Invoke invoke);
  // The Status for a failed call about `task_id` (may be empty).
  Status Fail(const grpc::Status& s, const std::string& task_id, double deadline_s) const;

  std::string server_;
  double timeout_s_;
  bool tls_;
  std::string token_;
  std::shared_ptr<grpc::Channel> channel_;  // shared: gRPC's own ownership model
  std::unique_ptr<v1::Orchestrator::Stub> stub_;
};

}  // namespace apollo::cli
