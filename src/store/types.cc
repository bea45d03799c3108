#include "store/types.h"

namespace apollo::store {

std::string_view DueKindName(DueKind k) {
  switch (k) {
    case DueKind::kNone: return "none";
    case DueKind::kDispatch: return "dispatch";
    case DueKind::kAckTimeout: return "ack_timeout";
    case DueKind::kExecTimeout: return "exec_timeout";
    case DueKind::kRetry: return "retry";
    case DueKind::kRetryDecision: return "retry_decision";
    case DueKind::kUpstreamFailed: return "upstream_failed";
    case DueKind::kCompensate:
      return "compensate";
    case DueKind::kDeliverCancel:
      return "deliver_cancel";
  }
  return "unknown";
}

std::string_view CauseName(Cause c) {
  switch (c) {
    case Cause::kEvent: return "event";
    case Cause::kDispatch: return "dispatch";
    case Cause::kAckTimeout: return "ack_timeout";
    case Cause::kExecTimeout: return "exec_timeout";
    case Cause::kRetry: return "retry";
    case Cause::kCancel: return "cancel";
    case Cause::kOperator: return "operator";
    case Cause::kReconcile: return "reconcile";
    case Cause::kCreate: return "create";
    case Cause::kCallback: return "callback";
    case Cause::kNotStarted:
      return "not_started";
    case Cause::kExtended:
      return "extended";
    case Cause::kCompensation:
      return "compensation";
    case Cause::kUpstreamFailed:
      return "upstream_failed";
    case Cause::kRollout:
      return "rollout";
    case Cause::kRolloutAborted:
      return "rollout_aborted";
    case Cause::kDagChange:
      return "dag_change";
    case Cause::kFollow:
      return "follow";
  }
  return "unknown";
}

std::string_view AlertDeliveryName(AlertDelivery d) {
  switch (d) {
    case AlertDelivery::kPending:
      return "pending";
    case AlertDelivery::kDelivered:
      return "delivered";
    case AlertDelivery::kFailing:
      return "failing";
    case AlertDelivery::kGaveUp:
      return "gave_up";
  }
  return "unknown";
}

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kApplied: return "applied";
    case Outcome::kDuplicate: return "duplicate";
    case Outcome::kStaleAttempt: return "stale_attempt";
    case Outcome::kIllegalTransition: return "illegal_transition";
    case Outcome::kUnknownTask: return "unknown_task";
    case Outcome::kMalformed: return "malformed";
    case Outcome::kVersionConflict: return "version_conflict";
  }
  return "unknown";
}

}  // namespace apollo::store
