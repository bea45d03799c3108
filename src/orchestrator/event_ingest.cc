#include "orchestrator/event_ingest.h"

#include "bus/ingest.h"

namespace apollo::orchestrator {

EventIngest::EventIngest(store::StateStore& store, Committed on_committed)
    : store_(store), on_committed_(std::move(on_committed)) {}

EventIngest::~EventIngest() { Stop(); }

void EventIngest::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void EventIngest::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EventIngest::Submit(const std::shared_ptr<SessionHandle>& handle, apollo::v1::EventBatch batch,
                         std::function<void(uint64_t)> done) {
  std::vector<Event> events;
  events.reserve(batch.events_size());
  for (const auto& pb : batch.events()) {
    auto e = EventFromProto(pb);
    if (!e.ok()) {
      // Kept so the store records it as malformed (an alert), but never
      // letting one agent write another node's events.
      Event raw;
      raw.task_id = pb.task_id();
      raw.node_id = handle->node_id();
      raw.sequence_number = pb.sequence_number();
      raw.attempt = pb.attempt();
      raw.type = static_cast<EventType>(pb.event_type());
      raw.payload = pb.payload();
      events.push_back(std::move(raw));
      continue;
    }
    if (e->node_id != handle->node_id()) continue;
    events.push_back(std::move(*e));
  }
  Pending p;
  p.node_id = handle->node_id();
  p.handle = handle;
  for (const Event& e : events) {
    bool interrupted = e.type == EventType::kFailed &&
                       e.payload.find("\"interrupted by agent restart\"") != std::string::npos;
    p.events.push_back({e.task_id, e.type, interrupted});
  }
  p.done = std::move(done);
  p.result = bus_ ? bus::PublishForIngest(*bus_, p.node_id, std::move(events))
                  : store_.ApplyAsync(std::move(events));
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
}

// Completes batches in submission order (the store commits each node's
// batches in that order; with PostgreSQL's two event writers a batch of
// another node may commit first, and then waits here for the earlier) and
// acknowledges each agent only after its events are committed.
void EventIngest::Loop() {
  for (;;) {
    Pending p;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    Result<store::ApplyResult> r = p.result.get();
    uint64_t acked = 0;
    if (r.ok()) {
      auto it = r->acked_seq.find(p.node_id);
      if (it != r->acked_seq.end()) acked = it->second;
    }
    // It resends them only on a new session, so end this one (e.g.
    // JetStream lost the stream, or a publish timed out).
    if (!r.ok() && p.handle) {
      p.handle->Close(grpc::Status(
          grpc::StatusCode::UNAVAILABLE,
          "events not committed (" + r.status().message() + "): reconnect and resend"));
    }
    p.done(acked);
    if (r.ok() && on_committed_) on_committed_(p.node_id, p.events, *r);
  }
}

}  // namespace apollo::orchestrator
