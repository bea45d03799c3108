// Fuzzes what an agent sends the center: any bytes become a stream of
// apollo.v1.AgentMessage (Hello, EventBatch, Heartbeat, Snapshot,
// ProgressReply) played on one AgentGateway.Connect stream, served by the
// real AgentSession reactor (over gRPC's in-process transport: no socket),
// into the real Orchestrator over a real SQLite store in a temp dir. Never a
// crash, a hang or a leak; the invariants below abort when broken.
//
// Input: byte 0 picks what the transport proved about the peer (kPeers);
// then frames, each a 2-byte little-endian length and that many bytes (fewer
// at the end) holding one AgentMessage in protobuf binary. A frame that does
// not parse is skipped; at most kMaxMessages are sent. The seed corpus
// (fuzz/corpus/agent_session) is written by agent_session_seeds.
//
// The center outlives the inputs (opening a store per input would be most
// of the time), so an input may meet rows and sequence numbers left by
// earlier ones; it is rebuilt every kInputsPerWorld inputs to bound that.
// Two centers: one with TLS on, where a node "victim-node" has rows but no
// peer may ever speak for it, and one with TLS off (any Hello is accepted).
//
// Leaks: every input leaves state in the center, so libFuzzer's check after
// each input (which reruns it and scans the heap whenever it allocated more
// than it freed) would flag them all and take most of the time; `make fuzz`
// runs this target with -detect_leaks=0. Instead the process tears the
// centers down at exit (and every kInputsPerWorld inputs) and then runs
// LeakSanitizer over the whole run: what a session, the orchestrator or the
// store lost is reported there.
//
// Invariants, besides checking_host.h's:
//  - the first reply is Welcome, and only after an accepted Hello;
//  - EventAck only after an EventBatch, never decreasing on a stream, and
//    never above the highest sequence number this center was ever sent for
//    the node (nor is Welcome's stored_seq): nothing is acknowledged that
//    was not received;
//  - SnapshotAck only after a Snapshot;
//  - PERMISSION_DENIED exactly when the session raised a refusal;
//  - with TLS on, victim-node's rows stay PENDING at attempt 0, its
//    sequence stays 0 and it stays unregistered: no input writes for it.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <sanitizer/lsan_interface.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apollo/v1/agent.grpc.pb.h"
#include "checking_host.h"
#include "core/clock.h"
#include "orchestrator/agent_session.h"
#include "orchestrator/orchestrator.h"
#include "store/open_store.h"

