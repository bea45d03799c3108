#include "cli/orchestrator_client.h"

#include <algorithm>
#include <chrono>

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "cli/rpc_error.h"

namespace apollo::cli {
namespace {

// How long a replica that is not the last one left may take to connect
// before the next is tried (a TCP and TLS handshake on a LAN: milliseconds).
constexpr std::chrono::seconds kConnectWait(3);

}  // namespace

std::vector<std::string> SplitServers(std::string_view servers) {
  std::vector<std::string> out;
  for (;;) {
    size_t comma = servers.find(',');
    std::string_view part = servers.substr(0, comma);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
    out.emplace_back(part);
    if (comma == std::string_view::npos) return out;
    servers.remove_prefix(comma + 1);
  }
}

OrchestratorClient::OrchestratorClient(const std::string& servers, double timeout_s,
                                       const std::optional<tls::TlsMaterial>& tls)
    : timeout_s_(timeout_s), tls_(tls.has_value()) {
  grpc::ChannelArguments args;
  // The CLI makes one call and exits: gRPC's transparent retries would only
  // hide an unreachable server behind the deadline.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (tls) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = tls->ca_pem;
    o.pem_cert_chain = tls->cert_pem;
    o.pem_private_key = tls->key_pem;
    creds = grpc::SslCredentials(o);
  }
  // A channel per address; none connects before its first call, so the
  // replicas after the one that answers cost nothing.
  for (std::string& address : SplitServers(servers)) {
    Endpoint e;
    e.address = std::move(address);
    e.channel = grpc::CreateCustomChannel(e.address, creds, args);
    e.stub = v1::Orchestrator::NewStub(e.channel);
    endpoints_.push_back(std::move(e));
  }
  stub_ = endpoints_[current_].stub.get();
}

bool OrchestratorClient::Unreachable(const grpc::Status& s) const {
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE &&
      s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    return false;
  }
  // A server's own UNAVAILABLE (its store is down, say) comes over a ready
  // channel: that is its answer, not a reason to ask another replica.
  return endpoints_[current_].channel->GetState(false) != GRPC_CHANNEL_READY;
}

void OrchestratorClient::Advance() {
  current_ = (current_ + 1) % endpoints_.size();
  stub_ = endpoints_[current_].stub.get();
}

bool OrchestratorClient::Connect() const {
  grpc::Channel& channel = *endpoints_[current_].channel;
  auto wait = std::chrono::duration_cast<std::chrono::system_clock::duration>(kConnectWait);
  if (timeout_s_ > 0 && timeout_s_ < static_cast<double>(kConnectWait.count())) {
    wait = std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::duration<double>(timeout_s_));
  }
  const auto deadline = std::chrono::system_clock::now() + wait;
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) return false;
    if (!channel.WaitForStateChange(state, deadline)) return false;  // the wait is over
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return true;
}

void OrchestratorClient::Prepare(grpc::ClientContext& ctx, double deadline_s) const {
  ctx.set_wait_for_ready(false);
  if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
  // NaN and non-positive mean no deadline; huge values are capped so the
  // conversion to the clock's integer nanoseconds cannot overflow.
  constexpr double kMaxDeadlineS = 365.0 * 24 * 3600;
  if (!(deadline_s > 0)) return;
  auto d = std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(std::min(deadline_s, kMaxDeadlineS)));
  ctx.set_deadline(std::chrono::system_clock::now() + d);
}

Status OrchestratorClient::Fail(const grpc::Status& s, const std::string& task_id,
                                double deadline_s, bool all_unreachable) const {
  RpcCallInfo info;
  info.server = server();
  if (all_unreachable) {
    std::vector<std::string> all;
    for (const Endpoint& e : endpoints_) all.push_back(e.address);
    info.server = ServersPhrase(all);
  }
  info.task_id = task_id;
  info.channel_was_ready = endpoints_[current_].channel->GetState(false) == GRPC_CHANNEL_READY;
  info.timeout_s = deadline_s;
  Status st = DescribeRpcError(s, info);
  // A refused handshake looks like an unreachable server: say what to check.
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return Status(st.code(),
                  st.message() + (tls_ ? " (if it is up: does its certificate chain to --tls-ca "
                                         "and name this address, and is yours signed by its CA?)"
                                       : " (if it is up and uses TLS: pass --tls-ca, --tls-cert "
                                         "and --tls-key)"));
  }
  return st;
}

template <typename Attempt>
Status OrchestratorClient::Failover(const std::string& task_id, double deadline_s,
                                    Attempt attempt) {
  // Each address at most once, starting at the one that answered last.
  for (size_t tried = 1;; ++tried) {
    const bool last = tried >= endpoints_.size();
    if (!last && !Connect()) {
      Advance();
      continue;
    }
    grpc::ClientContext ctx;
    Prepare(ctx, deadline_s);
    bool answered = false;                    // the server sent something: no other address
    grpc::Status s = attempt(ctx, answered);  // on stub_: the current address
    if (s.ok()) return Status::Ok();
    const bool unreachable = !answered && Unreachable(s);
    if (!unreachable || last) {
      return Fail(s, task_id, deadline_s, unreachable && endpoints_.size() > 1);
    }
    Advance();
  }
}

