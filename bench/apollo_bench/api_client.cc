#include "apollo_bench/api_client.h"

#include <grpcpp/grpcpp.h>

namespace apollo::bench {
namespace {

constexpr auto kDeadline = std::chrono::seconds(60);

Status FromGrpc(const grpc::Status& s, const std::string& what) {
  return Status(static_cast<StatusCode>(s.error_code()), what + ": " + s.error_message());
}

void SetDeadline(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() + kDeadline);
}

}  // namespace

ApiClient::ApiClient(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  stub_ = apollo::v1::Orchestrator::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

Result<apollo::v1::SubmitTasksResponse> ApiClient::Submit(const std::string& yaml,
                                                          const std::string& file_name) {
  apollo::v1::SubmitTasksRequest req;
  req.set_file_name(file_name);
  req.set_content(yaml);
  return Submit(req);
}

Result<apollo::v1::SubmitTasksResponse> ApiClient::Submit(
    const apollo::v1::SubmitTasksRequest& req) {
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  apollo::v1::SubmitTasksResponse resp;
  grpc::Status s = stub_->SubmitTasks(&ctx, req, &resp);
  if (!s.ok()) return FromGrpc(s, "SubmitTasks");
  if (resp.errors_size() > 0) {
    const auto& d = resp.errors(0);
    return Status::InvalidArgument(d.file() + ":" + std::to_string(d.line()) + ": " + d.message());
  }
  return resp;
}

Result<apollo::v1::Task> ApiClient::GetTask(const std::string& task_id) {
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  apollo::v1::GetTaskRequest req;
  req.set_task_id(task_id);
  apollo::v1::Task t;
  grpc::Status s = stub_->GetTask(&ctx, req, &t);
  if (!s.ok()) return FromGrpc(s, "GetTask");
  return t;
}

Result<apollo::v1::Task> ApiClient::WatchUntilSettled(const std::string& task_id,
                                                      std::chrono::seconds timeout) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  apollo::v1::WatchTaskRequest req;
  req.set_task_id(task_id);
  auto reader = stub_->WatchTask(&ctx, req);
  apollo::v1::Task t;
  bool any = false, settled = false;
  while (!settled && reader->Read(&t)) {
    any = true;
    settled = t.status() == "SUCCEEDED" || t.status() == "FAILED" || t.status() == "TIMEOUT" ||
              t.status() == "CANCELLED";
  }
  // Seen settled: done, without waiting for the stream's end.
  if (settled) ctx.TryCancel();
  grpc::Status s = reader->Finish();
  if (!settled && !s.ok()) return FromGrpc(s, "WatchTask");
  if (!any) return Status::Internal("WatchTask " + task_id + ": the stream ended without the task");
  return t;
}

Result<std::vector<apollo::v1::HistoryEntry>> ApiClient::History(const std::string& task_id) {
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  apollo::v1::TaskEventsRequest req;
  req.set_task_id(task_id);
  apollo::v1::TaskEventsResponse resp;
  grpc::Status s = stub_->TaskEvents(&ctx, req, &resp);
  if (!s.ok()) return FromGrpc(s, "TaskEvents");
  return std::vector<apollo::v1::HistoryEntry>(resp.entries().begin(), resp.entries().end());
}

Result<size_t> ApiClient::ConnectedNodes(const std::string& prefix) {
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  apollo::v1::ListNodesResponse resp;
  grpc::Status s = stub_->ListNodes(&ctx, apollo::v1::ListNodesRequest(), &resp);
  if (!s.ok()) return FromGrpc(s, "ListNodes");
  size_t n = 0;
  for (const auto& node : resp.nodes()) {
    if (node.connected() && node.node_id().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

Result<size_t> ApiClient::CountTasks(const std::string& status, const std::string& prefix) {
  size_t n = 0;
  std::string token;
  for (int page = 0; page < 100'000; ++page) {  // bounded: 10^8 tasks
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    apollo::v1::ListTasksRequest req;
    req.set_status(status);
    req.set_limit(1000);
    req.set_page_token(token);
    apollo::v1::ListTasksResponse resp;
    grpc::Status s = stub_->ListTasks(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s, "ListTasks");
    for (const auto& t : resp.tasks()) {
      if (t.task_id().rfind(prefix, 0) == 0) ++n;
    }
    token = resp.next_page_token();
    if (token.empty()) break;
  }
  return n;
}

}  // namespace apollo::bench
