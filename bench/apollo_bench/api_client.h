#pragma once

// The benchmark's operator-side client: the Orchestrator gRPC service, as
// apollo-cli uses it. Every call has a deadline.
//
// Thread-safety: safe to call concurrently (gRPC stubs are).

#include <memory>
#include <string>
#include <vector>

#include "apollo/v1/api.grpc.pb.h"
#include "core/status.h"

namespace apollo::bench {

class ApiClient {
 public:
  explicit ApiClient(const std::string& address);

  // SubmitTasks (a task file's text, or typed specs). A response with
  // diagnostics is returned as InvalidArgument carrying the first one.
  Result<apollo::v1::SubmitTasksResponse> Submit(const apollo::v1::SubmitTasksRequest& req);
  Result<apollo::v1::SubmitTasksResponse> Submit(const std::string& yaml,
                                                 const std::string& file_name);
  Result<apollo::v1::Task> GetTask(const std::string& task_id);
  // WatchTask until the task is sent settled (SUCCEEDED, FAILED, TIMEOUT,
  // CANCELLED) or the stream ends: the task as last sent, which the center
  // sends as soon as it committed the change.
  Result<apollo::v1::Task> WatchUntilSettled(const std::string& task_id,
                                             std::chrono::seconds timeout);
  Result<std::vector<apollo::v1::HistoryEntry>> History(const std::string& task_id);
  // Nodes whose id starts with `prefix` that the center says are connected.
  Result<size_t> ConnectedNodes(const std::string& prefix);
  // Tasks in `status` whose id starts with `prefix` (pages through ListTasks).
  Result<size_t> CountTasks(const std::string& status, const std::string& prefix);

 private:
  std::unique_ptr<apollo::v1::Orchestrator::Stub> stub_;
};

}  // namespace apollo::bench