template <typename Resp, typename Invoke>
Result<Resp> OrchestratorClient::Call(const std::string& task_id, Invoke invoke) {
  Resp resp;
  Status s = Failover(task_id, timeout_s_, [&](grpc::ClientContext& ctx, bool&) {
    resp = Resp();  // nothing of a failed attempt carried over
    return invoke(ctx, resp);
  });
  if (!s.ok()) return s;
  return resp;
}

Result<v1::SubmitTasksResponse> OrchestratorClient::SubmitTasks(const v1::SubmitTasksRequest& req) {
  return Call<v1::SubmitTasksResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->SubmitTasks(&ctx, req, &resp); });
}

Result<v1::Task> OrchestratorClient::GetTask(const std::string& task_id) {
  v1::GetTaskRequest req;
  req.set_task_id(task_id);
  return Call<v1::Task>(task_id,
                        [&](auto& ctx, auto& resp) { return stub_->GetTask(&ctx, req, &resp); });
}

Result<v1::ListTasksResponse> OrchestratorClient::ListTasks(const v1::ListTasksRequest& req) {
  return Call<v1::ListTasksResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListTasks(&ctx, req, &resp); });
}

Result<v1::Task> OrchestratorClient::CancelTask(const std::string& task_id,
                                                const std::string& reason) {
  v1::CancelTaskRequest req;
  req.set_task_id(task_id);
  req.set_reason(reason);
  return Call<v1::Task>(task_id,
                        [&](auto& ctx, auto& resp) { return stub_->CancelTask(&ctx, req, &resp); });
}

Result<v1::Task> OrchestratorClient::RetryTask(const std::string& task_id) {
  v1::RetryTaskRequest req;
  req.set_task_id(task_id);
  return Call<v1::Task>(task_id,
                        [&](auto& ctx, auto& resp) { return stub_->RetryTask(&ctx, req, &resp); });
}

Result<v1::Task> OrchestratorClient::ChangeDependencies(const v1::ChangeDependenciesRequest& req) {
  return Call<v1::Task>(req.task_id(), [&](auto& ctx, auto& resp) {
    return stub_->ChangeDependencies(&ctx, req, &resp);
  });
}

Result<v1::Task> OrchestratorClient::HoldTask(const v1::HoldTaskRequest& req) {
  return Call<v1::Task>(req.task_id(),
                        [&](auto& ctx, auto& resp) { return stub_->HoldTask(&ctx, req, &resp); });
}

Result<v1::Task> OrchestratorClient::ControlRollout(const std::string& task_id,
                                                    const std::string& action,
                                                    const std::string& reason) {
  v1::ControlRolloutRequest req;
  req.set_task_id(task_id);
  req.set_action(action);
  req.set_reason(reason);
  return Call<v1::Task>(
      task_id, [&](auto& ctx, auto& resp) { return stub_->ControlRollout(&ctx, req, &resp); });
}

Result<v1::ListNodesResponse> OrchestratorClient::ListNodes() {
  v1::ListNodesRequest req;
  return Call<v1::ListNodesResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListNodes(&ctx, req, &resp); });
}

Result<v1::ListIntentsResponse> OrchestratorClient::ListIntents() {
  v1::ListIntentsRequest req;
  return Call<v1::ListIntentsResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListIntents(&ctx, req, &resp); });
}

Result<v1::SyncNodeResponse> OrchestratorClient::SyncNode(const std::string& node_id) {
  v1::SyncNodeRequest req;
  req.set_node_id(node_id);
  return Call<v1::SyncNodeResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->SyncNode(&ctx, req, &resp); });
}

Result<v1::ReconcileResponse> OrchestratorClient::Reconcile(const std::string& node_id,
                                                            bool dry_run) {
  v1::ReconcileRequest req;
  req.set_node_id(node_id);
  req.set_dry_run(dry_run);
  return Call<v1::ReconcileResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->Reconcile(&ctx, req, &resp); });
}

Result<v1::ListAlertsResponse> OrchestratorClient::ListAlerts(const v1::ListAlertsRequest& req) {
  return Call<v1::ListAlertsResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListAlerts(&ctx, req, &resp); });
}

Result<v1::ListDeadLettersResponse> OrchestratorClient::ListDeadLetters(int64_t after_id,
                                                                        int32_t limit) {
  v1::ListDeadLettersRequest req;
  req.set_after_id(after_id);
  req.set_limit(limit);
  return Call<v1::ListDeadLettersResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListDeadLetters(&ctx, req, &resp); });
}

