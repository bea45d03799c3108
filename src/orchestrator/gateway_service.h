#pragma once

// AgentGateway: every agent's bidirectional stream lands here and becomes
// an AgentSession served by the callback API (many streams, few threads).
//
// Bounds (config `limits:`), so no peer can hold the center's memory or
// threads without limit:
//  - at most `max_streams` agent streams at once, counted from the moment a
//    stream opens (before its Hello): the stream past the cap is ended at
//    once with RESOURCE_EXHAUSTED and a retry-after, like admission's rate
//    refusal at Hello (orchestrator.cc);
//  - a stream must say Hello within `hello_timeout`, or it is ended with
//    DEADLINE_EXCEEDED and its slot is free again (hello_deadlines.h);
//  - a session from which nothing is heard for `silence_limit` (about two
//    heartbeat intervals: every agent heartbeats) is ended and cancelled,
//    so an agent behind a silently cut link shows as disconnected
//    (silence_watch.h);
//  - a session's queue of messages not yet written to its peer is bounded
//    by `max_outbound_bytes`: a peer that stops reading is cut off
//    (agent_session.h); its rows stay as they are, the agent resends its
//    unacknowledged events from its WAL on the next session and the
//    center's ack timeout re-dispatches its unacknowledged intents.
//
// Thread-safety: gRPC calls Connect concurrently; the members are
// thread-safe. Lifetime: must outlive the gRPC server it is registered with
// (every stream ends before the server is destroyed).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "apollo/v1/agent.grpc.pb.h"
#include "core/clock.h"
#include "orchestrator/agent_session.h"
#include "orchestrator/concurrency_limit.h"
#include "orchestrator/hello_deadlines.h"
#include "orchestrator/peer_identity.h"
#include "orchestrator/silence_watch.h"

namespace apollo::orchestrator {

struct GatewayOptions {
  Duration hello_timeout = std::chrono::seconds(10);
  Duration silence_limit{0};  // 0: sessions are never ended for silence
  int64_t max_streams = 10'000;
  int64_t max_outbound_bytes = int64_t{64} << 20;
  // How long intents wait for an agent that does not answer (intent_hold.h).
  Duration intent_hold_limit = kIntentHoldLimit;
  // While this many agent EventBatches (of all sessions) are committing,
  // intents wait up to busy_hold_limit and go together (session_traffic.h,
  // intent_hold.h); 0: never.
  int64_t busy_batches = kBusyBatches;
  Duration busy_hold_limit = kBusyHoldLimit;
  // The server requires client certificates, so each stream's Hello must
  // match the node of its peer's certificate (peer_identity.h).
  bool tls = false;
  // Operator-facing log lines (streams closed for a missing Hello); may be empty.
  std::function<void(const std::string&)> log;
};

class GatewayService final : public apollo::v1::AgentGateway::CallbackService {
 public:
  // Starts the Hello deadline and silence sweepers. `host` and `clock` must outlive it.
  GatewayService(SessionHost& host, const Clock& clock, GatewayOptions options);
  ~GatewayService() override;

  grpc::ServerBidiReactor<apollo::v1::AgentMessage, apollo::v1::CenterMessage>* Connect(
      grpc::CallbackServerContext* ctx) override;

  int64_t open_streams() const { return streams_.in_use(); }
  const HelloDeadlines& hello_deadlines() const { return hello_; }
  const SilenceWatch& silence_watch() const { return silence_; }
  // The sessions' shared load and intent message counts (for /metrics).
  const std::shared_ptr<SessionTraffic>& traffic() const { return traffic_; }

 private:
  SessionHost& host_;
  const GatewayOptions options_;
  ConcurrencyLimit streams_;
  HelloDeadlines hello_;
  SilenceWatch silence_;
  // Shared with every session (and its commit callbacks, which may finish
  // after the session ended).
  const std::shared_ptr<SessionTraffic> traffic_;
};

}  // namespace apollo::orchestrator
