#pragma once

// AgentGateway: every agent's bidirectional stream lands here and becomes
// an AgentSession served by the callback API (many streams, few threads).

#include "apollo/v1/agent.grpc.pb.h"
#include "orchestrator/agent_session.h"

namespace apollo::orchestrator {

class GatewayService final : public apollo::v1::AgentGateway::CallbackService {
 public:
  explicit GatewayService(SessionHost& host) : host_(host) {}

  grpc::ServerBidiReactor<apollo::v1::AgentMessage, apollo::v1::CenterMessage>* Connect(
      grpc::CallbackServerContext*) override {
    return new AgentSession(host_);  // deletes itself in OnDone
  }

 private:
  SessionHost& host_;
};

}  // namespace apollo::orchestrator
