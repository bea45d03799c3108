// bus_bench: events/s through publish -> consume -> store for each EventBus
// backend, against the store alone on the same workload (issue 7; target:
// the bus never halves the store's throughput).
//
// Workload: `agents` publisher threads, one node each, each publishing
// batches of `batch` events (ACCEPTED then SUCCEEDED for batch/2 tasks) and
// waiting for each batch's commit before the next, as a gateway session does
// (back-pressure: it reads the agent's next batch after the commit). A fresh
// SQLite store (synchronous=FULL) per backend. Two fleet sizes by default: 8
// publishers (a closed loop this small is bound by each batch's latency, not
// by anyone's throughput) and 64 (enough batches in flight to saturate the
// store: throughput).
//
// usage: bus_bench [--agents N[,N...]] [--tasks-per-agent N] [--batch N]
//                  [--partitions N] [--only embedded|nats|store] [--rounds N]
// --tasks-per-agent defaults to 2000 for 8 publishers or fewer, else
// 32000 / publishers (at least 125).
// Prints, per fleet size and round (the cases of a round run back to back,
// so a ratio compares runs seconds apart on a machine whose load swings):
//   store publishers=8 events_per_s=...
//   bus=embedded publishers=8 events_per_s=... ratio_to_store=...
//   bus=nats publishers=8 events_per_s=... ratio_to_store=...
// and with --rounds > 1 a closing line per bus and fleet size with the
// median and the lowest of its per-round ratios:
//   summary bus=embedded publishers=8 rounds=N median_ratio=... min_ratio=...
// The NATS case starts its own nats-server -js on a free loopback port.
#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bus/open_bus.h"
#include "bus/testing/nats_server.h"
#include "core/clock.h"
#include "store/open_store.h"

