#pragma once

// Small helpers around cnats: natsStatus -> Status, RAII owners, and the
// wire form of an event inside a JetStream message.
//
// Thread-safety: pure functions and values.

#include <memory>
#include <string>
#include <string_view>

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

// Header carrying the publisher's clock (µs since the epoch) for lag ages.
inline constexpr const char* kPublishedAtHeader = "Apollo-Published-At";

}  // namespace apollo::bus::nats
