// The operator API's event-bus RPCs (issue 7): the dead-letter queue and the
// consumer lag. Kept apart from api_service.cc; thin: reads go to the store,
// replay and drop go through the bus (its DeadLetterBook must forget the
// parked id, or an agent's resend would be ignored as already parked).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "bus/applier.h"
#include "orchestrator/api_service.h"

namespace apollo::orchestrator {
namespace {

// `bus status` counts the letters by paging the store; past this many it
// says "at least".
constexpr int kCountPage = 500;
constexpr int kCountPages = 200;

grpc::Status NoBus() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "this orchestrator runs without an event bus (events go straight to the "
                      "store): there is no dead-letter queue");
}

grpc::Status LetterError(const Status& s, int64_t id) {
  if (s.code() == StatusCode::kNotFound) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "no dead letter " + std::to_string(id) +
                            " (already replayed or dropped? see: apollo-cli dlq list)");
  }
  return ToGrpc(s);
}

// The event as the operator should see it: the original (a malformed event
// is parked inside a carrier, FromLetterEvent restores it), with a payload
// that is not JSON kept as text.
nlohmann::json LetterEventJson(const Event& e) {
  nlohmann::json j = EventToJson(e);
  if (!e.payload.empty() && j["payload"].is_discarded()) {
    j["payload"] = nullptr;
    j["payload_text"] = e.payload;
  }
  return j;
}

void FillLetter(const store::DeadLetter& d, apollo::v1::DeadLetter* out) {
  Event e = bus::FromLetterEvent(d.event);
  out->set_id(d.id);
  out->set_event_id(e.event_id());
  out->set_task_id(e.task_id);
  out->set_node_id(e.node_id);
  out->set_sequence_number(e.sequence_number);
  out->set_event_type(std::string(EventTypeName(e.type)));
  out->set_reason(d.reason);
  out->set_deliveries(d.deliveries);
  out->set_parked_at_us(ToUnixMicros(d.parked_at));
  out->set_event_json(LetterEventJson(e).dump(-1, ' ', false,
                                              nlohmann::json::error_handler_t::replace));
}

// Letters in the store now, at most kCountPage * kCountPages.
Result<std::pair<int64_t, bool>> CountLetters(store::StateStore& store) {
  int64_t count = 0, after = 0;
  for (int page = 0; page < kCountPages; ++page) {
    auto letters = store.ListDeadLetters(after, kCountPage);
    if (!letters.ok()) return letters.status();
    count += static_cast<int64_t>(letters->size());
    if (static_cast<int>(letters->size()) < kCountPage) return std::make_pair(count, false);
    after = letters->back().id;
  }
  return std::make_pair(count, true);
}

}  // namespace

grpc::Status ApiService::ListDeadLetters(grpc::ServerContext* ctx,
                                         const apollo::v1::ListDeadLettersRequest* req,
                                         apollo::v1::ListDeadLettersResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "dlq.list"); !a.ok()) return a;
  int limit = PageLimit(req->limit());
  // One more than asked tells whether there are more.
  auto letters = store_.ListDeadLetters(std::max<int64_t>(0, req->after_id()), limit + 1);
  if (!letters.ok()) return ToGrpc(letters.status());
  for (size_t i = 0; i < letters->size() && static_cast<int>(i) < limit; ++i) {
    FillLetter((*letters)[i], resp->add_letters());
  }
  resp->set_more(static_cast<int>(letters->size()) > limit);
  return grpc::Status::OK;
}

grpc::Status ApiService::GetDeadLetter(grpc::ServerContext* ctx,
                                       const apollo::v1::GetDeadLetterRequest* req,
                                       apollo::v1::DeadLetter* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "dlq.show"); !a.ok()) return a;
  auto letter = store_.GetDeadLetter(req->id());
  if (!letter.ok()) return LetterError(letter.status(), req->id());
  FillLetter(*letter, resp);
  return grpc::Status::OK;
}

grpc::Status ApiService::ReplayDeadLetters(grpc::ServerContext* ctx,
                                           const apollo::v1::ReplayDeadLettersRequest* req,
                                           apollo::v1::ReplayDeadLettersResponse* resp) {
  return Audited(*ctx, Role::kAdmin, "dlq.replay",
                 req->all() ? std::string("(all)") : std::to_string(req->id()), *req,
                 [&] { return Replay(req, resp); });
}

grpc::Status ApiService::Replay(const apollo::v1::ReplayDeadLettersRequest* req,
                                apollo::v1::ReplayDeadLettersResponse* resp) {
  if (bus_ == nullptr) return NoBus();
  if (req->all()) {
    auto n = bus_->ReplayAllDeadLetters();
    if (!n.ok()) return ToGrpc(n.status());
    resp->set_replayed(*n);
  } else {
    Status s = bus_->ReplayDeadLetter(req->id());
    if (!s.ok()) return LetterError(s, req->id());
    resp->set_replayed(1);
  }
  auto left = CountLetters(store_);
  if (left.ok()) resp->set_remaining(static_cast<int32_t>(left->first));
  if (resp->replayed() > 0) orchestrator_.Kick();  // replayed events may unblock work
  return grpc::Status::OK;
}

grpc::Status ApiService::DropDeadLetter(grpc::ServerContext* ctx,
                                        const apollo::v1::DropDeadLetterRequest* req,
                                        apollo::v1::DropDeadLetterResponse*) {
  return Audited(*ctx, Role::kAdmin, "dlq.drop", std::to_string(req->id()), *req, [&] {
    if (bus_ == nullptr) return NoBus();
    Status s = bus_->DropDeadLetter(req->id());
    if (!s.ok()) return LetterError(s, req->id());
    orchestrator_.Kick();
    return grpc::Status::OK;
  });
}

grpc::Status ApiService::BusStatus(grpc::ServerContext* ctx, const apollo::v1::BusStatusRequest*,
                                   apollo::v1::BusStatusResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "bus.status"); !a.ok()) return a;
  if (bus_ == nullptr) return NoBus();
  resp->set_backend(bus_->Name());
  auto lag = bus_->Lag();
  if (!lag.ok()) return ToGrpc(lag.status());
  for (const bus::PartitionLag& l : *lag) {
    auto* p = resp->add_partitions();
    p->set_partition(l.partition);
    p->set_published(l.published);
    p->set_applied(l.applied);
    p->set_pending(l.pending);
    p->set_dead_lettered(l.dead_lettered);
    p->set_oldest_unapplied_ms(
        std::chrono::duration_cast<std::chrono::milliseconds>(l.oldest_unapplied_age).count());
  }
  auto letters = CountLetters(store_);
  if (!letters.ok()) return ToGrpc(letters.status());
  resp->set_dead_letters(letters->first);
  resp->set_dead_letters_capped(letters->second);
  return grpc::Status::OK;
}

}  // namespace apollo::orchestrator
