#include "store/engine/row_change.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace apollo::store::engine {

std::optional<int64_t> EarlierDue(std::optional<int64_t> due, std::optional<int64_t> deadline) {
  if (!deadline) return due;
  if (!due) return deadline;
  return std::min(*due, *deadline);
}

void FillDueFor(const DueFacts& facts, TaskState to, TimePoint now,
                std::optional<TimePoint> ack_deadline, std::optional<TimePoint> next_attempt_at,
                int retries, bool permanent, RowChange& change) {
  change.due_kind = DueKind::kNone;
  change.due_at.reset();
  change.blocked_reason.clear();
  change.start_deadline.reset();
  switch (to) {
    case TaskState::kDispatched:
      change.blocked_reason = "awaiting_ack since " + FormatRfc3339(now);
      change.start_deadline = facts.start_deadline;
      if (ack_deadline) {
        change.due_kind = DueKind::kAckTimeout;
        change.due_at = ToUnixMicros(*ack_deadline);
      }
      break;
    case TaskState::kRunning:
      if (facts.timeout_us > 0) {
        change.due_kind = DueKind::kExecTimeout;
        change.due_at = ToUnixMicros(now) + facts.timeout_us;
      }
      break;
    case TaskState::kRetrying: {
      TimePoint at = next_attempt_at.value_or(now);
      change.due_kind = DueKind::kRetry;
      change.due_at = ToUnixMicros(at);
      change.blocked_reason = "backoff until " + FormatRfc3339(at);
      if (facts.start_timeout_us > 0)
        change.start_deadline = ToUnixMicros(at) + facts.start_timeout_us;
      break;
    }
    case TaskState::kFailed:
    case TaskState::kTimeout:
      if (retries < facts.max_retries && !permanent) {
        change.due_kind = DueKind::kRetryDecision;
        change.due_at = ToUnixMicros(now);
      } else if (facts.compensate) {
        change.due_kind = DueKind::kCompensate;
        change.due_at = ToUnixMicros(now);
      }
      break;
    default:
      break;
  }
  change.due_at = EarlierDue(change.due_at, change.start_deadline);
  if (change.start_deadline && change.due_kind == DueKind::kNone) {
    change.due_kind = DueKind::kAckTimeout;
  }
}

bool PermanentFailure(std::string_view payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto it = j.find("kind");
  return it != j.end() && it->is_string() && it->get<std::string>() == "permanent";
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
