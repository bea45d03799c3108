#include "orchestrator/http/task_stream.h"

#include "orchestrator/access_control.h"

namespace apollo::orchestrator::http {

std::string EventChunk(const apollo::v1::WatchTasksResponse& r) {
  if (r.resync()) return "event: resync\ndata: {}\n\n";
  if (!r.has_task()) return ": keepalive\n\n";
  // The JSON printer writes one line: no "data:" line needs splitting.
  return "event: task\ndata: " + MessageJson(r.task()) + "\n\n";
}

TaskStream::~TaskStream() {
  if (reader_ && !finished_) {
    ctx_.TryCancel();
    apollo::v1::WatchTasksResponse drain;
    while (reader_->Read(&drain)) {
    }
    (void)reader_->Finish();
  }
  owner_.Forget(this);
}

bool TaskStream::Next(std::string* chunk) {
  if (!started_) {
    started_ = true;
    *chunk = "retry: 2000\n\n" + first_;
    return true;
  }
  if (finished_) return false;
  apollo::v1::WatchTasksResponse r;
  if (reader_->Read(&r)) {
    *chunk = EventChunk(r);
    return true;
  }
  finished_ = true;
  grpc::Status s = reader_->Finish();
  if (s.ok() || s.error_code() == grpc::StatusCode::CANCELLED) return false;
  *chunk = "event: error\ndata: " +
           Dump(ErrorJson(static_cast<StatusCode>(s.error_code()), s.error_message())) + "\n\n";
  return true;
}

std::unique_ptr<TaskStream> TaskStreams::Open(const ApiRequest& req, ApiResponse* error) {
  apollo::v1::WatchTasksRequest request;
  if (Status s = FillFromQuery(req.query, &request); !s.ok()) {
    *error = ErrorResponse(s.code(), s.message());
    return nullptr;
  }
  std::unique_ptr<TaskStream> stream(new TaskStream(*this));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) {
      *error = ErrorResponse(StatusCode::kUnavailable, "the server is stopping");
      return nullptr;
    }
    if (static_cast<int>(open_.size()) >= max_streams_) {
      *error = ErrorResponse(StatusCode::kUnavailable,
                             "too many event streams: " + std::to_string(max_streams_) +
                                 " open at once (http.threads - 2); close one or raise "
                                 "http.threads");
      return nullptr;
    }
    open_.insert(stream.get());
  }
  if (!req.bearer_token.empty()) {
    stream->ctx_.AddMetadata(kAuthorizationKey, std::string(kBearer) + req.bearer_token);
  }
  if (!req.peer.empty()) stream->ctx_.AddMetadata(kHttpClientKey, req.peer);
  stream->reader_ = stub_->WatchTasks(&stream->ctx_, request);
  // The server writes its first message at once (the task, or a
  // keep-alive): a refusal shows here, before any byte of the stream.
  apollo::v1::WatchTasksResponse first;
  if (!stream->reader_->Read(&first)) {
    stream->finished_ = true;
    grpc::Status s = stream->reader_->Finish();
    *error = s.ok() ? ErrorResponse(StatusCode::kUnavailable, "the stream ended at once")
                    : ErrorResponse(static_cast<StatusCode>(s.error_code()), s.error_message());
    return nullptr;
  }
  stream->first_ = EventChunk(first);
  return stream;
}

void TaskStreams::CancelAll() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  for (TaskStream* s : open_) s->ctx_.TryCancel();
}

void TaskStreams::Forget(TaskStream* s) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(s);
}

}  // namespace apollo::orchestrator::http
