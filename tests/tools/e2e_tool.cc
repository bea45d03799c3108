// apollo-e2e-tool: what the end-to-end scripts cannot do through the product
// itself. Not shipped; built into the bin dir next to the daemons.
//
//   apollo-e2e-tool seed-dlq STORE_URL
//       Parks two dead letters in a stopped orchestrator's store, as the bus
//       would: an ACCEPTED of task "late-task" on node "ghost-node" (seq 1,
//       unknown task) and a malformed event of the same node (seq 2). A
//       real agent only sends events of tasks it was given, so it cannot
//       produce an unknown-task event; this stages one with the store API.
//   apollo-e2e-tool delete-stream NATS_URL STREAM
//       Deletes a JetStream stream (the `nats` CLI is not installed here).
//   apollo-e2e-tool silent-streams ADDR N WAIT_S
//   apollo-e2e-tool stalled-reader ADDR NODE_ID RUN_S
//       Agent-stream peers that never say Hello / stop reading (see
//       gateway_peers.h).
//
// Exit 0 on success; otherwise one line on stderr and exit 1 (2: usage).
#include <nats/nats.h>

#include <iostream>
#include <string>
#include <vector>

#include "bus/applier.h"
#include "core/clock.h"
#include "gateway_peers.h"
#include "protocol_peers.h"
#include "store/open_store.h"

namespace {

int SeedDlq(const std::string& url) {
  apollo::RealClock clock;
  auto store = apollo::store::OpenStateStore(url, apollo::store::StoreOptions{}, clock);
  if (!store.ok()) {
    std::cerr << "apollo-e2e-tool: cannot open " << url << ": " << store.status().message()
              << "\n";
    return 1;
  }
  apollo::Event unknown;
  unknown.task_id = "late-task";
  unknown.node_id = "ghost-node";
  unknown.sequence_number = 1;
  unknown.attempt = 1;
  unknown.type = apollo::EventType::kAccepted;
  unknown.timestamp = clock.Now();
  apollo::Event malformed = unknown;
  malformed.sequence_number = 2;
  malformed.type = apollo::EventType::kProgress;
  malformed.payload = "{not json";
  std::vector<apollo::store::DeadLetter> letters(2);
  letters[0].event = unknown;
  letters[0].reason = "unknown task late-task on node ghost-node";
  letters[0].deliveries = 5;
  letters[1].event = apollo::bus::ToLetterEvent(malformed);
  letters[1].reason = "malformed: payload is not valid JSON";
  letters[1].deliveries = 5;
  for (const auto& l : letters) {
    auto id = (*store)->AddDeadLetter(l);
    if (!id.ok()) {
      std::cerr << "apollo-e2e-tool: AddDeadLetter: " << id.status().message() << "\n";
      return 1;
    }
    std::cout << *id << "\n";
  }
  return 0;
}

int DeleteStream(const std::string& url, const std::string& stream) {
  natsConnection* conn = nullptr;
  natsStatus s = natsConnection_ConnectTo(&conn, url.c_str());
  jsCtx* js = nullptr;
  if (s == NATS_OK) s = natsConnection_JetStream(&js, conn, nullptr);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  if (s == NATS_OK) s = js_DeleteStream(js, stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) {
    std::cerr << "apollo-e2e-tool: delete stream " << stream << " at " << url << ": "
              << natsStatus_GetText(s) << " (jetstream error " << static_cast<int>(jerr)
              << ")\n";
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(conn);
  return s == NATS_OK ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 2 && a[0] == "seed-dlq") return SeedDlq(a[1]);
  if (a.size() == 3 && a[0] == "delete-stream") return DeleteStream(a[1], a[2]);
  std::vector<std::string> rest(a.begin() + (a.empty() ? 0 : 1), a.end());
  if (!a.empty() && a[0] == "silent-streams") return apollo::e2e::SilentStreams(rest);
  if (!a.empty() && a[0] == "stalled-reader") return apollo::e2e::StalledReader(rest);
  if (!a.empty() && a[0] == "hello") return apollo::e2e::SayHello(rest);
  if (!a.empty() && a[0] == "fake-center") return apollo::e2e::FakeCenter(rest);
  std::cerr << "usage: apollo-e2e-tool seed-dlq STORE_URL | delete-stream NATS_URL STREAM |\n"
               "       silent-streams ADDR N WAIT_S | stalled-reader ADDR NODE_ID RUN_S |\n"
               "       hello ADDR NODE_ID PROTOCOL | fake-center PORT (welcome:N|refuse) RUN_S\n";
  return 2;
}
