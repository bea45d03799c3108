#pragma once

// AgentGateway: every agent's bidirectional stream lands here and becomes
// an AgentSession served by the callback API (many streams, few threads).

#include "apollo/v1/agent.grpc.pb.h"
#include "orchestrator/agent_session.h"
#include "orchestrator/peer_identity.h"

namespace apollo::orchestrator {

class GatewayService final : public apollo::v1::AgentGateway::CallbackService {
 public:
  // `tls`: the server requires client certificates, so each stream's Hello
  // must match the node of its peer's certificate (peer_identity.h).
  explicit GatewayService(SessionHost& host, bool tls = false) : host_(host), tls_(tls) {}

  grpc::ServerBidiReactor<apollo::v1::AgentMessage, apollo::v1::CenterMessage>* Connect(
      grpc::CallbackServerContext* ctx) override {
    return new AgentSession(host_, IdentityOf(*ctx, tls_));  // deletes itself in OnDone
  }

 private:
  SessionHost& host_;
  const bool tls_;
};

}  // namespace apollo::orchestrator
