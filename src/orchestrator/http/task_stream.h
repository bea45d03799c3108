#pragma once

// GET /api/v1/stream[?task_id=ID]: task changes as Server-Sent Events, for
// the dashboard's live views. Each stream is one WatchTasks call through
// the in-process channel (so the same token check as every other route,
// viewer role), written as:
//
//   event: task      data: the Task, as GET /api/v1/tasks/{id} returns it
//   event: resync    data: {}   (changes were dropped: re-read the list)
//   : keepalive      (every few seconds while nothing changes)
//   event: error     data: {"error": {...}} (the call failed; then the end)
//
// A stream holds one HTTP worker while it is open, so at most
// `max_streams` are open at once (the rest get a 503 JSON error); Stop
// ends them all.
//
// Thread-safety: thread-safe; one TaskStream is read by one thread.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "apollo/v1/api.grpc.pb.h"
#include "orchestrator/http/json_api.h"

namespace apollo::orchestrator::http {

class TaskStreams;

// One open stream.
class TaskStream {
 public:
  ~TaskStream();  // ends the call if it is still open
  TaskStream(const TaskStream&) = delete;
  TaskStream& operator=(const TaskStream&) = delete;

  // The next chunk of the event stream, waiting for it; false once the
  // stream has ended (the call finished, failed or was cancelled).
  bool Next(std::string* chunk);

 private:
  friend class TaskStreams;
  explicit TaskStream(TaskStreams& owner) : owner_(owner) {}

  TaskStreams& owner_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderInterface<apollo::v1::WatchTasksResponse>> reader_;
  std::string first_;     // the first chunk, read by Open
  bool started_ = false;  // first_ was handed out
  bool finished_ = false;
};

class TaskStreams {
 public:
  TaskStreams(std::unique_ptr<apollo::v1::Orchestrator::StubInterface> stub, int max_streams)
      : stub_(std::move(stub)), max_streams_(max_streams) {}
  ~TaskStreams() { CancelAll(); }

  // Opens a stream for `req` (its query, token and peer). Refused with
  // the JSON error to send instead (`*error`): an unknown parameter, no
  // such task, a token without the viewer role, too many streams.
  std::unique_ptr<TaskStream> Open(const ApiRequest& req, ApiResponse* error);

  // Ends every open stream (server shutdown); later Opens are refused.
  void CancelAll();

 private:
  friend class TaskStream;
  void Forget(TaskStream* s);

  std::unique_ptr<apollo::v1::Orchestrator::StubInterface> stub_;
  const int max_streams_;
  std::mutex mu_;
  std::set<TaskStream*> open_;  // guarded by mu_
  bool stopped_ = false;        // guarded by mu_
};

// One WatchTasksResponse as an event-stream chunk.
std::string EventChunk(const apollo::v1::WatchTasksResponse& r);

}  // namespace apollo::orchestrator::http
