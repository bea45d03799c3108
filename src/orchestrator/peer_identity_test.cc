// Node identity on agent streams over real mutual TLS: a gRPC server on
// 127.0.0.1:0 with the GatewayService the orchestrator runs, a recording
// SessionHost, and clients holding certificates made by tls/cert_authority
// in a temp dir. The refusals must happen before the host hears of the
// stream (so the real node's session and rows cannot change).
#include "orchestrator/peer_identity.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <tuple>

#include "orchestrator/gateway_service.h"
#include "tls/cert_authority.h"
#include "tls/tls_files.h"

namespace apollo::orchestrator {
namespace {

namespace fs = std::filesystem;
using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;
using Refusal = std::tuple<std::string, std::string, std::string>;  // kind, node, detail

// Records what the sessions told it; answers every Hello with a Welcome.
class RecordingHost final : public SessionHost {
 public:
  grpc::Status OnHello(const std::shared_ptr<SessionHandle>&, const apollo::v1::Hello& hello,
                       apollo::v1::Welcome* welcome) override {
    std::lock_guard<std::mutex> lock(mu_);
    hellos_.push_back(hello.node_id());
    welcome->set_stored_seq(0);
    return grpc::Status::OK;
  }
  void OnEvents(const std::shared_ptr<SessionHandle>& handle, apollo::v1::EventBatch batch,
                std::function<void(uint64_t)> done) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& e : batch.events()) events_.push_back(handle->node_id() + ":" + e.node_id());
    }
    cv_.notify_all();
    done(0);
  }
  void OnHeartbeat(const std::shared_ptr<SessionHandle>&, const apollo::v1::Heartbeat&) override {}
  void OnSnapshot(const std::shared_ptr<SessionHandle>&, const apollo::v1::Snapshot&) override {}
  void OnProgress(const std::shared_ptr<SessionHandle>&,
                  const apollo::v1::ProgressReply&) override {}
  void OnDisconnect(const std::shared_ptr<SessionHandle>& handle) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      disconnects_.push_back(handle->node_id());
    }
    cv_.notify_all();
  }
  void OnRefused(const std::string& kind, const std::string& node_id,
                 const std::string& detail) override {
    std::lock_guard<std::mutex> lock(mu_);
    refusals_.emplace_back(kind, node_id, detail);
  }

  std::vector<std::string> hellos() const { return Copy(hellos_); }
  std::vector<std::string> events() const { return Copy(events_); }
  std::vector<Refusal> refusals() const { return Copy(refusals_); }
  // Waits (bounded) until `n` streams with a handle have ended.
  bool WaitDisconnects(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return disconnects_.size() >= n; });
  }
  bool WaitEvents(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return events_.size() >= n; });
  }

 private:
  template <typename T>
  std::vector<T> Copy(const std::vector<T>& v) const {
    std::lock_guard<std::mutex> lock(mu_);
    return v;
  }
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> hellos_;       // guarded by mu_
  std::vector<std::string> events_;       // guarded by mu_: "session node:event node"
  std::vector<std::string> disconnects_;  // guarded by mu_
  std::vector<Refusal> refusals_;         // guarded by mu_
};

AgentMessage Hello(const std::string& node_id) {
  AgentMessage m;
  m.mutable_hello()->set_node_id(node_id);
  return m;
}

AgentMessage Events(const std::string& node_id) {
  AgentMessage m;
  auto* e = m.mutable_events()->add_events();
  e->set_node_id(node_id);
  e->set_event_id(node_id + "-1");
  e->set_sequence_number(1);
  e->set_task_id("t-1");
  return m;
}

class PeerIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-peer-identity-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(tls::CreateCa(dir_, 30, false, clock_.Now()).ok());
    ASSERT_TRUE(tls::CreateCa(dir_ + "/other", 30, false, clock_.Now()).ok());
    tls::CertRequest server;
    server.kind = tls::CertKind::kServer;
    server.name = "server";
    ASSERT_TRUE(tls::CreateCert(dir_, server, false, clock_.Now()).ok());
    for (const char* node : {"worker-1", "worker-2"}) ASSERT_TRUE(MakeNode(dir_, node));
    ASSERT_TRUE(MakeNode(dir_ + "/other", "worker-1"));
    tls::CertRequest op;
    op.kind = tls::CertKind::kClient;
    op.name = "operator";
    ASSERT_TRUE(tls::CreateCert(dir_, op, false, clock_.Now()).ok());
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    fs::remove_all(dir_);
  }

  bool MakeNode(const std::string& dir, const std::string& node) {
    tls::CertRequest r;
    r.kind = tls::CertKind::kNode;
    r.node_id = node;
    r.name = node;
    auto c = tls::CreateCert(dir, r, false, clock_.Now());
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok();
  }
  tls::TlsMaterial Material(const std::string& dir, const std::string& name) {
    auto m = tls::LoadTlsMaterial(
        {dir + "/" + name + ".pem", dir + "/" + name + "-key.pem", dir + "/ca.pem"}, clock_.Now());
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? *m : tls::TlsMaterial{};
  }

  // The gateway as orchestrator/main.cc serves it, TLS on or off.
  void Serve(bool tls) {
    GatewayOptions options;
    options.tls = tls;
    gateway_ = std::make_unique<GatewayService>(host_, clock_, options);
    grpc::ServerBuilder b;
    std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
    if (tls) {
      tls::TlsMaterial m = Material(dir_, "server");
      grpc::SslServerCredentialsOptions o(
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
      o.pem_root_certs = m.ca_pem;
      o.pem_key_cert_pairs.push_back({m.key_pem, m.cert_pem});
      creds = grpc::SslServerCredentials(o);
    }
    b.AddListeningPort("127.0.0.1:0", creds, &port_);
    b.RegisterService(gateway_.get());
    server_ = b.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr);
  }

  // A client presenting `name`'s certificate from `dir` (empty: no client
  // certificate), trusting this test's CA.
  std::unique_ptr<apollo::v1::AgentGateway::Stub> Client(const std::string& dir,
                                                         const std::string& name) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = Material(dir_, "server").ca_pem;
    if (!name.empty()) {
      tls::TlsMaterial m = Material(dir, name);  // checked against its own CA
      o.pem_cert_chain = m.cert_pem;
      o.pem_private_key = m.key_pem;
    }
    return apollo::v1::AgentGateway::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port_), grpc::SslCredentials(o)));
  }
  std::unique_ptr<apollo::v1::AgentGateway::Stub> PlainClient() {
    return apollo::v1::AgentGateway::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(port_), grpc::InsecureChannelCredentials()));
  }

  struct Outcome {
    bool welcomed = false;
    grpc::Status status;
  };
  // Says Hello as `node`, then sends `then` (if any) and ends the stream.
  // `then_refused`: the server is expected to end the stream on `then`
  // (read until it does); otherwise wait until the host saw it.
  Outcome Run(apollo::v1::AgentGateway::Stub& stub, const std::string& node,
              const AgentMessage* then = nullptr, bool then_refused = false) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto stream = stub.Connect(&ctx);
    Outcome out;
    CenterMessage msg;
    if (stream->Write(Hello(node)) && stream->Read(&msg) && msg.has_welcome()) {
      out.welcomed = true;
      if (then) {
        stream->Write(*then);
        if (then_refused) {
          while (stream->Read(&msg)) {
          }
        } else {
          host_.WaitEvents(1);
        }
      }
      stream->WritesDone();
    }
    out.status = stream->Finish();
    return out;
  }

  RealClock clock_;
  std::string dir_;
  RecordingHost host_;
  std::unique_ptr<GatewayService> gateway_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(PeerIdentityTest, HelloMatchingTheCertificateIsWelcomed) {
  Serve(/*tls=*/true);
  auto stub = Client(dir_, "worker-1");
  AgentMessage own = Events("worker-1");
  Outcome o = Run(*stub, "worker-1", &own);
  EXPECT_TRUE(o.welcomed);
  EXPECT_EQ(o.status.error_code(), grpc::StatusCode::OK) << o.status.error_message();
  EXPECT_EQ(host_.hellos(), std::vector<std::string>{"worker-1"});
  EXPECT_EQ(host_.events(), std::vector<std::string>{"worker-1:worker-1"});
  EXPECT_TRUE(host_.refusals().empty());
}

