#include "apollo_bench/fleet_child.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <sstream>

#include "apollo_bench/orchestrator_process.h"
#include "core/clock.h"

namespace apollo::bench {
namespace {

// Writes all of `line` and a newline to `fd`; false if the parent is gone.
bool WriteLine(int fd, std::string line) {
  line += '\n';
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// "error <message>" on one line.
std::string ErrorLine(const std::string& message) {
  std::string flat = message;
  for (char& ch : flat) {
    if (ch == '\n') ch = ' ';
  }
  return "error " + flat;
}

// FleetCounts of the slice plus this process's threads and open files.
FleetCounts SliceCounts(const Fleet& fleet) {
  FleetCounts c = fleet.Counts();
  c.threads = ProcessThreads(getpid()).value_or(0);
  c.max_fds = ProcessOpenFiles(getpid()).value_or(0);
  c.processes = 1;
  return c;
}

// Answers commands until "quit" or EOF.
void Serve(Fleet& fleet, int out) {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string reply;
    if (line == kMark) {
      reply = "marked sessions " + std::to_string(fleet.Mark());
    } else if (line == kReport) {
      reply = FormatCounts(SliceCounts(fleet));
    } else if (line == kQuit) {
      return;
    } else {
      reply = ErrorLine("unknown command " + line);
    }
    if (!WriteLine(out, reply)) return;
  }
}

}  // namespace

void AddFleetChildOptions(CLI::App& app, bool* is_child, FleetOptions* slice) {
  app.add_flag(kFleetChildFlag, *is_child, "host one slice of a fleet (split_fleet.h)")->group("");
  app.add_option("--fleet-orchestrator", slice->orchestrator)->group("");
  app.add_option("--fleet-dir", slice->root_dir)->group("");
  app.add_option("--fleet-prefix", slice->node_prefix)->group("");
  app.add_option("--fleet-first", slice->first_index)->group("");
  app.add_option("--fleet-count", slice->agents)->group("");
  app.add_option("--fleet-max-concurrency", slice->max_concurrency)->group("");
  app.add_flag("--fleet-shared-connection", slice->shared_connection)->group("");
  app.add_option("--fleet-max-connecting", slice->max_connecting)->group("");
  app.add_option_function<int64_t>(
         "--fleet-start-timeout-ms",
         [slice](int64_t ms) { slice->start_timeout = std::chrono::milliseconds(ms); })
      ->group("");
  app.add_option_function<int64_t>(
         "--fleet-heartbeat-ms",
         [slice](int64_t ms) { slice->heartbeat_interval = std::chrono::milliseconds(ms); })
      ->group("");
  // "key=value", once per label.
  app.add_option_function<std::vector<std::string>>(
         "--fleet-label",
         [slice](const std::vector<std::string>& entries) {
           slice->labels.clear();
           for (const auto& e : entries) {
             auto eq = e.find('=');
             if (eq == std::string::npos) {
               throw CLI::ValidationError("--fleet-label", e + ": not key=value");
             }
             slice->labels[e.substr(0, eq)] = e.substr(eq + 1);
           }
         })
      ->group("");
}

std::vector<std::string> FleetChildArgs(const FleetOptions& slice) {
  std::vector<std::string> args = {kFleetChildFlag};
  auto add = [&args](const char* flag, std::string value) {
    args.push_back(flag);
    args.push_back(std::move(value));
  };
  add("--fleet-orchestrator", slice.orchestrator);
  add("--fleet-dir", slice.root_dir);
  add("--fleet-prefix", slice.node_prefix);
  add("--fleet-first", std::to_string(slice.first_index));
  add("--fleet-count", std::to_string(slice.agents));
  add("--fleet-max-concurrency", std::to_string(slice.max_concurrency));
  const auto heartbeat =
      std::chrono::duration_cast<std::chrono::milliseconds>(slice.heartbeat_interval);
  add("--fleet-heartbeat-ms", std::to_string(heartbeat.count()));
  add("--fleet-max-connecting", std::to_string(slice.max_connecting));
  const auto start_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(slice.start_timeout);
  add("--fleet-start-timeout-ms", std::to_string(start_timeout.count()));
  if (slice.shared_connection) args.push_back("--fleet-shared-connection");
  for (const auto& [key, value] : slice.labels) add("--fleet-label", key + "=" + value);
  return args;
}

int RunFleetChild(const FleetOptions& slice) {
  // The replies go to a copy of stdout; fd 1 itself now writes to stderr,
  // so that a stray print of any library cannot pass for a reply.
  const int out = dup(STDOUT_FILENO);
  if (out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 1;
  // The parent planned this slice within our limits; check, to say which
  // one is short if it did not.
  Status s = CheckProcessCapacity(slice.agents, 0, slice.shared_connection);
  if (!s.ok()) {
    WriteLine(out, ErrorLine(s.ToString()));
    return 1;
  }
  agent::HandlerConfig handlers;
  handlers.enabled_builtins = {"noop"};
  auto registry = agent::HandlerRegistry::Create(handlers);
  if (!registry.ok()) {
    WriteLine(out, ErrorLine(registry.status().ToString()));
    return 1;
  }
  RealClock clock;
  auto fleet = Fleet::Start(slice, **registry, clock);
  if (!fleet.ok()) {
    WriteLine(out, ErrorLine(fleet.status().ToString()));
    return 1;
  }
  if (WriteLine(out, "started agents " + std::to_string((*fleet)->size()))) Serve(**fleet, out);
  (*fleet)->StopAll();
  return 0;
}

Result<Reply> ParseReply(const std::string& line) {
  Reply r;
  auto space = line.find(' ');
  r.verb = line.substr(0, space);
  if (space != std::string::npos) r.text = line.substr(space + 1);
  if (r.verb == "error") return r;
  std::istringstream in(r.text);
  std::string key, value;
  while (in >> key) {
    if (!(in >> value)) return Status::InvalidArgument("'" + line + "': " + key + " has no value");
    try {
      size_t used = 0;
      r.values[key] = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      return Status::InvalidArgument("'" + line + "': " + key + " is not a number");
    }
  }
  return r;
}

std::string FormatCounts(const FleetCounts& c) {
  std::ostringstream out;
  out << "counts agents " << c.agents << " connected " << c.connected << " synced " << c.synced
      << " reconciled " << c.reconciled << " sessions " << c.sessions << " threads " << c.threads
      << " fds " << c.max_fds;
  return out.str();
}

Result<FleetCounts> CountsFromReply(const Reply& reply) {
  if (reply.verb != "counts") return Status::InvalidArgument("not a counts reply: " + reply.verb);
  for (const char* key :
       {"agents", "connected", "synced", "reconciled", "sessions", "threads", "fds"}) {
    if (!reply.values.count(key)) {
      return Status::InvalidArgument(std::string("counts without ") + key);
    }
  }
  FleetCounts c;
  c.agents = static_cast<size_t>(reply.values.at("agents"));
  c.connected = static_cast<size_t>(reply.values.at("connected"));
  c.synced = static_cast<size_t>(reply.values.at("synced"));
  c.reconciled = static_cast<size_t>(reply.values.at("reconciled"));
  c.sessions = static_cast<uint64_t>(reply.values.at("sessions"));
  c.threads = reply.values.at("threads");
  c.max_fds = reply.values.at("fds");
  c.processes = 1;
  return c;
}

}  // namespace apollo::bench