namespace apollo::bus {
namespace {

using Steady = std::chrono::steady_clock;

struct Args {
  std::vector<int> fleets = {8, 64};  // --agents
  int agents = 8;                     // the fleet being run
  int tasks_per_agent = 0;            // 0: by fleet size (see usage)
  int batch = 100;
  int partitions = 16;
  int rounds = 1;
  std::string only;
};

std::string Task(int a, int t) { return "a" + std::to_string(a) + "-t" + std::to_string(t); }
std::string Node(int a) { return "node-" + std::to_string(a); }

std::vector<std::vector<Event>> Batches(const Args& args, int a) {
  std::vector<std::vector<Event>> out;
  uint64_t seq = 0;
  const int per = std::max(1, args.batch / 2);
  for (int t0 = 0; t0 < args.tasks_per_agent; t0 += per) {
    std::vector<Event> b;
    for (EventType type : {EventType::kAccepted, EventType::kSucceeded}) {
      for (int t = t0; t < std::min(t0 + per, args.tasks_per_agent); ++t) {
        Event e;
        e.task_id = Task(a, t);
        e.node_id = Node(a);
        e.sequence_number = ++seq;
        e.attempt = 1;
        e.type = type;
        e.payload = "{}";
        b.push_back(std::move(e));
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

bool Prepare(store::StateStore& s, const Args& args, const Clock& clock) {
  for (int a = 0; a < args.agents; ++a) {
    std::vector<store::NewTask> tasks;
    std::vector<store::TransitionRequest> dispatch;
    for (int t = 0; t < args.tasks_per_agent; ++t) {
      TaskSpec spec;
      spec.task_id = Task(a, t);
      spec.intent = "collect_metrics";
      spec.target_selector.type = SelectorType::kNodes;
      spec.target_selector.nodes = {Node(a)};
      spec.timeout = std::chrono::seconds(3600);
      tasks.push_back({spec, {Node(a)}});
      store::TransitionRequest r;
      r.task_id = spec.task_id;
      r.node_id = Node(a);
      r.to = TaskState::kDispatched;
      r.cause = store::Cause::kDispatch;
      r.ack_deadline = clock.Now() + std::chrono::seconds(3600);
      dispatch.push_back(std::move(r));
    }
    if (!s.CreateTasks(tasks).ok() || !s.Transition(dispatch).ok()) return false;
  }
  return true;
}

// Runs the agents; `send` publishes one batch and waits. Returns events/s.
template <typename Send>
double Drive(const Args& args, Send send) {
  std::vector<std::vector<std::vector<Event>>> work;
  size_t events = 0;
  for (int a = 0; a < args.agents; ++a) {
    work.push_back(Batches(args, a));
    for (auto& b : work.back()) events += b.size();
  }
  std::atomic<bool> failed{false};
  Steady::time_point start = Steady::now();
  std::vector<std::thread> threads;
  for (int a = 0; a < args.agents; ++a) {
    threads.emplace_back([&, a] {
      for (auto& b : work[a]) {
        if (!send(Node(a), std::move(b))) failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(Steady::now() - start).count();
  if (failed) std::fprintf(stderr, "bus_bench: some batches failed\n");
  return static_cast<double>(events) / secs;
}

Result<double> RunCase(const Args& args, const std::string& dir, const std::string& bus_url) {
  RealClock clock;
  auto s = store::OpenStateStore("sqlite://" + dir + "/bench.db", {}, clock);
  if (!s.ok()) return s.status();
  if (!Prepare(**s, args, clock)) return Status::Internal("cannot create the tasks");
  if (bus_url.empty()) {
    return Drive(args, [&](const std::string&, std::vector<Event> b) {
      return (*s)->Apply(std::move(b)).ok();
    });
  }
  BusOptions o;
  o.partitions = args.partitions;
  auto bus = OpenEventBus(bus_url, o, **s, clock);
  if (!bus.ok()) return bus.status();
  APOLLO_RETURN_IF_ERROR((*bus)->Start());
  double r = Drive(args, [&](const std::string& node, std::vector<Event> b) {
    Result<PublishAck> ack = (*bus)->Publish(node, std::move(b)).get();
    if (!ack.ok()) std::fprintf(stderr, "publish: %s\n", ack.status().ToString().c_str());
    return ack.ok();
  });
  (*bus)->Stop();
  return r;
}

int Main(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--agents") {
      args.fleets.clear();
      for (size_t at = 0; at <= v.size();) {
        size_t comma = v.find(',', at);
        if (comma == std::string::npos) comma = v.size();
        int n = std::atoi(v.substr(at, comma - at).c_str());
        if (n < 1) return std::fprintf(stderr, "bus_bench: bad --agents %s\n", v.c_str()), 2;
        args.fleets.push_back(n);
        at = comma + 1;
      }
    }
    else if (k == "--tasks-per-agent") args.tasks_per_agent = std::atoi(v.c_str());
    else if (k == "--batch") args.batch = std::atoi(v.c_str());
    else if (k == "--only") args.only = v;
    else if (k == "--partitions") args.partitions = std::atoi(v.c_str());
    else if (k == "--rounds") args.rounds = std::max(1, std::atoi(v.c_str()));
  }
  std::string root = std::filesystem::temp_directory_path() / ("bus-bench-" + std::to_string(getpid()));
  auto fresh = [&](const std::string& name) {
    std::string d = root + "/" + name;
    std::filesystem::create_directories(d);
    return d;
  };
  int rc = 0;
  // (bus, publishers) -> per-round ratio
  std::map<std::pair<std::string, int>, std::vector<double>> ratios;
  const int tasks_given = args.tasks_per_agent;
  for (int fleet : args.fleets) {
    args.agents = fleet;
    args.tasks_per_agent =
        tasks_given > 0 ? tasks_given : (fleet <= 8 ? 2000 : std::max(125, 32000 / fleet));
    const std::string who = "publishers=" + std::to_string(fleet);
    for (int round = 0; round < args.rounds; ++round) {
      if (args.rounds > 1) std::printf("round %d %s\n", round + 1, who.c_str());
      const std::string tag = "p" + std::to_string(fleet) + "-r" + std::to_string(round);
      double store_rate = 0;
      if (args.only.empty() || args.only == "store") {
        Result<double> r = RunCase(args, fresh(tag + "-store"), "");
        if (!r.ok()) return std::fprintf(stderr, "store: %s\n", r.status().ToString().c_str()), 1;
        store_rate = *r;
        std::printf("store %s events_per_s=%.0f\n", who.c_str(), store_rate);
        std::fflush(stdout);
      }
      auto report = [&](const char* name, Result<double> r) {
        if (!r.ok()) {
          std::fprintf(stderr, "bus=%s: %s\n", name, r.status().ToString().c_str());
          rc = 1;
          return;
        }
        std::printf("bus=%s %s events_per_s=%.0f", name, who.c_str(), *r);
        if (store_rate > 0) {
          std::printf(" ratio_to_store=%.2f", *r / store_rate);
          ratios[{name, fleet}].push_back(*r / store_rate);
        }
        std::printf("\n");
        std::fflush(stdout);
      };
      if (args.only.empty() || args.only == "embedded") {
        report("embedded", RunCase(args, fresh(tag + "-embedded"), "embedded"));
      }
      if (args.only.empty() || args.only == "nats") {
        std::string d = fresh(tag + "-nats");
        testing::NatsServer server(d);
        Status st = server.Start();
        if (!st.ok()) {
          report("nats", st);
        } else {
          report("nats", RunCase(args, d, server.url()));
        }
      }
    }
  }
  if (args.rounds > 1) {
    for (auto& [key, v] : ratios) {
      std::sort(v.begin(), v.end());
      double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      std::printf("summary bus=%s publishers=%d rounds=%zu median_ratio=%.2f min_ratio=%.2f\n",
                  key.first.c_str(), key.second, v.size(), median, v.front());
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return rc;
}

}  // namespace
}  // namespace apollo::bus

int main(int argc, char** argv) { return apollo::bus::Main(argc, argv); }
