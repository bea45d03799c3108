#include "bus/nats/nats_util.h"

#include <algorithm>
#include <cstdio>

#include "apollo/v1/agent.pb.h"
#include "apollo/v1/event.pb.h"
#include "bus/event_bus.h"

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
  EventToProto(e, &pb);
  return pb.SerializeAsString();
}

Result<Event> DecodeRaw(std::string_view bytes) {
  apollo::v1::Event pb;
  if (!pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::DataLoss("not an apollo.v1.Event");
  }
  return EventFromProtoUnchecked(pb);
}

std::string EncodeGroup(const std::vector<const Event*>& events) {
  apollo::v1::EventBatch pb;
  for (const Event* e : events) EventToProto(*e, pb.add_events());
  return pb.SerializeAsString();
}

Result<std::vector<Event>> DecodeMessage(std::string_view bytes, bool grouped) {
  std::vector<Event> out;
  if (!grouped) {
    Result<Event> e = DecodeRaw(bytes);
    if (!e.ok()) return e.status();
    out.push_back(std::move(*e));
    return out;
  }
  apollo::v1::EventBatch pb;
  if (!pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::DataLoss("not an apollo.v1.EventBatch");
  }
  out.reserve(static_cast<size_t>(pb.events_size()));
  for (const apollo::v1::Event& e : pb.events()) out.push_back(EventFromProtoUnchecked(e));
  return out;
}

std::vector<PartitionGroup> GroupByPartition(const std::vector<const std::vector<Event>*>& calls,
                                             int partitions) {
  std::vector<int> slot(static_cast<size_t>(std::max(1, partitions)), -1);
  std::vector<PartitionGroup> out;
  for (const std::vector<Event>* call : calls) {
    for (const Event& e : *call) {
      int p = PartitionOf(e.task_id, partitions);
      int& k = slot[static_cast<size_t>(p)];
      if (k < 0) {
        k = static_cast<int>(out.size());
        out.push_back(PartitionGroup{p, {}});
      }
      out[static_cast<size_t>(k)].events.push_back(&e);
    }
  }
  return out;
}

std::string GroupMsgId(int partition, const std::vector<const Event*>& events) {
  // FNV-1a 64 over the event ids, each followed by a separator.
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;
    h *= 1099511628211ULL;
  };
  for (const Event* e : events) mix(e->event_id());
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(h));
  std::string first = events.empty() ? std::string("-") : events.front()->event_id();
  return first + ":p" + std::to_string(partition) + ":" + std::to_string(events.size()) + ":" +
         hash;
}

}  // namespace apollo::bus::nats