TEST_F(PeerIdentityTest, HelloAsAnotherNodeIsRefusedBeforeTheHostSeesIt) {
  Serve(/*tls=*/true);
  auto stub = Client(dir_, "worker-1");
  Outcome o = Run(*stub, "worker-2");
  EXPECT_FALSE(o.welcomed);
  EXPECT_EQ(o.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(o.status.error_message(), "certificate is for node worker-1, Hello says worker-2");
  EXPECT_TRUE(host_.hellos().empty());  // the real worker-2's session is untouched
  auto r = host_.refusals();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(std::get<0>(r[0]), "impersonation_refused");
  EXPECT_EQ(std::get<1>(r[0]), "worker-1");
  EXPECT_NE(std::get<2>(r[0]).find("certificate is for node worker-1, Hello says worker-2 (peer "),
            std::string::npos)
      << std::get<2>(r[0]);
}

TEST_F(PeerIdentityTest, AnOperatorCertificateCannotBeAnAgent) {
  Serve(/*tls=*/true);
  auto stub = Client(dir_, "operator");
  Outcome o = Run(*stub, "worker-2");
  EXPECT_FALSE(o.welcomed);
  EXPECT_EQ(o.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(o.status.error_message().find("the certificate names no node"), std::string::npos)
      << o.status.error_message();
  EXPECT_TRUE(host_.hellos().empty());
  ASSERT_EQ(host_.refusals().size(), 1u);
  EXPECT_EQ(std::get<1>(host_.refusals()[0]), "worker-2");
}

TEST_F(PeerIdentityTest, EventsOfAnotherNodeEndTheStream) {
  Serve(/*tls=*/true);
  auto stub = Client(dir_, "worker-1");
  AgentMessage foreign = Events("worker-2");
  Outcome o = Run(*stub, "worker-1", &foreign, /*then_refused=*/true);
  EXPECT_TRUE(o.welcomed);
  EXPECT_EQ(o.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(o.status.error_message(), "node worker-1 sent an event of node worker-2 (worker-2-1)");
  EXPECT_TRUE(host_.events().empty());  // never applied
  ASSERT_EQ(host_.refusals().size(), 1u);
  EXPECT_EQ(std::get<0>(host_.refusals()[0]), "impersonation_refused");
  EXPECT_TRUE(host_.WaitDisconnects(1));  // worker-1's own session ended
}

TEST_F(PeerIdentityTest, TheHandshakeRefusesPeersWithoutAGoodCertificate) {
  Serve(/*tls=*/true);
  auto no_cert = Client(dir_, "");
  Outcome a = Run(*no_cert, "worker-1");
  EXPECT_FALSE(a.welcomed);
  EXPECT_EQ(a.status.error_code(), grpc::StatusCode::UNAVAILABLE) << a.status.error_message();
  auto foreign = Client(dir_ + "/other", "worker-1");  // right name, another CA
  Outcome b = Run(*foreign, "worker-1");
  EXPECT_FALSE(b.welcomed);
  EXPECT_EQ(b.status.error_code(), grpc::StatusCode::UNAVAILABLE) << b.status.error_message();
  auto plain = PlainClient();
  Outcome c = Run(*plain, "worker-1");
  EXPECT_FALSE(c.welcomed);
  EXPECT_EQ(c.status.error_code(), grpc::StatusCode::UNAVAILABLE) << c.status.error_message();
  EXPECT_TRUE(host_.hellos().empty());
  EXPECT_TRUE(host_.refusals().empty());
}

TEST_F(PeerIdentityTest, WithoutTlsTheHelloIsTakenAtItsWord) {
  Serve(/*tls=*/false);
  auto plain = PlainClient();
  Outcome o = Run(*plain, "worker-2");
  EXPECT_TRUE(o.welcomed);
  EXPECT_EQ(host_.hellos(), std::vector<std::string>{"worker-2"});
}

TEST(HelloRefusalTest, Cases) {
  PeerIdentity off;
  EXPECT_EQ(HelloRefusal(off, "anyone"), std::nullopt);
  PeerIdentity node{true, "worker-1", "", "ipv4:1.2.3.4:5"};
  EXPECT_EQ(HelloRefusal(node, "worker-1"), std::nullopt);
  EXPECT_EQ(HelloRefusal(node, "worker-2"),
            "certificate is for node worker-1, Hello says worker-2");
  EXPECT_EQ(HelloRefusal(node, "evil\nline"),
            "certificate is for node worker-1, Hello says evil?line");
  PeerIdentity none{true, "", "the peer presented no certificate", "p"};
  EXPECT_NE(HelloRefusal(none, "worker-1"), std::nullopt);
  EXPECT_EQ(ShownId(std::string(200, 'a')), std::string(128, 'a') + "...");
}

}  // namespace
}  // namespace apollo::orchestrator
