#include "cli/dlq_command.h"

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/table.h"

namespace apollo::cli {
namespace {

// The event JSON the server sent; kept as a string if it does not parse.
nlohmann::json EventOf(const v1::DeadLetter& d) {
  nlohmann::json j = nlohmann::json::parse(d.event_json(), nullptr, false);
  if (j.is_discarded()) return d.event_json();
  return j;
}

std::string Id(int64_t id) { return std::to_string(id); }

}  // namespace

nlohmann::json DeadLetterToJson(const v1::DeadLetter& d) {
  return {{"id", d.id()},
          {"event_id", d.event_id()},
          {"task_id", d.task_id()},
          {"node_id", d.node_id()},
          {"sequence_number", d.sequence_number()},
          {"event_type", d.event_type()},
          {"reason", d.reason()},
          {"deliveries", d.deliveries()},
          {"parked_at", d.parked_at_us() == 0 ? nlohmann::json(nullptr)
                                              : nlohmann::json(FormatMicros(d.parked_at_us()))},
          {"event", EventOf(d)}};
}

std::string DeadLettersText(const v1::ListDeadLettersResponse& resp) {
  if (resp.letters_size() == 0) {
    return "no dead letters: every event the bus received was applied\n";
  }
  std::vector<TableRow> rows{
      {"ID", "EVENT", "TASK", "NODE", "TYPE", "DELIVERIES", "PARKED_AT", "REASON"}};
  for (const auto& d : resp.letters()) {
    rows.push_back({Id(d.id()), d.event_id(), d.task_id(), d.node_id(), d.event_type(),
                    std::to_string(d.deliveries()), FormatMicros(d.parked_at_us()),
                    d.reason()});
  }
  std::string out = RenderTable(rows);
  if (resp.more()) {
    out += "more letters: apollo-cli dlq list --after " +
           Id(resp.letters(resp.letters_size() - 1).id()) + "\n";
  }
  out += "the agents keep these events until each is replayed (apollo-cli dlq replay ID, "
         "after fixing the cause) or dropped (apollo-cli dlq drop ID)\n";
  return out;
}

std::string DeadLetterText(const v1::DeadLetter& d) {
  std::string out;
  out += "dead letter " + Id(d.id()) + "\n";
  out += "event:      " + OneLine(d.event_id()) + " (" + OneLine(d.event_type()) + ", seq " +
         std::to_string(d.sequence_number()) + ")\n";
  out += "task:       " + OneLine(d.task_id()) + "\n";
  out += "node:       " + OneLine(d.node_id()) + "\n";
  out += "reason:     " + OneLine(d.reason()) + "\n";
  out += "deliveries: " + std::to_string(d.deliveries()) + "\n";
  out += "parked at:  " + FormatMicros(d.parked_at_us()) + "\n";
  nlohmann::json ev = EventOf(d);
  out += "event JSON:\n" +
         (ev.is_string() ? OneLine(ev.get<std::string>()) + "\n" : DumpJson(ev));
  out += "next: fix the cause, then apollo-cli dlq replay " + Id(d.id()) +
         "; or give up with apollo-cli dlq drop " + Id(d.id()) + "\n";
  return out;
}

int RunDlqList(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err) {
  auto resp = client.ListDeadLetters(opts.after, opts.limit);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json letters = nlohmann::json::array();
    for (const auto& d : resp->letters()) letters.push_back(DeadLetterToJson(d));
    out << DumpJson({{"letters", letters}, {"more", resp->more()}});
  } else {
    out << DeadLettersText(*resp);
  }
  return kExitOk;
}

int RunDlqShow(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err) {
  auto resp = client.GetDeadLetter(opts.id);
  if (!resp.ok()) return ReportError(resp.status(), err);
  out << (global.json() ? DumpJson(DeadLetterToJson(*resp)) : DeadLetterText(*resp));
  return kExitOk;
}

int RunDlqReplay(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
                 std::ostream& out, std::ostream& err) {
  if (opts.all == (opts.id != 0)) {
    err << "apollo-cli: dlq replay: give either a letter ID or --all\n";
    return kExitUsage;
  }
  v1::ReplayDeadLettersRequest req;
  req.set_id(opts.id);
  req.set_all(opts.all);
  auto resp = client.ReplayDeadLetters(req);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    nlohmann::json j = {{"replayed", resp->replayed()}, {"remaining", resp->remaining()}};
    if (!opts.all) j["id"] = opts.id;
    out << DumpJson(j);
    return kExitOk;
  }
  if (opts.all) {
    out << "replayed " << resp->replayed() << " dead letter(s); " << resp->remaining()
        << " left"
        << (resp->remaining() > 0 ? " (still cannot be applied: see apollo-cli dlq list)" : "")
        << "\n";
  } else {
    out << "dead letter " << opts.id << " replayed: its event is applied; "
        << resp->remaining() << " letter(s) left\n";
  }
  return kExitOk;
}

int RunDlqDrop(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err) {
  auto resp = client.DropDeadLetter(opts.id);
  if (!resp.ok()) return ReportError(resp.status(), err);
  if (global.json()) {
    out << DumpJson({{"id", opts.id}, {"dropped", true}});
  } else {
    out << "dead letter " << opts.id
        << " dropped: its event is recorded as is (malformed / unknown, with an alert) and "
           "the agent can forget it\n";
  }
  return kExitOk;
}

}  // namespace apollo::cli
