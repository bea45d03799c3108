#pragma once

// Metric families made at scrape time (values read from their owners, not
// counted in a registry), for the Prometheus text format: the
// orchestrator's /metrics (orchestrator/metrics/scrape.cc) and the agent's
// (agent/metrics/agent_metrics.cc). Target apollo_metric_families
// (prometheus-cpp's core library: its types and text serializer).
//
// Thread-safety: none; one scrape builds one.

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace apollo {

class MetricFamilies {
 public:
  using Labels = std::vector<prometheus::ClientMetric::Label>;

  prometheus::MetricFamily& Family(const std::string& name, prometheus::MetricType type,
                                   const std::string& help) {
    out_.push_back(prometheus::MetricFamily{name, help, type, {}});
    return out_.back();
  }
  // One sample of the family made last (a counter or a gauge).
  void Add(double value, Labels labels = {}) {
    prometheus::ClientMetric m;
    m.label = std::move(labels);
    if (out_.back().type == prometheus::MetricType::Counter) {
      m.counter.value = value;
    } else {
      m.gauge.value = value;
    }
    out_.back().metric.push_back(std::move(m));
  }
  void Gauge(const std::string& name, const std::string& help, double value) {
    Family(name, prometheus::MetricType::Gauge, help);
    Add(value);
  }
  void Counter(const std::string& name, const std::string& help, double value) {
    Family(name, prometheus::MetricType::Counter, help);
    Add(value);
  }
  // A histogram from per-bucket counts: counts[i] observations up to
  // bounds[i] (above the bound before), counts[bounds.size()] above all.
  template <typename Bounds, typename Counts>
  void Histogram(const std::string& name, const std::string& help, const Bounds& bounds,
                 const Counts& counts, double sum) {
    Family(name, prometheus::MetricType::Histogram, help);
    prometheus::ClientMetric m;
    uint64_t cumulative = 0;
    size_t i = 0;
    for (double bound : bounds) {
      cumulative += counts[i++];
      m.histogram.bucket.push_back({cumulative, bound});
    }
    cumulative += counts[i];
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = sum;
    out_.back().metric.push_back(std::move(m));
  }

  std::vector<prometheus::MetricFamily>& families() { return out_; }
  std::string Text() const { return prometheus::TextSerializer().Serialize(out_); }

 private:
  std::vector<prometheus::MetricFamily> out_;
};

}  // namespace apollo