namespace apollo::fuzz {
namespace {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;
using orchestrator::PeerIdentity;

constexpr int kMaxMessages = 64;
constexpr int kInputsPerWorld = 5000;
constexpr char kVictim[] = "victim-node";

PeerIdentity PeerFor(uint8_t b) {
  PeerIdentity p;
  p.peer = "fuzz";
  switch (b % 3) {
    case 0:  // TLS, a node certificate for edge-1
      p.checked = true;
      p.node_id = "edge-1";
      break;
    case 1:  // TLS, a certificate that names no node
      p.checked = true;
      p.problem = "the certificate names no node";
      break;
    default:
      break;  // TLS off
  }
  return p;
}

struct Input {
  PeerIdentity peer;
  std::vector<AgentMessage> messages;
};

Input Decode(const uint8_t* data, size_t size) {
  Input in;
  if (size == 0) return in;
  in.peer = PeerFor(data[0]);
  size_t at = 1;
  google::protobuf::LogSilencer quiet;  // a frame of invalid UTF-8 is logged, then skipped
  while (at + 2 <= size && in.messages.size() < size_t{kMaxMessages}) {
    size_t len = data[at] | (size_t{data[at + 1]} << 8);
    at += 2;
    len = std::min(len, size - at);
    AgentMessage m;
    if (m.ParseFromArray(data + at, static_cast<int>(len))) in.messages.push_back(std::move(m));
    at += len;
  }
  return in;
}

std::string TempRoot() {
  // tmpfs when there is one: the store's fsyncs cost nothing there.
  return ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

// One center: a store in its own temp dir, the Orchestrator, the checks.
struct World {
  explicit World(bool tls) : tls(tls) {
    std::string tmpl = TempRoot() + "/apollo-session-fuzz-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) Violated("mkdtemp failed");
    dir = tmpl;
    store::StoreOptions so;
    so.sqlite_synchronous = "NORMAL";
    so.reader_connections = 2;
    so.cache_kib = 1024;
    auto s = store::OpenStateStore("sqlite://" + dir + "/apollo.db", so, clock);
    if (!s.ok()) Violated("cannot open the store: " + s.status().message());
    store = std::move(*s);
    CreateTasks();
    orchestrator::OrchestratorOptions o;
    o.default_start_timeout = std::chrono::seconds(0);
    orch = std::make_unique<orchestrator::Orchestrator>(o, *store, clock);
    host = std::make_unique<CheckingHost>(*orch);
    orch->Start();
  }
  ~World() {
    orch->Stop();
    host.reset();
    orch.reset();
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  // Rows for the nodes the seeds speak as (edge-1, edge-9) and for the
  // victim; t-4 waits for t-1 (a dependency edge).
  void CreateTasks() {
    auto task = [](std::string id, std::vector<std::string> nodes,
                   std::vector<std::string> deps = {}) {
      store::NewTask t;
      t.spec.task_id = id;
      t.spec.intent = "noop";
      t.spec.target_selector.nodes = nodes;
      t.spec.timeout = std::chrono::seconds(30);
      t.spec.depends_on = std::move(deps);
      t.node_ids = std::move(nodes);
      return t;
    };
    std::vector<store::NewTask> tasks = {task("t-1", {"edge-1", "edge-9", kVictim}),
                                         task("t-2", {"edge-1", "edge-9"}), task("t-3", {kVictim}),
                                         task("t-4", {"edge-1"}, {"t-1"})};
    if (auto r = store->CreateTasks(tasks); !r.ok()) {
      Violated("cannot create the tasks: " + r.status().message());
    }
  }

  // TLS on: nobody could speak for the victim, so nothing of it moved
  // except the dispatcher noting why its rows wait.
  void CheckVictim() {
    auto rows = store->ListNodeTasks(kVictim, 100);
    if (!rows.ok() || rows->size() != 2) Violated("victim rows unreadable");
    for (const auto& r : *rows) {
      if (r.state != TaskState::kPending || r.attempt != 0 || !r.last_error.empty() ||
          !r.result.empty()) {
        Violated("victim row " + r.task_id + " changed: " + std::string(TaskStateName(r.state)) +
                 " attempt " + std::to_string(r.attempt));
      }
    }
    auto seq = store->HighestStoredSeq(kVictim);
    if (!seq.ok() || *seq != 0) Violated("victim sequence moved");
    auto nodes = store->ListNodes();
    if (!nodes.ok()) Violated("nodes unreadable");
    for (const auto& n : *nodes) {
      if (n.node_id == kVictim && n.registered) Violated("victim registered");
    }
  }

  const bool tls;
  ManualClock clock;
  std::string dir;
  std::unique_ptr<store::StateStore> store;
  std::unique_ptr<orchestrator::Orchestrator> orch;
  std::unique_ptr<CheckingHost> host;
  // Per node: the highest sequence number any stream of this center sent
  // in an EventBatch (any event of the batch: an over-estimate is safe).
  std::map<std::string, uint64_t> max_seq_sent;
  int inputs = 0;
};

// AgentGateway as the orchestrator serves it (gateway_service.h), except
// that the peer's identity is the input's, not a TLS handshake's.
class FuzzGateway final : public apollo::v1::AgentGateway::CallbackService {
 public:
  void Route(orchestrator::SessionHost* host, PeerIdentity peer) {
    std::lock_guard<std::mutex> lock(mu_);
    host_ = host;
    peer_ = std::move(peer);
  }
  grpc::ServerBidiReactor<AgentMessage, CenterMessage>* Connect(
      grpc::CallbackServerContext* ctx) override {
    std::lock_guard<std::mutex> lock(mu_);
    orchestrator::SessionBounds bounds;
    bounds.max_outbound_bytes = 1 << 20;  // the cut-off path too
    // Deletes itself in OnDone.
    return new orchestrator::AgentSession(*host_, peer_, ctx, std::move(bounds));
  }

 private:
  std::mutex mu_;
  orchestrator::SessionHost* host_ = nullptr;  // guarded by mu_
  PeerIdentity peer_;                          // guarded by mu_
};

class Fuzzer {
 public:
  Fuzzer() {
    grpc::ServerBuilder builder;
    builder.RegisterService(&gateway_);
    server_ = builder.BuildAndStart();
    if (!server_) Violated("cannot start the in-process server");
    stub_ = apollo::v1::AgentGateway::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  // Orderly, before the libraries' static destructors (atexit); then the
  // leak check of the whole run (see the header).
  void Shutdown() {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    tls_world_.reset();
    open_world_.reset();
    __lsan_do_leak_check();
  }

  void Run(const Input& in) {
    World& w = WorldFor(in.peer.checked);
    w.host->BeginStream(in.peer);
    gateway_.Route(w.host.get(), in.peer);
    PlayStream(w, in);
    if (!w.host->WaitStreamSettled()) Violated("the session never settled (hang)");
    if (w.tls) w.CheckVictim();
    w.clock.Advance(std::chrono::seconds(1));
  }

 private:
  World& WorldFor(bool tls) {
    auto& w = tls ? tls_world_ : open_world_;
    if (w && ++w->inputs >= kInputsPerWorld) w.reset();
    if (!w) w = std::make_unique<World>(tls);
    return *w;
  }

  void PlayStream(World& w, const Input& in) {
    // The node the session will be, if its Hello is accepted.
    std::string node;
    if (!in.messages.empty() && in.messages[0].has_hello()) node = in.messages[0].hello().node_id();
    bool sent_events = false, sent_snapshot = false;
    for (const AgentMessage& m : in.messages) {
      sent_events |= m.has_events();
      sent_snapshot |= m.has_snapshot();
      for (const auto& e : m.events().events()) {
        uint64_t& max = w.max_seq_sent[node];
        max = std::max(max, e.sequence_number());
      }
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto stream = stub_->Connect(&ctx);
    // Read while writing, as an agent does: over the in-process transport a
    // write waits for the center to take it, and one that ended the stream
    // never will until the client reads the end.
    std::vector<CenterMessage> replies;
    std::thread reader([&] {
      CenterMessage m;
      while (stream->Read(&m)) replies.push_back(m);
    });
    for (const AgentMessage& m : in.messages) {
      if (!stream->Write(m)) break;  // the center ended the stream
    }
    stream->WritesDone();
    reader.join();
    grpc::Status st = stream->Finish();
    if (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) Violated("the stream hung");
    CheckReplies(w.max_seq_sent.count(node) ? w.max_seq_sent[node] : 0, replies, sent_events,
                 sent_snapshot);
    const bool refused = !w.host->record().refusals.empty();
    if (refused != (st.error_code() == grpc::StatusCode::PERMISSION_DENIED)) {
      Violated("status " + std::to_string(st.error_code()) + " (" + st.error_message() + ") with " +
               std::to_string(w.host->record().refusals.size()) + " refusals");
    }
  }

  // `max_sent`: the highest sequence number the session's node ever sent.
  static void CheckReplies(uint64_t max_sent, const std::vector<CenterMessage>& replies,
                           bool sent_events, bool sent_snapshot) {
    uint64_t last_ack = 0;
    for (size_t i = 0; i < replies.size(); ++i) {
      const CenterMessage& m = replies[i];
      if ((i == 0) != m.has_welcome()) Violated("Welcome is not the first reply, or sent twice");
      if (m.has_welcome() && m.welcome().stored_seq() > max_sent) {
        Violated("Welcome stored_seq " + std::to_string(m.welcome().stored_seq()) +
                 " above anything sent (" + std::to_string(max_sent) + ")");
      }
      if (m.has_ack()) {
        const uint64_t a = m.ack().acked_seq();
        if (!sent_events) Violated("EventAck without an EventBatch");
        if (a < last_ack) Violated("EventAck went back");
        if (a > max_sent) Violated("EventAck above anything sent");
        last_ack = a;
      }
      if (m.has_snapshot_ack() && !sent_snapshot) Violated("SnapshotAck without a Snapshot");
    }
  }

  FuzzGateway gateway_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<apollo::v1::AgentGateway::Stub> stub_;
  std::unique_ptr<World> tls_world_;
  std::unique_ptr<World> open_world_;
};

Fuzzer* fuzzer = nullptr;  // the process's; built by the first input

}  // namespace
}  // namespace apollo::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using apollo::fuzz::fuzzer;
  if (fuzzer == nullptr) {
    fuzzer = new apollo::fuzz::Fuzzer();
    std::atexit([] { fuzzer->Shutdown(); });
  }
  fuzzer->Run(apollo::fuzz::Decode(data, size));
  return 0;
}
