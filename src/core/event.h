#pragma once

// The event model: what an agent reports about one (task, node).
//
// event_id = "<node_id>-<sequence_number>". Sequence numbers are per node,
// start at 1 and never repeat across restarts, which gives the store two
// dedup keys: the unique event_id and a per-node high-water mark.
//
// Encodings: a stable binary form (protobuf apollo.v1.Event, used in the
// agent's WAL and on the wire) and a JSON form for humans and the CLI.
//
// Thread-safety: values and pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/clock.h"
#include "core/status.h"
#include "core/task_state.h"

namespace apollo::v1 {
class Event;
}  // namespace apollo::v1

namespace apollo {

enum class EventType : int {
  kAccepted = 1,
  kProgress = 2,
  kSucceeded = 3,
  kFailed = 4,
  kAlreadyDone = 5,
  kAlreadyRunning = 6,
  kCancelled = 7,
  kTimeout = 8,
  kSnapshot = 9,
  kRejected = 10,
};

// "ACCEPTED", "PROGRESS", ...
std::string_view EventTypeName(EventType t);
std::optional<EventType> ParseEventType(std::string_view name);

// The state an event asks its (task, node) to move to, or nullopt for events
// that carry information only (PROGRESS, SNAPSHOT, REJECTED).
// ALREADY_RUNNING asks for RUNNING and ALREADY_DONE for SUCCEEDED: a
// redelivery answer that finds the store behind brings it forward.
std::optional<TaskState> TargetState(EventType t);

struct Event {
  std::string task_id;
  std::string node_id;
  uint64_t sequence_number = 0;
  uint32_t attempt = 0;
  EventType type = EventType::kProgress;
  TimePoint timestamp{};
  std::string payload;  // JSON text, may be empty

  std::string event_id() const;

  friend bool operator==(const Event&, const Event&) = default;
};

std::string MakeEventId(std::string_view node_id, uint64_t sequence_number);

// Splits "<node_id>-<seq>" at its last '-'. InvalidArgument if malformed.
struct EventIdParts {
  std::string node_id;
  uint64_t sequence_number = 0;
};
Result<EventIdParts> ParseEventId(std::string_view event_id);

// Checks an event is well-formed: non-empty ids, seq >= 1, a known type,
// payload empty or valid JSON. InvalidArgument with the reason otherwise.
Status ValidateEvent(const Event& e);

// Binary form (protobuf apollo.v1.Event). Decode checks the bytes parse, that
// the event_id matches node_id and sequence_number, and ValidateEvent.
std::string EncodeEvent(const Event& e);
Result<Event> DecodeEvent(std::string_view bytes);

// The same conversions on the protobuf message itself (the wire carries
// apollo.v1.Event inside EventBatch). EventFromProto checks like DecodeEvent.
void EventToProto(const Event& e, apollo::v1::Event* out);
Result<Event> EventFromProto(const apollo::v1::Event& pb);
// The fields as they are, unchecked: for carriers that must hand a malformed
// event on as it came (the NATS bus, whose consumer dead-letters it).
Event EventFromProtoUnchecked(const apollo::v1::Event& pb);

// JSON form: {"event_id", "task_id", "node_id", "event_type", "timestamp"
// (RFC 3339, UTC), "timestamp_us", "sequence_number", "attempt", "payload"
// (the payload parsed as JSON, or null)}.
nlohmann::json EventToJson(const Event& e);
Result<Event> EventFromJson(const nlohmann::json& j);

// "2024-04-05T12:34:56.789012Z"
std::string FormatRfc3339(TimePoint t);

}  // namespace apollo
