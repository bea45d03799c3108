// Writes the seed corpus of agent_session_fuzz (fuzz/corpus/agent_session):
// real encodings of what agents send, in the fuzzer's input format (byte 0:
// the peer, then 2-byte little-endian length + AgentMessage frames).
//
//   build/fuzz/fuzz/agent_session_seeds fuzz/corpus/agent_session
//
// The tasks they name (t-1 .. t-4) and nodes (edge-1: the TLS world's
// certified node; edge-9: a node of the TLS-off world; victim-node) are
// the ones agent_session_fuzz creates.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apollo/v1/agent.pb.h"

namespace {

using apollo::v1::AgentMessage;

enum Peer : uint8_t { kTlsEdge1 = 0, kTlsNoNode = 1, kNoTls = 2 };

AgentMessage Hello(const std::string& node, bool conservative = false) {
  AgentMessage m;
  auto* h = m.mutable_hello();
  h->set_node_id(node);
  (*h->mutable_labels())["role"] = "worker";
  h->add_groups("canary");
  h->add_intents("noop");
  h->add_intents("exec");
  h->add_disabled_intents("ensure_file");
  h->set_agent_version("0.1.0");
  h->set_durable_seq(3);
  h->set_acked_seq(1);
  if (conservative) h->set_mode(apollo::v1::AGENT_MODE_CONSERVATIVE);
  return m;
}

struct Ev {
  Ev(std::string task, apollo::v1::EventType type, uint64_t seq, uint32_t attempt = 1,
     std::string payload = "", std::string node = "")
      : task(std::move(task)),
        type(type),
        seq(seq),
        attempt(attempt),
        payload(std::move(payload)),
        node(std::move(node)) {}
  std::string task;
  apollo::v1::EventType type;
  uint64_t seq;
  uint32_t attempt;
  std::string payload;
  std::string node;  // empty: the batch's node; "-": no node id
};

AgentMessage Events(const std::string& node, const std::vector<Ev>& evs) {
  AgentMessage m;
  for (const Ev& e : evs) {
    auto* pb = m.mutable_events()->add_events();
    const std::string& n = e.node.empty() ? node : e.node;
    pb->set_event_id(n + "-" + std::to_string(e.seq));
    pb->set_task_id(e.task);
    pb->set_node_id(n == "-" ? "" : n);
    pb->set_event_type(e.type);
    pb->set_timestamp_us(1'700'000'000'000'000);
    pb->set_payload(e.payload);
    pb->set_sequence_number(e.seq);
    pb->set_attempt(e.attempt);
  }
  return m;
}

AgentMessage Heartbeat(bool conservative = false) {
  AgentMessage m;
  auto* r = m.mutable_heartbeat()->add_running();
  r->set_task_id("t-1");
  r->set_attempt(1);
  r->set_progress(0.5);
  m.mutable_heartbeat()->set_queued(2);
  m.mutable_heartbeat()->set_load1(0.7);
  m.mutable_heartbeat()->set_timestamp_us(1'700'000'000'000'000);
  if (conservative) m.mutable_heartbeat()->set_mode(apollo::v1::AGENT_MODE_CONSERVATIVE);
  return m;
}

struct Entry {
  std::string task;
  uint32_t attempt;
  std::string status;
  uint64_t last_seq;
};

AgentMessage Snapshot(const std::vector<Entry>& entries, uint64_t durable, bool complete = true) {
  AgentMessage m;
  for (const Entry& e : entries) {
    auto* t = m.mutable_snapshot()->add_tasks();
    t->set_task_id(e.task);
    t->set_attempt(e.attempt);
    t->set_status(e.status);
    t->set_last_seq(e.last_seq);
    if (e.status == "SUCCEEDED") t->set_result_json(R"({"ok":true})");
  }
  m.mutable_snapshot()->set_durable_seq(durable);
  m.mutable_snapshot()->set_complete(complete);
  return m;
}

AgentMessage Progress(const std::string& task, bool running) {
  AgentMessage m;
  auto* p = m.mutable_progress();
  p->set_task_id(task);
  p->set_attempt(1);
  p->set_running(running);
  p->set_fraction(0.25);
  p->set_message("a quarter");
  p->set_last_progress_us(1'700'000'000'000'000);
  return m;
}

bool Write(const std::string& dir, const std::string& name, Peer peer,
           const std::vector<AgentMessage>& msgs) {
  std::string out(1, static_cast<char>(peer));
  for (const AgentMessage& m : msgs) {
    std::string bytes = m.SerializeAsString();
    out.push_back(static_cast<char>(bytes.size() & 0xff));
    out.push_back(static_cast<char>(bytes.size() >> 8));
    out += bytes;
  }
  std::ofstream f(dir + "/" + name, std::ios::binary);
  f << out;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  using apollo::v1::EventType;
  const std::string dir = argv[1];
  const std::string ok = R"({"ok":true})";
  const std::string err = R"({"error":"exit 1","kind":"transient"})";
  const auto RUN = EventType::ACCEPTED, PROG = EventType::PROGRESS, DONE = EventType::SUCCEEDED,
             FAIL = EventType::FAILED;
  bool good = true;
  auto put = [&](const std::string& name, Peer peer, const std::vector<AgentMessage>& msgs) {
    good = Write(dir, name, peer, msgs) && good;
  };
  // The session in its documented order: Hello, backlog, snapshot, heartbeats.
  put("session_tls.bin", kTlsEdge1,
      {Hello("edge-1"),
       Events(
           "edge-1",
           {{"t-1", RUN, 1}, {"t-1", PROG, 2, 1, R"({"progress":0.5})"}, {"t-1", DONE, 3, 1, ok}}),
       Snapshot({{"t-1", 1, "SUCCEEDED", 3}, {"t-2", 1, "RUNNING", 4}}, 4), Heartbeat(),
       Progress("t-2", true)});
  put("session_open.bin", kNoTls,
      {Hello("edge-9"), Snapshot({}, 0),
       Events("edge-9", {{"t-2", RUN, 1}, {"t-2", FAIL, 2, 1, err}}), Heartbeat(),
       Progress("t-2", false)});
  put("hello_only.bin", kTlsEdge1, {Hello("edge-1")});
  put("hello_conservative.bin", kNoTls, {Hello("edge-9", true), Heartbeat(true)});
  put("hello_empty_node.bin", kNoTls, {Hello("")});
  put("hello_twice.bin", kNoTls, {Hello("edge-9"), Hello("edge-9")});
  put("no_hello_first.bin", kNoTls, {Events("edge-9", {{"t-1", RUN, 1}}), Hello("edge-9")});
  put("heartbeat_first.bin", kTlsEdge1, {Heartbeat()});
  // Impersonation: a certificate for edge-1 saying Hello as the victim.
  put("impersonate_victim.bin", kTlsEdge1,
      {Hello("victim-node"), Events("victim-node", {{"t-3", DONE, 1, 1, ok}})});
  put("cert_names_no_node.bin", kTlsNoNode, {Hello("edge-1")});
  // A node writing another node's event, with and without TLS.
  put("foreign_event_tls.bin", kTlsEdge1,
      {Hello("edge-1"),
       Events("edge-1", {{"t-1", RUN, 1}, {"t-1", DONE, 2, 1, ok, "victim-node"}})});
  put("foreign_event_open.bin", kNoTls,
      {Hello("edge-9"), Events("edge-9", {{"t-1", DONE, 1, 1, ok, "edge-1"}})});
  // Malformed and odd events: no node id, unknown type, stale attempt,
  // duplicate and out-of-order sequence numbers, unknown task, bad payload.
  put("odd_events.bin", kNoTls,
      {Hello("edge-9"), Events("edge-9", {{"t-1", RUN, 5, 1, "", "-"},
                                          {"t-1", static_cast<EventType>(99), 6},
                                          {"t-2", RUN, 7, 9},
                                          {"t-2", RUN, 7},
                                          {"t-2", DONE, 3, 1, "not json"},
                                          {"t-unknown", RUN, 8},
                                          {"t-4", RUN, 9},
                                          {"t-1", EventType::CANCELLED, 10},
                                          {"t-1", EventType::REJECTED, 11, 1, err},
                                          {"t-1", EventType::ALREADY_DONE, 12},
                                          {"t-1", EventType::TIMEOUT, 0}})});
  // The snapshot disagrees with the store: reconcile repairs and alerts.
  put("snapshot_drift.bin", kTlsEdge1,
      {Hello("edge-1"), Snapshot({{"t-1", 1, "RUNNING", 9},
                                  {"t-2", 2, "FAILED", 10},
                                  {"t-9", 1, "RUNNING", 11},
                                  {"t-4", 1, "BOGUS", 12}},
                                 12, false)});
  put("many_batches.bin", kTlsEdge1,
      {Hello("edge-1"), Events("edge-1", {{"t-2", RUN, 1}}), Events("edge-1", {{"t-2", PROG, 2}}),
       Events("edge-1", {{"t-2", DONE, 3, 1, ok}}), Events("edge-1", {{"t-4", RUN, 4}}),
       Snapshot({{"t-2", 1, "SUCCEEDED", 3}}, 4), Heartbeat()});
  if (!good) {
    std::fprintf(stderr, "cannot write the seeds into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
