// store_bench: events applied per second through StateStore::Apply, each
// event a real transition (dedup check, state machine, CAS, history), and
// the commit latency of each Apply call.
//
// usage: store_bench [--url URL] [--events N] [--cases LIST] [--sync FULL|NORMAL]
//   URL may contain "{case}", replaced per case so each starts empty
//   (default: sqlite://<temp dir>/bench-{case}.db, removed afterwards).
//   LIST: comma-separated batch:inflight pairs (default 1:1,100:1,1000:1,1:16,100:4).
//   inflight > 1 keeps that many Apply calls in flight from one thread, so
//   group commit merges them.
// Prints one line per case:
//   store=sqlite batch=100 events_per_s=... p50_ms=... p99_ms=... inflight=1 events=...
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "core/clock.h"
#include "store/open_store.h"

namespace apollo::store {
namespace {

using Steady = std::chrono::steady_clock;
constexpr int kNodes = 10;
constexpr int kChunk = 1000;

struct Case {
  int batch = 100;
  int inflight = 1;
};

struct Args {
  std::string url;
  long events = 0;  // 0: per-case default
  std::string sync = "FULL";
  int cache_kib = 0;  // 0: StoreOptions' default
  int bg_checkpoint = 1;
  std::vector<Case> cases = {{1, 1}, {100, 1}, {1000, 1}, {1, 16}, {100, 4}};
};

std::string Node(long i) { return "node-" + std::to_string(i % kNodes); }
std::string Task(long i) { return "bench-task-" + std::to_string(i); }

bool Setup(StateStore& store, long tasks, const Clock& clock) {
  for (int n = 0; n < kNodes; ++n) {
    NodeInfo info{Node(n), {{"role", "worker"}}, {}, {"noop"}, "normal", "bench",
                  clock.Now(), true, {}};
    if (!store.UpsertNode(info).ok()) return false;
  }
  for (long first = 0; first < tasks; first += kChunk) {
    std::vector<NewTask> batch;
    std::vector<TransitionRequest> dispatch;
    for (long i = first; i < std::min(tasks, first + kChunk); ++i) {
      TaskSpec spec;
      spec.task_id = Task(i);
      spec.intent = "noop";
      spec.target_selector.nodes = {Node(i)};
      spec.timeout = std::chrono::seconds(60);
      batch.push_back({spec, {Node(i)}});
      TransitionRequest r;
      r.task_id = spec.task_id;
      r.node_id = Node(i);
      r.to = TaskState::kDispatched;
      r.ack_deadline = clock.Now() + std::chrono::seconds(30);
      dispatch.push_back(std::move(r));
    }
    if (!store.CreateTasks(batch).ok() || !store.Transition(dispatch).ok()) return false;
  }
  return true;
}

// ACCEPTED for a chunk of tasks, then SUCCEEDED for the same chunk.
std::vector<Event> MakeEvents(long tasks, const Clock& clock) {
  std::vector<Event> events;
  std::vector<uint64_t> seq(kNodes, 0);
  for (long first = 0; first < tasks; first += kChunk) {
    long last = std::min(tasks, first + kChunk);
    for (EventType type : {EventType::kAccepted, EventType::kSucceeded}) {
      for (long i = first; i < last; ++i) {
        Event e;
        e.task_id = Task(i);
        e.node_id = Node(i);
        e.sequence_number = ++seq[i % kNodes];
        e.attempt = 1;
        e.type = type;
        e.timestamp = clock.Now();
        events.push_back(std::move(e));
      }
    }
  }
  return events;
}

// CPU seconds (user + system) used by the whole process so far.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

int RunCase(const Args& args, const Case& c, const std::string& dir) {
  std::string name = "b" + std::to_string(c.batch) + "i" + std::to_string(c.inflight);
  std::string url = args.url.empty() ? "sqlite://" + dir + "/bench-{case}.db" : args.url;
  if (auto pos = url.find("{case}"); pos != std::string::npos) url.replace(pos, 6, name);
  long events = args.events ? args.events : (c.batch * c.inflight < 50 ? 10'000 : 200'000);
  long tasks = events / 2;
  RealClock clock;
  StoreOptions options;
  options.sqlite_synchronous = args.sync;
  if (args.cache_kib > 0) options.cache_kib = args.cache_kib;
  options.background_checkpoint = args.bg_checkpoint != 0;
  Result<std::unique_ptr<StateStore>> opened = OpenStateStore(url, options, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "open %s: %s\n", url.c_str(), opened.status().ToString().c_str());
    return 1;
  }
  StateStore& store = **opened;
  Steady::time_point setup_start = Steady::now();
  if (!Setup(store, tasks, clock)) return std::fprintf(stderr, "setup failed\n"), 1;
  std::fprintf(stderr, "case %s: setup of %ld tasks took %.2f s\n", name.c_str(), tasks,
               std::chrono::duration<double>(Steady::now() - setup_start).count());
  std::vector<Event> all = MakeEvents(tasks, clock);
  int64_t applied_before = store.Stats().events_applied;

