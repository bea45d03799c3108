// wal_bench: durable appends per second of the agent WAL with 1, 16 and 256
// concurrent writers (group commit), next to the raw fdatasync rate of the
// disk it runs on.
//
//   wal_bench [--dir=PATH] [--seconds=3] [--writers=1,16,256]
//
// Output, one line per case:
//   disk fdatasync_per_s=...
//   writers=256 records_per_s=... fsyncs_per_s=... lat_p50_us=... lat_p99_us=...
// fsyncs_per_s counts the fdatasyncs the WAL itself issued in that case;
// lat_* are percentiles of one AppendEvent call (enqueue to durable) over
// every call of every writer in that case.
// The default directory is a fresh temp dir beside the current directory
// (the repo, when run by `make bench-wal`), i.e. on the same disk; it is
// removed at exit. An explicit --dir is used as a parent for the temp dir.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "agent/wal/wal.h"
#include "core/clock.h"
#include "core/event.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

struct Args {
  std::string parent = "..";
  double seconds = 3.0;
  std::vector<int> writers = {1, 16, 256};
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--dir=", 0) == 0) {
      a.parent = s.substr(6);
    } else if (s.rfind("--seconds=", 0) == 0) {
      a.seconds = std::stod(s.substr(10));
    } else if (s.rfind("--writers=", 0) == 0) {
      a.writers.clear();
      std::string list = s.substr(10);
      for (size_t pos = 0; pos < list.size();) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) {
          comma = list.size();
        }
        a.writers.push_back(std::stoi(list.substr(pos, comma - pos)));
        pos = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: wal_bench [--dir=PATH] [--seconds=S] [--writers=1,16,256]\n");
      std::exit(2);
    }
  }
  return a;
}

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// A typical agent event: ~150 bytes once encoded.
apollo::Event BenchEvent(int writer) {
  apollo::Event e;
  e.task_id = "deploy-1732950000-a1b2c3d4";
  e.node_id = "edge-node-0042";
  e.attempt = 1;
  e.type = apollo::EventType::kProgress;
  e.timestamp = apollo::FromUnixMicros(1'732'950'000'000'000);
  e.payload = "{\"progress\":0.42,\"message\":\"step 3/7 fetching artifact\",\"w\":" +
              std::to_string(writer) + "}";
  return e;
}

// 4 KiB appends, each followed by fdatasync, for `seconds`.
double DiskFdatasyncPerSecond(const std::string& dir, double seconds) {
  std::string path = dir + "/fdatasync-probe";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return 0;
  }
  std::string block(4096, 'x');
  uint64_t n = 0;
  auto start = SteadyClock::now();
  while (Seconds(SteadyClock::now() - start) < seconds) {
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
      break;
    }
    if (::fdatasync(fd) != 0) {
      break;
    }
    ++n;
  }
  double rate = n / Seconds(SteadyClock::now() - start);
  ::close(fd);
  ::unlink(path.c_str());
  return rate;
}

// The q-quantile (0..1) of `v` (sorted in place), in microseconds.
double QuantileMicros(std::vector<SteadyClock::duration>& v, double q) {
  if (v.empty()) {
    return 0;
  }
  size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return std::chrono::duration<double, std::micro>(v[k]).count();
}

bool RunCase(const std::string& dir, int writers, double seconds) {
  apollo::RealClock clock;
  auto wal = apollo::wal::Wal::Open(dir, {}, clock);
  if (!wal.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), wal.status().ToString().c_str());
    return false;
  }
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::vector<uint64_t> counts(static_cast<size_t>(writers), 0);
  std::vector<std::vector<SteadyClock::duration>> latencies(static_cast<size_t>(writers));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(writers));
  uint64_t syncs_before = (*wal)->stats().syncs;
  auto start = SteadyClock::now();
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      apollo::Event e = BenchEvent(w);
      std::vector<SteadyClock::duration>& lat = latencies[static_cast<size_t>(w)];
      lat.reserve(4096);
      while (!stop.load(std::memory_order_relaxed)) {
        auto call_start = SteadyClock::now();
        if (!(*wal)->AppendEvent(e).ok()) {
          failed = true;
          return;
        }
        lat.push_back(SteadyClock::now() - call_start);
        ++counts[static_cast<size_t>(w)];
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) {
    t.join();
  }
  double elapsed = Seconds(SteadyClock::now() - start);
  uint64_t total = 0;
  for (uint64_t c : counts) {
    total += c;
  }
  uint64_t syncs = (*wal)->stats().syncs - syncs_before;
  std::vector<SteadyClock::duration> all;
  all.reserve(total);
  for (const auto& v : latencies) {
    all.insert(all.end(), v.begin(), v.end());
  }
  double p50 = QuantileMicros(all, 0.50);
  double p99 = QuantileMicros(all, 0.99);
  std::printf("writers=%d records_per_s=%.0f fsyncs_per_s=%.0f lat_p50_us=%.0f lat_p99_us=%.0f\n",
              writers, total / elapsed, syncs / elapsed, p50, p99);
  std::fflush(stdout);
  return !failed;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  std::string tmpl = args.parent + "/.wal-bench-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror(("mkdtemp " + tmpl).c_str());
    return 1;
  }
  const std::string root = tmpl;
  std::printf("disk fdatasync_per_s=%.0f\n", DiskFdatasyncPerSecond(root, args.seconds));
  std::fflush(stdout);
  bool ok = true;
  for (int writers : args.writers) {
    ok = RunCase(root + "/w" + std::to_string(writers), writers, args.seconds) && ok;
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return ok ? 0 : 1;
}
