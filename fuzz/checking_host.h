#pragma once

// The fuzzer's SessionHost: the real Orchestrator behind it, every call
// forwarded unchanged, plus the invariants the session layer promises the
// host (agent_session.h), checked on each call. A broken invariant aborts
// the process with one line saying which (the fuzzer reports it as a crash).
//
// Checked here:
//  - a Hello reaches the host only if the stream's peer may say it (TLS on:
//    the node of the certificate), and the handle is the Hello's node;
//  - an EventBatch reaches the host only with events of the stream's own
//    node (or without a node id: malformed, recorded under the stream's);
//  - each EventBatch's `done` is called exactly once;
//  - the host hears of a stream only after its accepted Hello.
//
// Thread-safety: gRPC and the orchestrator call it from their threads; mu_
// guards the per-stream record.

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "orchestrator/orchestrator.h"

namespace apollo::fuzz {

[[noreturn]] inline void Violated(const std::string& what) {
  std::fprintf(stderr, "agent_session_fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

class CheckingHost final : public orchestrator::SessionHost {
 public:
  // `orch` must outlive this host.
  explicit CheckingHost(orchestrator::Orchestrator& orch) : orch_(orch) {}

  // What one stream did to the host (reset by BeginStream).
  struct StreamRecord {
    std::vector<std::string> hellos;  // node ids the host accepted a Hello for
    std::vector<std::string> refusals;
    int live = 0;     // sessions the host heard of and not yet disconnected
    int pending = 0;  // EventBatches whose `done` is not called yet
  };

  // Before each stream: `peer` is what the stream's transport proved.
  void BeginStream(const orchestrator::PeerIdentity& peer) {
    std::lock_guard<std::mutex> lock(mu_);
    peer_ = peer;
    record_ = StreamRecord{};
  }
  // Waits (bounded) until the host heard the last of the stream: every
  // session disconnected and every batch done. False on timeout (a hang).
  bool WaitStreamSettled() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10),
                        [&] { return record_.live == 0 && record_.pending == 0; });
  }
  StreamRecord record() const {
    std::lock_guard<std::mutex> lock(mu_);
    return record_;
  }

  // SessionHost
  grpc::Status OnHello(const std::shared_ptr<orchestrator::SessionHandle>& handle,
                       const apollo::v1::Hello& hello, apollo::v1::Welcome* welcome) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (handle->node_id() != hello.node_id()) Violated("handle is not the Hello's node");
      if (peer_.checked && hello.node_id() != peer_.node_id) {
        Violated("a Hello as '" + orchestrator::ShownId(hello.node_id()) +
                 "' reached the host from a peer proven to be '" + peer_.node_id + "'");
      }
      ++record_.live;
    }
    grpc::Status st = orch_.OnHello(handle, hello, welcome);
    if (st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      record_.hellos.push_back(hello.node_id());
    }
    return st;
  }

  void OnEvents(const std::shared_ptr<orchestrator::SessionHandle>& handle,
                apollo::v1::EventBatch batch, std::function<void(uint64_t)> done) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (record_.live == 0) Violated("EventBatch before an accepted Hello");
      for (const auto& e : batch.events()) {
        if (!e.node_id().empty() && e.node_id() != handle->node_id()) {
          Violated("session of '" + handle->node_id() + "' passed on an event of '" +
                   orchestrator::ShownId(e.node_id()) + "'");
        }
      }
      ++record_.pending;
    }
    auto called = std::make_shared<std::atomic<bool>>(false);
    orch_.OnEvents(handle, std::move(batch),
                   [this, called, done = std::move(done)](uint64_t acked) {
                     if (called->exchange(true)) Violated("EventBatch done called twice");
                     done(acked);
                     std::lock_guard<std::mutex> lock(mu_);
                     --record_.pending;
                     cv_.notify_all();
                   });
  }

  void OnHeartbeat(const std::shared_ptr<orchestrator::SessionHandle>& handle,
                   const apollo::v1::Heartbeat& hb) override {
    RequireLive("Heartbeat");
    orch_.OnHeartbeat(handle, hb);
  }
  void OnSnapshot(const std::shared_ptr<orchestrator::SessionHandle>& handle,
                  const apollo::v1::Snapshot& snapshot) override {
    RequireLive("Snapshot");
    orch_.OnSnapshot(handle, snapshot);
  }
  void OnProgress(const std::shared_ptr<orchestrator::SessionHandle>& handle,
                  const apollo::v1::ProgressReply& reply) override {
    RequireLive("ProgressReply");
    orch_.OnProgress(handle, reply);
  }
  void OnDisconnect(const std::shared_ptr<orchestrator::SessionHandle>& handle) override {
    orch_.OnDisconnect(handle);
    std::lock_guard<std::mutex> lock(mu_);
    if (--record_.live < 0) Violated("OnDisconnect without OnHello");
    cv_.notify_all();
  }
  void OnRefused(const std::string& kind, const std::string& node_id,
                 const std::string& detail) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      record_.refusals.push_back(kind);
    }
    orch_.OnRefused(kind, node_id, detail);
  }

 private:
  void RequireLive(const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (record_.live == 0) Violated(std::string(what) + " before an accepted Hello");
  }

  orchestrator::Orchestrator& orch_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  orchestrator::PeerIdentity peer_;  // guarded by mu_
  StreamRecord record_;              // guarded by mu_
};

}  // namespace apollo::fuzz
