#pragma once

// Nagle's rule for one session's intents: while the agent has not answered
// the last intent message it was sent, new intents for it wait and go out
// together, in one message, when it answers. And while the center is busy
// (session_traffic.h: its store is the queue), they wait even when the agent
// has answered, for up to kBusyHoldLimit, and go together then.
//
// Why: an agent takes each intent message with one WAL commit and answers
// it with one EventBatch of ACCEPTED events, which the center commits and
// acknowledges. Those costs are per message, not per intent, so a busy
// agent that receives 20 intents in one message instead of four messages of
// 5 does a quarter of that work. An agent with nothing unanswered gets its
// intent at once: a lone task's latency does not change. (BENCHMARKS.md, "a
// node's intents wait while it has not answered": on one busy node it cuts
// messages 2.6-3x; in the 100-agent throughput run it finds nothing to join.)
//
// "Answered" means the session read an EventBatch from the agent: the agent
// reads intents in order and reports their ACCEPTED events after its commit,
// so an EventBatch says it got past (at least) what it was sent before. The
// session bounds the wait (kIntentHoldLimit by default) for an agent that answers
// nothing, and releases held intents before any message that must not
// overtake them (a Cancel for a held intent, say).
//
// The busy hold is Kafka's linger.ms, or PostgreSQL's commit_delay, for
// intents: when the bottleneck is per-message work in the center (each
// message an agent is sent comes back as an EventBatch to commit), trading
// a bounded wait for fewer, fuller messages raises throughput. An agent's
// answer does not end a busy hold -- answers come quickly even when the
// store is behind; only the limit (or a message that must not overtake the
// held intents) does. A lone task on a quiet center never waits: one
// session's batches alone never make it busy. (BENCHMARKS.md, "intents wait
// while the center is busy".)
//
// Thread-safety: none; the session calls it under its own lock.

#include <chrono>
#include <optional>

#include "apollo/v1/agent.pb.h"
#include "core/wire_limits.h"
#include "orchestrator/session_traffic.h"

namespace apollo::orchestrator {

// The longest intents wait for an agent that answers nothing (the
// gateway's default; GatewayOptions::intent_hold_limit).
inline constexpr std::chrono::milliseconds kIntentHoldLimit{20};
// The longest intents wait while the center is busy (the gateway's
// default; GatewayOptions::busy_hold_limit, config limits.busy_hold).
inline constexpr std::chrono::milliseconds kBusyHoldLimit{200};

class IntentHold {
 public:
  explicit IntentHold(size_t max_bytes = kIntentBatchBytes) : max_bytes_(max_bytes) {}

  // `msg` (an IntentBatch) is to be sent; `busy`: the center is busy.
  // Returns what goes out now: `msg` itself if nothing is unanswered and the
  // center is not busy; otherwise nothing (it is held), or the held message
  // if `msg` does not fit beside it in max_bytes (`msg` then starts the
  // next held message).
  std::optional<apollo::v1::CenterMessage> Offer(apollo::v1::CenterMessage msg,
                                                 bool busy = false);
  // The agent answered: returns the held message, to go now (unanswered),
  // unless it is held because the center is busy (that waits for its limit).
  std::optional<apollo::v1::CenterMessage> Answered();
  // Returns the held message, to go now (the wait limit passed, or a
  // message that must not overtake it is next).
  std::optional<apollo::v1::CenterMessage> Release();

  bool holding() const { return held_.has_value(); }
  // Why the held message is held (kNo if nothing is); it decides the limit.
  Held why() const { return held_ ? why_ : Held::kNo; }
  // What became of the message last offered.
  Held last_offer() const { return last_offer_; }
  // Intent messages sent and held since this hold was made.
  int64_t messages_held() const { return messages_held_; }

 private:
  // The held message, high priority first; nothing is held afterwards, and
  // what goes out is unanswered.
  apollo::v1::CenterMessage Take();

  const size_t max_bytes_;
  bool unanswered_ = false;  // an intent message went out since the last answer
  std::optional<apollo::v1::CenterMessage> held_;
  Held why_ = Held::kNo;         // why held_ is held
  Held last_offer_ = Held::kNo;  // see last_offer()
  size_t held_bytes_ = 0;  // of held_'s IntentBatch, serialized
  int64_t messages_held_ = 0;
};

}  // namespace apollo::orchestrator
