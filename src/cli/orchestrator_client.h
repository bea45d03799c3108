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
// Replicas (docs/replicas.md): given several addresses, a call goes to the
// first; when it fails because that address cannot be reached (UNAVAILABLE,
// or the deadline passing, before any connection was made: the request
// never left), the same call is made to the next, and so on. Any other
// error is the answer. Before calling an address that is not connected and
// is not the last left, the client waits at most kConnectWait (3 s) for it
// to connect, so a replica that accepts TCP but never answers (stopped, or
// its machine gone) costs seconds, not the whole deadline. Every replica
// serves the operator API, so the one that answers is kept for the
// following calls. All unreachable: "cannot reach the orchestrator at any of
// a, b, c: <the last error>". One address: exactly as before replicas.
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
#include <string_view>
#include <vector>

#include "apollo/v1/api.grpc.pb.h"
#include "core/status.h"
#include "tls/tls_files.h"

namespace apollo::cli {

class OrchestratorClient {
 public:
  // Never blocks: a channel connects on its first call. `servers`: one
  // host:port, or several separated by commas (SplitServers). `tls`: mutual
  // TLS with these files (LoadTlsMaterial checked them); nullopt: plaintext.
  OrchestratorClient(const std::string& servers, double timeout_s,
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
  Result<v1::ClusterStatusResponse> ClusterStatus();

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

  // The address calls go to now (the one that last answered).
  const std::string& server() const { return endpoints_[current_].address; }

 private:
  // One orchestrator address and its channel.
  struct Endpoint {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;  // shared: gRPC's own ownership model
    std::unique_ptr<v1::Orchestrator::Stub> stub;
  };

  // Sets the deadline (if > 0) and fail-fast on `ctx`.
  void Prepare(grpc::ClientContext& ctx, double deadline_s) const;
  // One unary call: `invoke(ctx, resp)` performs it on stub_ (the current
  // address's); `task_id` (may be empty) words a NOT_FOUND. Defined and
  // instantiated in the .cc only.
  template <typename Resp, typename Invoke>
  Result<Resp> Call(const std::string& task_id, Invoke invoke);
  // The failover both use: `attempt(ctx, answered)` makes the call on
  // stub_ and sets `answered` once the server sent anything; while an
  // address cannot be reached (and nothing was answered) the next is tried,
  // each at most once. kOk, or the failure as Fail words it.
  template <typename Attempt>
  Status Failover(const std::string& task_id, double deadline_s, Attempt attempt);
  // One server stream, failing over like Call until the first message:
  // `open(ctx)` starts it on stub_, each message goes to `on_msg`, which
  // returns a Status to stop there (nullopt: read on).
  template <typename Msg, typename Open, typename OnMsg>
  Status Stream(const std::string& task_id, double deadline_s, Open open, OnMsg on_msg);
  // True when `s` failed the call because the current address could not be
  // reached: UNAVAILABLE or DEADLINE_EXCEEDED while its channel had no
  // connection, so the request never reached a server.
  bool Unreachable(const grpc::Status& s) const;
  // Calls go to the next address from now on.
  void Advance();
  // Whether the current address's channel is connected, or connects within
  // kConnectWait (capped at the call's deadline); false at once when the
  // connection is refused.
  bool Connect() const;
  // The Status for a failed call about `task_id` (may be empty).
  // `all_unreachable`: every address was tried and none could be reached.
  Status Fail(const grpc::Status& s, const std::string& task_id, double deadline_s,
              bool all_unreachable = false) const;

  std::vector<Endpoint> endpoints_;         // never empty
  size_t current_ = 0;                      // the address calls go to
  v1::Orchestrator::Stub* stub_ = nullptr;  // endpoints_[current_].stub
  double timeout_s_;
  bool tls_;
  std::string token_;
};

// "a:7011, b:7011,c:7011" -> {"a:7011", "b:7011", "c:7011"}: --server and
// $APOLLO_SERVER, blanks around each address trimmed. Empty entries are
// kept ("" for "a,,b"), for the caller to refuse.
std::vector<std::string> SplitServers(std::string_view servers);

}  // namespace apollo::cli
