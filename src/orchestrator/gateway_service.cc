#include "orchestrator/gateway_service.h"

namespace apollo::orchestrator {
namespace {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;

// A stream refused before it became a session: ends at once with `status`.
class RefusedStream final : public grpc::ServerBidiReactor<AgentMessage, CenterMessage> {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

GatewayService::GatewayService(SessionHost& host, const Clock& clock, GatewayOptions options)
    : host_(host),
      options_(std::move(options)),
      streams_(options_.max_streams),
      hello_(options_.hello_timeout, clock, options_.log),
      silence_(options_.silence_limit, options_.log),
      traffic_(std::make_shared<SessionTraffic>(options_.busy_batches)) {
  hello_.Start();
  silence_.Start();
}

GatewayService::~GatewayService() {
  hello_.Stop();
  silence_.Stop();
}

grpc::ServerBidiReactor<AgentMessage, CenterMessage>* GatewayService::Connect(
    grpc::CallbackServerContext* ctx) {
  auto slot = streams_.TryAcquire();
  if (!slot) {
    // The details carry the retry-after in milliseconds for the agent, as
    // admission's refusal at Hello does.
    return new RefusedStream(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                          "too many agent streams open (" +
                                              std::to_string(streams_.capacity()) +
                                              ", limits.max_sessions); come back later",
                                          "5000"));
  }
  SessionBounds bounds;
  bounds.slot.emplace(std::move(*slot));
  bounds.hello = &hello_;
  bounds.silence = &silence_;
  bounds.max_outbound_bytes = options_.max_outbound_bytes;
  bounds.intent_hold_limit = options_.intent_hold_limit;
  bounds.busy_hold_limit = options_.busy_hold_limit;
  bounds.traffic = traffic_;
  // Deletes itself in OnDone.
  return new AgentSession(host_, IdentityOf(*ctx, options_.tls), ctx, std::move(bounds));
}

}  // namespace apollo::orchestrator
