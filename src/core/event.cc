#include "core/event.h"

#include <array>
#include <charconv>
#include <ctime>

#include <nlohmann/json.hpp>

#include "apollo/v1/event.pb.h"

namespace apollo {
namespace {

constexpr std::array<std::string_view, 11> kNames = {
    "",          "ACCEPTED",        "PROGRESS",  "SUCCEEDED", "FAILED",   "ALREADY_DONE",
    "ALREADY_RUNNING", "CANCELLED", "TIMEOUT",   "SNAPSHOT",  "REJECTED"};

bool KnownType(int t) { return t >= 1 && t <= 10; }

}  // namespace

std::string_view EventTypeName(EventType t) {
  int i = static_cast<int>(t);
  return KnownType(i) ? kNames[i] : "UNKNOWN";
}

std::optional<EventType> ParseEventType(std::string_view name) {
  for (int i = 1; i <= 10; ++i) {
    if (kNames[i] == name) return static_cast<EventType>(i);
  }
  return std::nullopt;
}

std::optional<TaskState> TargetState(EventType t) {
  switch (t) {
    case EventType::kAccepted:
    case EventType::kAlreadyRunning: return TaskState::kRunning;
    case EventType::kSucceeded:
    case EventType::kAlreadyDone: return TaskState::kSucceeded;
    case EventType::kFailed: return TaskState::kFailed;
    case EventType::kCancelled: return TaskState::kCancelled;
    case EventType::kTimeout: return TaskState::kTimeout;
    case EventType::kProgress:
    case EventType::kSnapshot:
    case EventType::kRejected: return std::nullopt;
  }
  return std::nullopt;
}

std::string MakeEventId(std::string_view node_id, uint64_t sequence_number) {
  std::string id(node_id);
  id += '-';
  id += std::to_string(sequence_number);
  return id;
}

std::string Event::event_id() const { return MakeEventId(node_id, sequence_number); }

Result<EventIdParts> ParseEventId(std::string_view event_id) {
  size_t dash = event_id.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == event_id.size()) {
    return Status::InvalidArgument("event_id '" + std::string(event_id) +
                                   "' is not <node_id>-<sequence_number>");
  }
  std::string_view digits = event_id.substr(dash + 1);
  uint64_t seq = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || seq == 0) {
    return Status::InvalidArgument("event_id '" + std::string(event_id) +
                                   "' does not end in a sequence number >= 1");
  }
  return EventIdParts{std::string(event_id.substr(0, dash)), seq};
}

Status ValidateEvent(const Event& e) {
  if (e.task_id.empty()) return Status::InvalidArgument("event has no task_id");
  if (e.node_id.empty()) return Status::InvalidArgument("event has no node_id");
  if (e.sequence_number == 0) {
    return Status::InvalidArgument("event " + e.event_id() + " has sequence_number 0");
  }
  if (!KnownType(static_cast<int>(e.type))) {
    return Status::InvalidArgument("event " + e.event_id() + " has an unknown event_type");
  }
  if (!e.payload.empty() && !nlohmann::json::accept(e.payload)) {
    return Status::InvalidArgument("event " + e.event_id() + " payload is not valid JSON");
  }
  return Status::Ok();
}

void EventToProto(const Event& e, apollo::v1::Event* pb) {
  pb->set_event_id(e.event_id());
  pb->set_task_id(e.task_id);
  pb->set_node_id(e.node_id);
  pb->set_event_type(static_cast<apollo::v1::EventType>(e.type));
  pb->set_timestamp_us(ToUnixMicros(e.timestamp));
  pb->set_payload(e.payload);
  pb->set_sequence_number(e.sequence_number);
  pb->set_attempt(e.attempt);
}

Event EventFromProtoUnchecked(const apollo::v1::Event& pb) {
  Event e;
  e.task_id = pb.task_id();
  e.node_id = pb.node_id();
  e.sequence_number = pb.sequence_number();
  e.attempt = pb.attempt();
  e.type = static_cast<EventType>(pb.event_type());
  e.timestamp = FromUnixMicros(pb.timestamp_us());
  e.payload = pb.payload();
  return e;
}

Result<Event> EventFromProto(const apollo::v1::Event& pb) {
  Event e = EventFromProtoUnchecked(pb);
  if (pb.event_id() != e.event_id()) {
    return Status::InvalidArgument("event_id '" + pb.event_id() + "' does not match node_id '" +
                                   e.node_id + "' and sequence_number " +
                                   std::to_string(e.sequence_number));
  }
  APOLLO_RETURN_IF_ERROR(ValidateEvent(e));
  return e;
}

std::string EncodeEvent(const Event& e) {
  apollo::v1::Event pb;
  EventToProto(e, &pb);
  return pb.SerializeAsString();
}

Result<Event> DecodeEvent(std::string_view bytes) {
  apollo::v1::Event pb;
  if (!pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::InvalidArgument("event bytes do not parse as apollo.v1.Event");
  }
  return EventFromProto(pb);
}

std::string FormatRfc3339(TimePoint t) {
  int64_t us = ToUnixMicros(t);
  int64_t secs = us / 1'000'000;
  int64_t frac = us % 1'000'000;
  if (frac < 0) {
    frac += 1'000'000;
    secs -= 1;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%06lldZ", buf, static_cast<long long>(frac));
  return out;
}

nlohmann::json EventToJson(const Event& e) {
  nlohmann::json j;
  j["event_id"] = e.event_id();
  j["task_id"] = e.task_id;
  j["node_id"] = e.node_id;
  j["event_type"] = std::string(EventTypeName(e.type));
  j["timestamp"] = FormatRfc3339(e.timestamp);
  j["timestamp_us"] = ToUnixMicros(e.timestamp);
  j["sequence_number"] = e.sequence_number;
  j["attempt"] = e.attempt;
  j["payload"] = e.payload.empty() ? nlohmann::json(nullptr)
                                   : nlohmann::json::parse(e.payload, nullptr, false);
  return j;
}

Result<Event> EventFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("event JSON is not an object");
  Event e;
  try {
    e.task_id = j.at("task_id").get<std::string>();
    e.node_id = j.at("node_id").get<std::string>();
    e.sequence_number = j.at("sequence_number").get<uint64_t>();
    e.attempt = j.value("attempt", 0u);
    auto type = ParseEventType(j.at("event_type").get<std::string>());
    if (!type) return Status::InvalidArgument("event JSON has an unknown event_type");
    e.type = *type;
    e.timestamp = FromUnixMicros(j.at("timestamp_us").get<int64_t>());
    const auto& p = j.at("payload");
    e.payload = p.is_null() ? std::string() : p.dump();
  } catch (const nlohmann::json::exception& ex) {
    return Status::InvalidArgument(std::string("event JSON: ") + ex.what());
  }
  if (j.contains("event_id") && j["event_id"] != e.event_id()) {
    return Status::InvalidArgument("event JSON: event_id does not match node_id and sequence_number");
  }
  APOLLO_RETURN_IF_ERROR(ValidateEvent(e));
  return e;
}

}  // namespace apollo
