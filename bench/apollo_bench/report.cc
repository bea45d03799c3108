#include "apollo_bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace apollo::bench {
namespace {

nlohmann::ordered_json Figure(const std::optional<double>& v) {
  if (!v) return nullptr;
  return std::round(*v * 1000) / 1000;  // three decimals are plenty
}

std::string Cell(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), *v >= 100 ? "%.0f" : "%.2f", *v);
  return buf;
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return samples[std::min(i, samples.size() - 1)];
}

std::string ToJsonLine(const ScenarioResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["tasks_per_s"] = Figure(r.tasks_per_s);
  j["p50_ms"] = Figure(r.p50_ms);
  j["p99_ms"] = Figure(r.p99_ms);
  j["rss_mb"] = Figure(r.rss_mb);
  for (const auto& [k, v] : r.extra.items()) j[k] = v.is_number_float() ? Figure(v.get<double>()) : v;
  if (!r.error.empty()) j["error"] = r.error;
  return j.dump();
}

void PrintTable(const std::vector<ScenarioResult>& results, std::ostream& out) {
  out << Pad("scenario", 22) << Pad("tasks/s", 10) << Pad("p50 ms", 9) << Pad("p99 ms", 9)
      << Pad("rss MB", 8) << "details\n";
  for (const auto& r : results) {
    std::string details;
    for (const auto& [k, v] : r.extra.items()) {
      std::string text = v.is_string()         ? v.get<std::string>()
                         : v.is_number_float() ? Cell(v.get<double>())
                                               : v.dump();
      details += k + "=" + text + " ";
    }
    if (!r.error.empty()) details += "ERROR: " + r.error;
    out << Pad(r.scenario, 22) << Pad(Cell(r.tasks_per_s), 10) << Pad(Cell(r.p50_ms), 9)
        << Pad(Cell(r.p99_ms), 9) << Pad(Cell(r.rss_mb), 8) << details << "\n";
  }
}

}  // namespace apollo::bench
