#pragma once

// A real AgentGateway on 127.0.0.1:0 for the orchestrator's session tests,
// with a host that records what reached it; the test talks to it as an
// agent would, over the synchronous client API.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/gateway_service.h"

namespace apollo::orchestrator::testing {

class RecordingHost final : public SessionHost {
 public:
  grpc::Status OnHello(const std::shared_ptr<SessionHandle>& handle, const apollo::v1::Hello&,
                       apollo::v1::Welcome*) override {
    std::lock_guard<std::mutex> lock(mu_);
    handles_.push_back(handle);
    cv_.notify_all();
    return grpc::Status::OK;
  }
  void OnEvents(const std::shared_ptr<SessionHandle>&, apollo::v1::EventBatch,
                std::function<void(uint64_t)> done) override {
    // Counted once committed (or held): WaitBatches(n) then means the n-th
    // batch's commit finished, unless commits are held.
    std::unique_lock<std::mutex> lock(mu_);
    if (hold_commits_) {
      held_commits_.push_back(std::move(done));
    } else {
      lock.unlock();
      done(0);
      lock.lock();
    }
    ++batches_;
    cv_.notify_all();
  }
  void OnHeartbeat(const std::shared_ptr<SessionHandle>&, const apollo::v1::Heartbeat&) override {}
  void OnSnapshot(const std::shared_ptr<SessionHandle>&, const apollo::v1::Snapshot&) override {}
  void OnProgress(const std::shared_ptr<SessionHandle>&,
                  const apollo::v1::ProgressReply&) override {}
  void OnDisconnect(const std::shared_ptr<SessionHandle>&) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++disconnects_;
    cv_.notify_all();
  }
  void OnRefused(const std::string& kind, const std::string&, const std::string& detail) override {
    std::lock_guard<std::mutex> lock(mu_);
    refusals_.push_back(kind + ": " + detail);
  }

  std::shared_ptr<SessionHandle> WaitHandle() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return !handles_.empty(); });
    return handles_.empty() ? nullptr : handles_.back();
  }
  bool WaitDisconnects(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return disconnects_ >= n; });
  }
  // From now on EventBatches stay "committing" until CommitHeld (a store
  // that is behind).
  void HoldCommits() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_commits_ = true;
  }
  // Commits every batch held so far, and holds no more.
  void CommitHeld() {
    std::vector<std::function<void(uint64_t)>> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hold_commits_ = false;
      done.swap(held_commits_);
    }
    for (auto& d : done) d(0);
  }
  // Waits (bounded) until `n` EventBatches reached the host.
  bool WaitBatches(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return batches_ >= n; });
  }
  std::vector<std::string> refusals() {
    std::lock_guard<std::mutex> lock(mu_);
    return refusals_;
  }
  size_t hellos() {
    std::lock_guard<std::mutex> lock(mu_);
    return handles_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<SessionHandle>> handles_;  // guarded by mu_
  int disconnects_ = 0;                                  // guarded by mu_
  std::vector<std::string> refusals_;                    // guarded by mu_
  int batches_ = 0;                                      // guarded by mu_
  bool hold_commits_ = false;                            // guarded by mu_
  std::vector<std::function<void(uint64_t)>> held_commits_;  // guarded by mu_
};

// One agent's end of a stream.
struct TestAgent {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriter<apollo::v1::AgentMessage, apollo::v1::CenterMessage>>
      stream;
};

class GatewayTest : public ::testing::Test {
 protected:
  void Serve(GatewayOptions options) {
    gateway_ = std::make_unique<GatewayService>(host_, clock_, std::move(options));
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    b.RegisterService(gateway_.get());
    server_ = b.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr);
    stub_ = apollo::v1::AgentGateway::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(port_), grpc::InsecureChannelCredentials()));
  }
  // Opens `agent`'s stream and says Hello as `node`; true once the Welcome
  // is read.
  bool Connect(TestAgent& agent, const std::string& node) {
    agent.stream = stub_->Connect(&agent.ctx);
    apollo::v1::AgentMessage hello;
    hello.mutable_hello()->set_node_id(node);
    apollo::v1::CenterMessage welcome;
    return agent.stream->Write(hello) && agent.stream->Read(&welcome) && welcome.has_welcome();
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
  // Waits (bounded) until the gateway holds `n` streams.
  bool WaitOpen(int64_t n) {
    for (int i = 0; i < 500; ++i) {
      if (gateway_->open_streams() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  RealClock clock_;
  RecordingHost host_;
  std::unique_ptr<GatewayService> gateway_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<apollo::v1::AgentGateway::Stub> stub_;
  int port_ = 0;
};

}  // namespace apollo::orchestrator::testing
