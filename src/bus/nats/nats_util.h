#pragma once

// Small helpers around cnats: natsStatus -> Status, RAII owners, and the
// wire form of an event inside a JetStream message.
//
// Thread-safety: pure functions and values.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nats/nats.h>

#include "core/event.h"
#include "core/status.h"

namespace apollo::bus::nats {

// Connection-level problems (timeout, no server, closed, disconnected, no
// responders) -> kUnavailable: retry. JetStream API errors -> kInternal or
// kInvalidArgument. Message: "<what>: <cnats text> (js <code>)".
Status FromNats(natsStatus s, std::string_view what, jsErrCode js = static_cast<jsErrCode>(0));

struct ConnDeleter { void operator()(natsConnection* c) const { natsConnection_Destroy(c); } };
struct OptsDeleter { void operator()(natsOptions* o) const { natsOptions_Destroy(o); } };
struct JsDeleter { void operator()(jsCtx* j) const { jsCtx_Destroy(j); } };
struct SubDeleter { void operator()(natsSubscription* s) const { natsSubscription_Destroy(s); } };
struct MsgDeleter { void operator()(natsMsg* m) const { natsMsg_Destroy(m); } };
using ConnPtr = std::unique_ptr<natsConnection, ConnDeleter>;
using OptsPtr = std::unique_ptr<natsOptions, OptsDeleter>;
using JsPtr = std::unique_ptr<jsCtx, JsDeleter>;
using SubPtr = std::unique_ptr<natsSubscription, SubDeleter>;
using MsgPtr = std::unique_ptr<natsMsg, MsgDeleter>;

// The event as apollo.v1.Event bytes (no validation: a malformed event must
// reach the consumer to be dead-lettered).
std::string EncodeRaw(const Event& e);
// Parses without validating. kDataLoss if the bytes are not an Event.
Result<Event> DecodeRaw(std::string_view bytes);

// One JetStream message carries the events that one send round (the Publish
// calls sent together, nats_bus.cc) has for one partition, in publish order,
// as apollo.v1.EventBatch bytes; the header kEventsHeader holds how many (lag
// counts events, not messages). A message without that header is a single
// apollo.v1.Event (the format before groups).
std::string EncodeGroup(const std::vector<const Event*>& events);
// The events of a message's data; `grouped` = the message has kEventsHeader.
// Parses without validating. kDataLoss if the bytes are neither form.
Result<std::vector<Event>> DecodeMessage(std::string_view bytes, bool grouped);

// A send round's events by partition (PartitionOf their task_id): one group
// per partition touched, in order of first appearance; within a group, the
// calls in round order and each call's events in its order.
struct PartitionGroup {
  int partition = 0;
  std::vector<const Event*> events;
};
std::vector<PartitionGroup> GroupByPartition(const std::vector<const std::vector<Event>*>& calls,
                                             int partitions);

// The group's Nats-Msg-Id: "<first event's id>:p<partition>:<count>:<hash of
// the event ids>". The same events in the same partition give the same id,
// so JetStream drops a republished group within its duplicate window; a
// resend grouped differently gets a new id and reaches the store, whose
// event_id dedup and per-node mark catch it.
std::string GroupMsgId(int partition, const std::vector<const Event*>& events);

// Header carrying the publisher's clock (µs since the epoch) for lag ages.
inline constexpr const char* kPublishedAtHeader = "Apollo-Published-At";
// Header carrying the number of events in a grouped message.
inline constexpr const char* kEventsHeader = "Apollo-Events";
// Header naming the send round a message belongs to and how many messages
// the round has (round_cut.h): "<round id>/<messages>".
inline constexpr const char* kRoundHeader = "Apollo-Round";

}  // namespace apollo::bus::nats
