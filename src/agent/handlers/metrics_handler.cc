// collect_metrics: a small snapshot of this node.
//
//   {"load": {"1m", "5m", "15m"},
//    "cpu": {"count", "utilization"},            // sampled over sample_ms
//    "memory": {"total_bytes", "available_bytes", "used_bytes", ...},
//    "disks": [{"path", "total_bytes", "free_bytes", "available_bytes",
//               "used_fraction"} | {"path", "error"}],
//    "uptime_s"}
//
// Params: paths (list of strings; default: the agent's configured
// metrics_paths, normally ["/"]), sample_ms (0..5000,
// default 100). A section that cannot be read (a container without
// /proc/loadavg, a path that does not exist) becomes {"error": "..."}
// instead of failing the whole snapshot: partial metrics beat none.

#include <sys/statvfs.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/params.h"

namespace apollo::agent {
namespace {

using nlohmann::json;

constexpr double kDefaultSampleMs = 100;
constexpr double kMaxSampleMs = 5000;

struct CpuSample {
  uint64_t busy = 0;
  uint64_t total = 0;
  int count = 0;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Unavailable("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<json> ReadLoad(const std::string& proc) {
  Result<std::string> text = ReadFile(proc + "/loadavg");
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  double l1, l5, l15;
  if (!(in >> l1 >> l5 >> l15)) return Status::DataLoss("malformed " + proc + "/loadavg");
  return json{{"1m", l1}, {"5m", l5}, {"15m", l15}};
}

Result<CpuSample> ReadCpu(const std::string& proc) {
  Result<std::string> text = ReadFile(proc + "/stat");
  if (!text.ok()) return text.status();
  std::istringstream lines(*text);
  CpuSample sample;
  bool have_total = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cpu", 0) != 0) continue;
    if (line.size() > 3 && std::isdigit(static_cast<unsigned char>(line[3]))) {
      ++sample.count;
      continue;
    }
    std::istringstream fields(line.substr(3));
    uint64_t v[8] = {};  // user nice system idle iowait irq softirq steal
    for (uint64_t& f : v) fields >> f;
    for (uint64_t f : v) sample.total += f;
    sample.busy = sample.total - v[3] - v[4];
    have_total = true;
  }
  if (!have_total) return Status::DataLoss("no cpu line in " + proc + "/stat");
  return sample;
}

Result<json> ReadMemory(const std::string& proc) {
  Result<std::string> text = ReadFile(proc + "/meminfo");
  if (!text.ok()) return text.status();
  std::map<std::string, uint64_t> kb;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string key;
    uint64_t value = 0;
    if (fields >> key >> value && !key.empty() && key.back() == ':') {
      kb[key.substr(0, key.size() - 1)] = value;
    }
  }
  if (kb.count("MemTotal") == 0) return Status::DataLoss("no MemTotal in " + proc + "/meminfo");
  const uint64_t total = kb["MemTotal"] * 1024;
  const uint64_t available =
      (kb.count("MemAvailable") != 0 ? kb["MemAvailable"] : kb["MemFree"]) * 1024;
  return json{{"total_bytes", total},
              {"available_bytes", available},
              {"used_bytes", total > available ? total - available : 0},
              {"swap_total_bytes", kb["SwapTotal"] * 1024},
              {"swap_free_bytes", kb["SwapFree"] * 1024}};
}

Result<double> ReadUptime(const std::string& proc) {
  Result<std::string> text = ReadFile(proc + "/uptime");
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  double up = 0;
  if (!(in >> up)) return Status::DataLoss("malformed " + proc + "/uptime");
  return up;
}

json Disk(const std::string& path) {
  struct statvfs vfs;
  if (statvfs(path.c_str(), &vfs) != 0) {
    return {{"path", path}, {"error", std::string("statvfs: ") + std::strerror(errno)}};
  }
  const uint64_t unit = vfs.f_frsize != 0 ? vfs.f_frsize : vfs.f_bsize;
  const uint64_t total = vfs.f_blocks * unit;
  const uint64_t free = vfs.f_bfree * unit;
  return {{"path", path},
          {"total_bytes", total},
          {"free_bytes", free},
          {"available_bytes", vfs.f_bavail * unit},
          {"used_fraction", total > 0 ? static_cast<double>(total - free) / total : 0.0}};
}

template <typename T>
json OrError(const Result<T>& r) {
  if (r.ok()) return json(*r);
  return json{{"error", r.status().message()}};
}

class CollectMetricsHandler final : public Handler {
 public:
  CollectMetricsHandler(std::string proc_root, std::vector<std::string> default_paths)
      : proc_(std::move(proc_root)), default_paths_(std::move(default_paths)) {}

  HandlerResult Run(const HandlerContext& ctx) override {
    Status st = CheckParamsObject("collect_metrics", ctx.params);
    if (!st.ok()) return HandlerResult::Refused(st.message());
    auto paths = OptionalStringList("collect_metrics", ctx.params, "paths", false);
    if (!paths.ok()) return HandlerResult::Refused(paths.status().message());
    auto sample_ms = OptionalNumber("collect_metrics", ctx.params, "sample_ms", 0, kMaxSampleMs);
    if (!sample_ms.ok()) return HandlerResult::Refused(sample_ms.status().message());

    Result<CpuSample> first = ReadCpu(proc_);
    const auto wait = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double, std::milli>(sample_ms->value_or(kDefaultSampleMs)));
    StopReason reason = ctx.Stop().WaitFor(wait);
    if (reason != StopReason::kNone) return HandlerResult::Stopped(reason);
    Result<CpuSample> second = ReadCpu(proc_);

    json result = {{"load", OrError(ReadLoad(proc_))},
                   {"cpu", Cpu(first, second)},
                   {"memory", OrError(ReadMemory(proc_))},
                   {"uptime_s", OrError(ReadUptime(proc_))}};
    json disks = json::array();
    for (const std::string& p : paths->value_or(default_paths_)) {
      disks.push_back(Disk(p));
    }
    result["disks"] = std::move(disks);
    return HandlerResult::Succeeded(std::move(result));
  }

 private:
  static json Cpu(const Result<CpuSample>& a, const Result<CpuSample>& b) {
    if (!b.ok()) return {{"error", b.status().message()}};
    json cpu = {{"count", b->count}};
    if (a.ok() && b->total > a->total) {
      cpu["utilization"] = static_cast<double>(b->busy - a->busy) / (b->total - a->total);
    } else {
      cpu["utilization"] = nullptr;  // no ticks passed: unknown, not 0
    }
    return cpu;
  }

  std::string proc_;
  std::vector<std::string> default_paths_;
};

}  // namespace

std::unique_ptr<Handler> NewCollectMetricsHandler(std::string proc_root,
                                                  std::vector<std::string> default_paths) {
  return std::make_unique<CollectMetricsHandler>(std::move(proc_root), std::move(default_paths));
}

}  // namespace apollo::agent
