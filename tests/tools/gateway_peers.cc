#include "gateway_peers.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "apollo/v1/agent.grpc.pb.h"

namespace apollo::e2e {
namespace {

using apollo::v1::AgentGateway;
using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;
using Clock = std::chrono::steady_clock;

// Streams per connection: several connections, as many agents would open.
constexpr int kStreamsPerChannel = 100;

bool PositiveInt(const std::string& s, int max, int* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v <= 0 || v > max) return false;
  *out = static_cast<int>(v);
  return true;
}

std::shared_ptr<grpc::Channel> OwnChannel(const std::string& addr) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // its own connection
  return grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args);
}

struct Tally {
  std::mutex mu;
  std::condition_variable cv;
  int ended = 0;              // guarded by mu
  int deadline_exceeded = 0;  // guarded by mu
  std::string first_other;    // guarded by mu
};

// A stream that says nothing; records how the center ended it.
class SilentStream final : public grpc::ClientBidiReactor<AgentMessage, CenterMessage> {
 public:
  SilentStream(AgentGateway::Stub& stub, Tally& tally) : tally_(tally) {
    stub.async()->Connect(&ctx_, this);
    StartRead(&in_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (ok) StartRead(&in_);  // nothing is expected before Hello
  }
  void OnDone(const grpc::Status& s) override {
    std::lock_guard<std::mutex> lock(tally_.mu);
    ++tally_.ended;
    if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      ++tally_.deadline_exceeded;
    } else if (tally_.first_other.empty()) {
      tally_.first_other = std::to_string(s.error_code()) + " " + s.error_message();
    }
    tally_.cv.notify_all();
  }
  void Cancel() { ctx_.TryCancel(); }

 private:
  Tally& tally_;
  grpc::ClientContext ctx_;
  CenterMessage in_;
};

}  // namespace

int SilentStreams(const std::vector<std::string>& a) {
  int n = 0, wait_s = 0;
  if (a.size() != 3 || !PositiveInt(a[1], 100'000, &n) || !PositiveInt(a[2], 3600, &wait_s)) {
    std::cerr << "usage: apollo-e2e-tool silent-streams ADDR N WAIT_S\n";
    return 2;
  }
  std::vector<std::unique_ptr<AgentGateway::Stub>> stubs;
  for (int i = 0; i < n; i += kStreamsPerChannel)
    stubs.push_back(AgentGateway::NewStub(OwnChannel(a[0])));
  Tally tally;
  const auto started = Clock::now();
  std::vector<std::unique_ptr<SilentStream>> streams;
  for (int i = 0; i < n; ++i) {
    streams.push_back(std::make_unique<SilentStream>(*stubs[i / kStreamsPerChannel], tally));
  }
  std::unique_lock<std::mutex> lock(tally.mu);
  tally.cv.wait_until(lock, started + std::chrono::seconds(wait_s),
                      [&] { return tally.ended >= n; });
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const int ended = tally.ended, deadline_exceeded = tally.deadline_exceeded;
  const std::string other = tally.first_other;
  lock.unlock();
  for (auto& s : streams) s->Cancel();  // those still open (none, if the center did its job)
  {
    std::unique_lock<std::mutex> l(tally.mu);
    tally.cv.wait_for(l, std::chrono::seconds(10), [&] { return tally.ended >= n; });
    if (tally.ended < n) {
      std::cerr << "apollo-e2e-tool: " << n - tally.ended << " streams did not finish\n";
      std::_Exit(1);  // reactors still referenced by gRPC: do not free them
    }
  }
  std::cout << "{\"opened\": " << n << ", \"ended\": " << ended
            << ", \"deadline_exceeded\": " << deadline_exceeded
            << ", \"other\": " << ended - deadline_exceeded << ", \"first_other\": \""
            << (other.empty() ? "" : "see stderr") << "\""
            << ", \"still_open\": " << n - ended << ", \"seconds\": " << seconds << "}\n";
  if (!other.empty()) std::cerr << "first other ending: " << other << "\n";
  return 0;
}

int StalledReader(const std::vector<std::string>& a) {
  int run_s = 0;
  if (a.size() != 3 || a[1].empty() || !PositiveInt(a[2], 3600, &run_s)) {
    std::cerr << "usage: apollo-e2e-tool stalled-reader ADDR NODE_ID RUN_S\n";
    return 2;
  }
  auto stub = AgentGateway::NewStub(OwnChannel(a[0]));
  const auto until = Clock::now() + std::chrono::seconds(run_s);
  int sessions = 0, ended = 0;
  while (Clock::now() < until) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(run_s + 5));
    auto stream = stub->Connect(&ctx);
    AgentMessage hello;
    hello.mutable_hello()->set_node_id(a[1]);
    hello.mutable_hello()->add_intents("noop");
    hello.mutable_hello()->set_agent_version("stalled-reader");
    CenterMessage welcome;
    if (!stream->Write(hello) || !stream->Read(&welcome) || !welcome.has_welcome()) {
      ctx.TryCancel();
      (void)stream->Finish();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    ++sessions;
    AgentMessage snapshot;
    snapshot.mutable_snapshot()->set_complete(true);
    bool alive = stream->Write(snapshot);
    // From here on nothing is read: what the center sends piles up.
    AgentMessage beat;
    beat.mutable_heartbeat();
    while (alive && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      alive = stream->Write(beat);
    }
    if (!alive) ++ended;  // the center ended it
    ctx.TryCancel();
    (void)stream->Finish();
  }
  std::cout << "{\"sessions\": " << sessions << ", \"ended\": " << ended
            << ", \"seconds\": " << run_s << "}\n";
  return 0;
}

}  // namespace apollo::e2e
