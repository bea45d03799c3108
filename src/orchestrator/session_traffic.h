#pragma once

// What every agent session of one gateway shares about the center's load,
// and the counts /metrics shows of the intent messages they send.
//
// "Busy": at least `busy_at` EventBatches (of all sessions together) have
// been read and are not yet committed, i.e. the store is the queue. While
// the center is busy, a session's intents wait a little even when its agent
// has answered everything (IntentHold, kBusy): they go together, in fewer
// messages, which the agent takes with fewer WAL commits and answers with
// fewer EventBatches -- less work queued for the very store that is behind.
// A lone task on a quiet center never sees it: one agent's batches do not
// reach the threshold (kMaxBatchesInFlight per session is far below it).
//
// Thread-safety: all members are atomics; any thread.

#include <atomic>
#include <cstdint>

namespace apollo::orchestrator {

// Batches committing at once from which the center counts as busy (the
// gateway's default; GatewayOptions::busy_batches, config limits.busy_batches).
inline constexpr int64_t kBusyBatches = 16;

// Why an intent message was held, if it was (IntentHold::Offer).
enum class Held { kNo, kUnanswered, kBusy };

class SessionTraffic {
 public:
  // `busy_at` <= 0: the center is never busy.
  explicit SessionTraffic(int64_t busy_at = kBusyBatches) : busy_at_(busy_at) {}

  void BatchRead() { committing_.fetch_add(1, std::memory_order_relaxed); }
  void BatchCommitted() { committing_.fetch_sub(1, std::memory_order_relaxed); }
  int64_t batches_committing() const { return committing_.load(std::memory_order_relaxed); }
  bool busy() const { return busy_at_ > 0 && batches_committing() >= busy_at_; }

  // An intent message offered to a session's hold, and whether it was held.
  void IntentsOffered(Held held) {
    offered_.fetch_add(1, std::memory_order_relaxed);
    if (held == Held::kUnanswered) held_unanswered_.fetch_add(1, std::memory_order_relaxed);
    if (held == Held::kBusy) held_busy_.fetch_add(1, std::memory_order_relaxed);
  }
  // An intent message carrying `intents` intents went to the write queue.
  void IntentMessageSent(int64_t intents) {
    sent_.fetch_add(1, std::memory_order_relaxed);
    intents_sent_.fetch_add(intents, std::memory_order_relaxed);
  }

  struct Counts {
    int64_t offered = 0;          // intent messages offered to the sessions' holds
    int64_t held_unanswered = 0;  // ... held: the agent had not answered
    int64_t held_busy = 0;        // ... held: the center was busy
    int64_t sent = 0;             // intent messages written out
    int64_t intents_sent = 0;     // the intents they carried
  };
  Counts counts() const {
    return Counts{offered_.load(std::memory_order_relaxed),
                  held_unanswered_.load(std::memory_order_relaxed),
                  held_busy_.load(std::memory_order_relaxed), sent_.load(std::memory_order_relaxed),
                  intents_sent_.load(std::memory_order_relaxed)};
  }

 private:
  const int64_t busy_at_;
  std::atomic<int64_t> committing_{0};
  std::atomic<int64_t> offered_{0};
  std::atomic<int64_t> held_unanswered_{0};
  std::atomic<int64_t> held_busy_{0};
  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> intents_sent_{0};
};

}  // namespace apollo::orchestrator