  struct InFlight {
    std::future<Result<ApplyResult>> fut;
    Steady::time_point start;
  };
  std::deque<InFlight> flight;
  std::vector<double> lat_ms;
  bool failed = false;
  auto reap = [&] {
    Result<ApplyResult> r = flight.front().fut.get();
    lat_ms.push_back(std::chrono::duration<double, std::milli>(Steady::now() -
                                                               flight.front().start).count());
    failed = failed || !r.ok();
    flight.pop_front();
  };
  Steady::time_point t0 = Steady::now();
  double cpu0 = CpuSeconds();
  for (size_t next = 0; next < all.size(); next += c.batch) {
    size_t end = std::min(all.size(), next + static_cast<size_t>(c.batch));
    std::vector<Event> batch(std::make_move_iterator(all.begin() + next),
                             std::make_move_iterator(all.begin() + end));
    if (static_cast<int>(flight.size()) >= c.inflight) reap();
    flight.push_back({store.ApplyAsync(std::move(batch)), Steady::now()});
  }
  while (!flight.empty()) reap();
  double secs = std::chrono::duration<double>(Steady::now() - t0).count();
  double cpu_us_per_event = (CpuSeconds() - cpu0) * 1e6 / static_cast<double>(all.size());
  int64_t applied = store.Stats().events_applied - applied_before;
  if (failed || applied != static_cast<int64_t>(all.size())) {
    std::fprintf(stderr, "case %s: %lld of %zu events applied%s\n", name.c_str(),
                 static_cast<long long>(applied), all.size(), failed ? " (errors)" : "");
    return 1;
  }
  std::string scheme = url.substr(0, url.find(':'));
  std::printf("store=%s batch=%d events_per_s=%.0f p50_ms=%.3f p99_ms=%.3f inflight=%d events=%zu sync=%s cpu_us_per_event=%.1f\n",
              scheme.c_str(), c.batch, all.size() / secs, Percentile(lat_ms, 0.50),
              Percentile(lat_ms, 0.99), c.inflight, all.size(), args.sync.c_str(), cpu_us_per_event);
  std::fflush(stdout);
  return 0;
}

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--url") {
      args.url = v;
    } else if (k == "--events") {
      args.events = std::atol(v.c_str());
    } else if (k == "--bg-checkpoint") {
      args.bg_checkpoint = std::atoi(v.c_str());
    } else if (k == "--cache-kib") {
      args.cache_kib = std::atoi(v.c_str());
    } else if (k == "--sync") {
      args.sync = v;
    } else if (k == "--cases") {
      args.cases.clear();
      for (size_t pos = 0; pos < v.size();) {
        size_t comma = v.find(',', pos);
        std::string item = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t colon = item.find(':');
        Case c{std::atoi(item.c_str()), colon == std::string::npos ? 1 : std::atoi(item.c_str() + colon + 1)};
        if (c.batch < 1 || c.inflight < 1) return false;
        args.cases.push_back(c);
        pos = comma == std::string::npos ? v.size() : comma + 1;
      }
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

}  // namespace
}  // namespace apollo::store

int main(int argc, char** argv) {
  apollo::store::Args args;
  if (!apollo::store::ParseArgs(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: store_bench [--url URL] [--events N] [--cases 1:1,100:1,...] "
                 "[--sync FULL|NORMAL] [--cache-kib N] [--bg-checkpoint 0|1]\n");
    return 2;
  }
  char tmpl[] = "/tmp/apollo-store-bench-XXXXXX";
  std::string dir;
  if (args.url.empty()) {
    if (!mkdtemp(tmpl)) return std::perror("mkdtemp"), 1;
    dir = tmpl;
  }
  int rc = 0;
  for (const auto& c : args.cases) rc |= apollo::store::RunCase(args, c, dir);
  if (!dir.empty()) std::filesystem::remove_all(dir);
  return rc;
}
