#include "store/engine/row_change.h"

#include <nlohmann/json.hpp>

namespace apollo::store::engine {

void FillDueFor(int64_t timeout_us, int max_retries, TaskState to, TimePoint now,
                std::optional<TimePoint> ack_deadline, std::optional<TimePoint> next_attempt_at,
                int retries, RowChange& change) {
  change.due_kind = DueKind::kNone;
  change.due_at.reset();
  change.blocked_reason.clear();
  switch (to) {
    case TaskState::kDispatched:
      change.blocked_reason = "awaiting_ack since " + FormatRfc3339(now);
      if (ack_deadline) {
        change.due_kind = DueKind::kAckTimeout;
        change.due_at = ToUnixMicros(*ack_deadline);
      }
      break;
    case TaskState::kRunning:
      if (timeout_us > 0) {
        change.due_kind = DueKind::kExecTimeout;
        change.due_at = ToUnixMicros(now) + timeout_us;
      }
      break;
    case TaskState::kRetrying: {
      TimePoint at = next_attempt_at.value_or(now);
      change.due_kind = DueKind::kRetry;
      change.due_at = ToUnixMicros(at);
      change.blocked_reason = "backoff until " + FormatRfc3339(at);
      break;
    }
    case TaskState::kFailed:
    case TaskState::kTimeout:
      if (retries < max_retries) {
        change.due_kind = DueKind::kRetryDecision;
        change.due_at = ToUnixMicros(now);
      }
      break;
    default:
      break;
  }
}

std::string ErrorFromPayload(std::string_view payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    for (const char* key : {"error", "message"}) {
      auto it = j.find(key);
      if (it != j.end() && it->is_string()) return it->get<std::string>();
    }
  }
  return std::string(payload.substr(0, kInlinePayloadMax));
}

}  // namespace apollo::store::engine