Result<v1::DeadLetter> OrchestratorClient::GetDeadLetter(int64_t id) {
  v1::GetDeadLetterRequest req;
  req.set_id(id);
  return Call<v1::DeadLetter>(
      "", [&](auto& ctx, auto& resp) { return stub_->GetDeadLetter(&ctx, req, &resp); });
}

Result<v1::ReplayDeadLettersResponse> OrchestratorClient::ReplayDeadLetters(
    const v1::ReplayDeadLettersRequest& req) {
  return Call<v1::ReplayDeadLettersResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ReplayDeadLetters(&ctx, req, &resp); });
}

Result<v1::DropDeadLetterResponse> OrchestratorClient::DropDeadLetter(int64_t id) {
  v1::DropDeadLetterRequest req;
  req.set_id(id);
  return Call<v1::DropDeadLetterResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->DropDeadLetter(&ctx, req, &resp); });
}

Result<v1::BusStatusResponse> OrchestratorClient::BusStatus() {
  v1::BusStatusRequest req;
  return Call<v1::BusStatusResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->BusStatus(&ctx, req, &resp); });
}

Result<v1::TaskEventsResponse> OrchestratorClient::TaskEvents(const std::string& task_id) {
  v1::TaskEventsRequest req;
  req.set_task_id(task_id);
  return Call<v1::TaskEventsResponse>(
      task_id, [&](auto& ctx, auto& resp) { return stub_->TaskEvents(&ctx, req, &resp); });
}

template <typename Msg, typename Open, typename OnMsg>
Status OrchestratorClient::Stream(const std::string& task_id, double deadline_s, Open open,
                                  OnMsg on_msg) {
  std::optional<Status> done;  // the caller stopped the stream with this
  Status s = Failover(task_id, deadline_s, [&](grpc::ClientContext& ctx, bool& answered) {
    std::unique_ptr<grpc::ClientReader<Msg>> reader = open(ctx);  // on stub_
    Msg msg;
    while (reader->Read(&msg)) {
      answered = true;  // once a message was handled, no other address
      if ((done = on_msg(msg))) {
        // Cancelled so Finish() does not wait for the server to close it.
        ctx.TryCancel();
        (void)reader->Finish();
        return grpc::Status::OK;
      }
    }
    return reader->Finish();
  });
  return done ? *done : s;
}

Status OrchestratorClient::WatchTask(const std::string& task_id, double max_wait_s,
                                     const std::function<bool(const v1::Task&)>& on_update) {
  v1::WatchTaskRequest req;
  req.set_task_id(task_id);
  return Stream<v1::Task>(
      task_id, max_wait_s, [&](grpc::ClientContext& ctx) { return stub_->WatchTask(&ctx, req); },
      [&](const v1::Task& task) -> std::optional<Status> {
        if (on_update(task)) return std::nullopt;
        return Status::Ok();
      });
}

Status OrchestratorClient::BackupStore(
    const std::function<Status(const v1::BackupChunk&)>& on_chunk) {
  v1::BackupStoreRequest req;
  return Stream<v1::BackupChunk>(
      "", std::max(timeout_s_, 3600.0),
      [&](grpc::ClientContext& ctx) { return stub_->BackupStore(&ctx, req); },
      [&](const v1::BackupChunk& chunk) -> std::optional<Status> {
        if (Status s = on_chunk(chunk); !s.ok()) return s;
        return std::nullopt;
      });
}

Result<v1::CreateTokenResponse> OrchestratorClient::BootstrapAcl(const std::string& name) {
  v1::BootstrapAclRequest req;
  req.set_name(name);
  return Call<v1::CreateTokenResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->BootstrapAcl(&ctx, req, &resp); });
}

Result<v1::CreateTokenResponse> OrchestratorClient::CreateToken(const v1::CreateTokenRequest& req) {
  return Call<v1::CreateTokenResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->CreateToken(&ctx, req, &resp); });
}

Result<v1::ListTokensResponse> OrchestratorClient::ListTokens() {
  v1::ListTokensRequest req;
  return Call<v1::ListTokensResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListTokens(&ctx, req, &resp); });
}

Result<v1::RevokeTokenResponse> OrchestratorClient::RevokeToken(const std::string& name) {
  v1::RevokeTokenRequest req;
  req.set_name(name);
  return Call<v1::RevokeTokenResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->RevokeToken(&ctx, req, &resp); });
}

Result<v1::ListAuditResponse> OrchestratorClient::ListAudit(const v1::ListAuditRequest& req) {
  return Call<v1::ListAuditResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ListAudit(&ctx, req, &resp); });
}

Result<v1::ClusterStatusResponse> OrchestratorClient::ClusterStatus() {
  v1::ClusterStatusRequest req;
  return Call<v1::ClusterStatusResponse>(
      "", [&](auto& ctx, auto& resp) { return stub_->ClusterStatus(&ctx, req, &resp); });
}

}  // namespace apollo::cli
