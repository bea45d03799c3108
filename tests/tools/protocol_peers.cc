#include "protocol_peers.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "apollo/v1/agent.grpc.pb.h"

namespace apollo::e2e {
namespace {

using apollo::v1::AgentGateway;
using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;

bool Number(const std::string& s, long max, long* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || v > max) return false;
  *out = v;
  return true;
}

// Answers each Hello as told: a Welcome with `welcome_protocol`, or (when
// `refuse`) FAILED_PRECONDITION.
class FakeGateway final : public AgentGateway::Service {
 public:
  FakeGateway(bool refuse, uint32_t welcome_protocol)
      : refuse_(refuse), welcome_protocol_(welcome_protocol) {}
  grpc::Status Connect(grpc::ServerContext*,
                       grpc::ServerReaderWriter<CenterMessage, AgentMessage>* stream) override {
    AgentMessage in;
    if (!stream->Read(&in) || !in.has_hello()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no Hello");
    }
    sessions_.fetch_add(1);
    if (refuse_) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "fake center: agent protocol " +
                              std::to_string(in.hello().protocol_version()) + " refused");
    }
    CenterMessage w;
    w.mutable_welcome()->set_protocol_version(welcome_protocol_);
    w.mutable_welcome()->set_heartbeat_interval_ms(1000);
    stream->Write(w);
    while (stream->Read(&in)) {
    }
    return grpc::Status::OK;
  }
  int sessions() const { return sessions_.load(); }

 private:
  const bool refuse_;
  const uint32_t welcome_protocol_;
  std::atomic<int> sessions_{0};
};

}  // namespace

int SayHello(const std::vector<std::string>& a) {
  long protocol = 0;
  if (a.size() != 3 || !Number(a[2], 1'000'000, &protocol)) {
    std::cerr << "usage: apollo-e2e-tool hello ADDR NODE_ID PROTOCOL\n";
    return 2;
  }
  auto stub = AgentGateway::NewStub(grpc::CreateChannel(a[0], grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->Connect(&ctx);
  AgentMessage hello;
  hello.mutable_hello()->set_node_id(a[1]);
  hello.mutable_hello()->set_protocol_version(static_cast<uint32_t>(protocol));
  hello.mutable_hello()->add_intents("noop");
  CenterMessage reply;
  nlohmann::json out;
  if (stream->Write(hello) && stream->Read(&reply) && reply.has_welcome()) {
    out = {{"code", 0}, {"message", ""}, {"welcome_protocol", reply.welcome().protocol_version()}};
    stream->WritesDone();
    ctx.TryCancel();
    stream->Finish();
  } else {
    grpc::Status st = stream->Finish();
    out = {{"code", static_cast<int>(st.error_code())},
           {"message", st.error_message()},
           {"welcome_protocol", nullptr}};
  }
  std::cout << out.dump() << "\n";
  return 0;
}

int FakeCenter(const std::vector<std::string>& a) {
  long port = 0, run_s = 0, protocol = 0;
  bool refuse = a.size() == 3 && a[1] == "refuse";
  bool welcome = a.size() == 3 && a[1].rfind("welcome:", 0) == 0 &&
                 Number(a[1].substr(8), 1'000'000, &protocol);
  if (a.size() != 3 || !Number(a[0], 65535, &port) || port == 0 || !(refuse || welcome) ||
      !Number(a[2], 3600, &run_s)) {
    std::cerr << "usage: apollo-e2e-tool fake-center PORT (welcome:N | refuse) RUN_S\n";
    return 2;
  }
  FakeGateway service(refuse, static_cast<uint32_t>(protocol));
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                           &bound);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound == 0) {
    std::cerr << "apollo-e2e-tool: fake-center cannot listen on 127.0.0.1:" << port << "\n";
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::seconds(run_s));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  std::cout << nlohmann::json{{"sessions", service.sessions()}}.dump() << "\n";
  return 0;
}

}  // namespace apollo::e2e
