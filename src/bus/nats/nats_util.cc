#include "bus/nats/nats_util.h"

#include "apollo/v1/event.pb.h"

namespace apollo::bus::nats {

Status FromNats(natsStatus s, std::string_view what, jsErrCode js) {
  if (s == NATS_OK) return Status::Ok();
  std::string msg = std::string(what) + ": " + natsStatus_GetText(s);
  if (js != 0) msg += " (js " + std::to_string(static_cast<int>(js)) + ")";
  switch (s) {
    case NATS_TIMEOUT:
    case NATS_NO_SERVER:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NO_RESPONDERS:
    case NATS_IO_ERROR:
    case NATS_STALE_CONNECTION:
    case NATS_SLOW_CONSUMER:
    case NATS_INSUFFICIENT_BUFFER:
      return Status::Unavailable(msg + " (event bus unreachable: retry)");
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT:
    case NATS_ADDRESS_MISSING:
      return Status::InvalidArgument(msg);
    case NATS_NOT_FOUND:
      return Status::NotFound(msg);
    default:
      // A JetStream API error without a connection problem: the server
      // answered "no" (e.g. the stream is gone). Retrying may help once the
      // stream is re-created, so say unavailable.
      return Status::Unavailable(msg);
  }
}

std::string EncodeRaw(const Event& e) {
  apollo::v1::Event pb;
  pb.set_event_id(e.event_id());
  pb.set_task_id(e.task_id);
  pb.set_node_id(e.node_id);
  pb.set_event_type(static_cast<apollo::v1::EventType>(e.type));
  pb.set_timestamp_us(
      std::chrono::duration_cast<std::chrono::microseconds>(e.timestamp.time_since_epoch())
          .count());
  pb.set_payload(e.payload);
  pb.set_sequence_number(e.sequence_number);
  pb.set_attempt(e.attempt);
  return pb.SerializeAsString();
}

Result<Event> DecodeRaw(std::string_view bytes) {
  apollo::v1::Event pb;
  if (!pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::DataLoss("not an apollo.v1.Event");
  }
  Event e;
  e.task_id = pb.task_id();
  e.node_id = pb.node_id();
  e.sequence_number = pb.sequence_number();
  e.attempt = pb.attempt();
  e.type = static_cast<EventType>(pb.event_type());
  e.timestamp = TimePoint(std::chrono::microseconds(pb.timestamp_us()));
  e.payload = pb.payload();
  return e;
}

}  // namespace apollo::bus::nats
