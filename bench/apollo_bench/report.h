#pragma once

// What a scenario measured, printed two ways: one JSON line per scenario
// (machine-readable; the keys issue 9 asks for first, extras after) and a
// human table at the end of the run.
//
// Thread-safety: values and pure functions.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace apollo::bench {

struct ScenarioResult {
  std::string scenario;
  std::optional<double> tasks_per_s;
  std::optional<double> p50_ms;
  std::optional<double> p99_ms;
  std::optional<double> rss_mb;  // of the orchestrator process, at the end
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  std::string error;  // non-empty: the scenario did not complete
};

// Nearest-rank percentile (p in [0, 100]) of `samples`; 0 if empty.
double Percentile(std::vector<double> samples, double p);

// {"scenario": ..., "tasks_per_s": ..., "p50_ms": ..., "p99_ms": ..., "rss_mb": ..., extras}
// Missing figures are null.
std::string ToJsonLine(const ScenarioResult& r);

// One row per scenario: the four figures, then the extras as key=value.
void PrintTable(const std::vector<ScenarioResult>& results, std::ostream& out);

}  // namespace apollo::bench
