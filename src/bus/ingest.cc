#include "bus/ingest.h"

namespace apollo::bus {

std::future<Result<store::ApplyResult>> PublishForIngest(EventBus& bus, std::string node_id,
                                                         std::vector<Event> events) {
  std::future<Result<PublishAck>> published = bus.Publish(node_id, std::move(events));
  return std::async(std::launch::deferred,
                    [f = std::move(published), node = std::move(node_id)]() mutable
                    -> Result<store::ApplyResult> {
                      Result<PublishAck> r = f.get();
                      if (!r.ok()) return r.status();
                      store::ApplyResult out;
                      if (r->acked_seq > 0) out.acked_seq[node] = r->acked_seq;
                      for (const auto& o : r->outcomes) {
                        store::EventOutcome e;
                        e.outcome = o.value_or(store::Outcome::kMalformed);
                        if (!o) e.reason = "dead-lettered by the event bus";
                        out.outcomes.push_back(std::move(e));
                      }
                      return out;
                    });
}

}  // namespace apollo::bus
