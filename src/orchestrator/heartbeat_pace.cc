#include "orchestrator/heartbeat_pace.h"

#include <algorithm>

namespace apollo::orchestrator {

Duration HeartbeatPace(Duration configured, int64_t fleet, int64_t max_per_s) {
  if (max_per_s <= 0 || fleet <= 0) return configured;
  // Whole seconds, rounded up: fleet / max_per_s.
  const int64_t seconds = (fleet + max_per_s - 1) / max_per_s;
  const Duration paced = std::min<Duration>(std::chrono::seconds(seconds), std::chrono::minutes(5));
  return std::max(configured, paced);
}

}  // namespace apollo::orchestrator
