#pragma once

// The NATS JetStream bus (bus: nats://host:port).
//
//  - One stream (file storage, work-queue retention, 2 min duplicate window)
//    with subjects "<prefix>.<partition>". A publish call sends one message
//    per partition it touches, carrying that partition's events in order
//    (nats_util.h: EncodeGroup); its Nats-Msg-Id names the group (GroupMsgId),
//    so a republished batch is stored once, and a resend grouped differently
//    is caught by the store's own dedup.
//  - One durable pull consumer per partition ("apollo-p<N>"), explicit acks,
//    a message acked only after the store committed each of its events (or
//    parked it); see nats_consumer.h. Delivery counts come from JetStream
//    (NumDelivered, per message) and feed the dead-letter path;
//    the server's own max_deliver is left unlimited so that a consumer dying
//    on the last try cannot strand an event.
//  - JetStream fsyncs lazily: a stored message can vanish on power loss. That
//    is why agents are acknowledged only after the store commit (the WAL
//    keeps the event until then), never after the JetStream ack.
//  - Order after a consumer crash: a consumer that (re)subscribes while the
//    durable has unacknowledged deliveries waits ack_wait before fetching,
//    so the redeliveries come first and a task's newer event cannot overtake
//    them. (A server restart under a live consumer does not re-check: known
//    gap.)
//  - Server killed / unreachable: Publish fails fast with kUnavailable; cnats
//    reconnects in the background and the consumers resume.
//  - Publish waits for commits made by this process's consumers. A publishing
//    replica without consumers (consume = false) learns of commits by
//    reading the node's high-water mark when the publish completes and, after
//    that, only through commit_timeout.
//
// Thread-safety: thread-safe.

#include <memory>
#include <string>

#include "bus/event_bus.h"
#include "core/clock.h"
#include "store/state_store.h"

namespace apollo::bus {

// `url` is nats://host:port. `store` and `clock` must outlive the bus.
std::unique_ptr<EventBus> NewNatsBus(std::string url, const BusOptions& options,
                                     store::StateStore& store, const Clock& clock);

}  // namespace apollo::bus
