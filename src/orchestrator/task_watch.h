#pragma once

// Wakes WatchTask calls when their task changes, so a watcher sees each
// transition as soon as it is committed instead of at its next poll.
//
// The center tells the hub about every commit that moved a task's rows
// (agent events applied, dispatch passes, creates, operator calls); a
// watcher waits on the hub between its reads of the task. A change the hub
// is not told about is still seen at the watcher's next poll (the wait is
// bounded), so a missing notification costs latency, never correctness.
// A task nobody watches costs Notify one atomic load.
//
// A Feed watches every task (the dashboard's live list, /api/v1/stream):
// while one is open, Notify also appends the task id to a ring of the last
// kFeedRing changes, which each Feed reads from its own cursor. A Feed that
// falls further behind than the ring is told so (it must re-read the
// list), never blocks the center.
//
// Thread-safety: thread-safe.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"

namespace apollo::orchestrator {

class TaskWatchHub {
 public:
  // Registers a watcher of `task_id` for its lifetime.
  class Watch {
   public:
    Watch(TaskWatchHub& hub, std::string task_id);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    // Changes of the task notified so far; read before reading the task.
    uint64_t generation() const;
    // Returns once a change after `seen` is notified, or after `timeout`.
    void WaitPast(uint64_t seen, Duration timeout) const;

   private:
    TaskWatchHub& hub_;
    const std::string task_id_;
  };

  // Registers a watcher of every task for its lifetime.
  class Feed {
   public:
    explicit Feed(TaskWatchHub& hub);
    ~Feed();
    Feed(const Feed&) = delete;
    Feed& operator=(const Feed&) = delete;

    struct Changes {
      std::vector<std::string> task_ids;  // each once, in the order first notified
      bool overflow = false;              // changes were dropped: re-read everything
    };
    // The tasks changed since the last call (or since the Feed was made),
    // at most `max` of them (the rest come next call); waits up to `timeout`
    // for the first. Empty after the timeout with nothing new.
    Changes Next(Duration timeout, size_t max);

   private:
    TaskWatchHub& hub_;
    uint64_t cursor_;  // the sequence number of the last change read
  };

  // Changes a Feed can fall behind by before it is told to re-read.
  static constexpr size_t kFeedRing = 8192;

  // A commit changed `task_id`.
  void Notify(std::string_view task_id);

 private:
  struct Entry {
    int watchers = 0;
    uint64_t generation = 0;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::atomic<int> watched_{0};  // entries_.size(), read without the lock
  mutable std::mutex mu_;
  // One condition for all watchers: they are few (limits.max_watchers) and
  // only a watched task's change wakes them.
  mutable std::condition_variable cv_;
  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;  // guarded by mu_
  std::atomic<int> feeds_{0};  // open Feeds, read without the lock
  // The last kFeedRing changes while a Feed is open: change number n is at
  // ring_[n % kFeedRing]; seq_ is the number of the last one.
  std::vector<std::string> ring_;  // guarded by mu_
  uint64_t seq_ = 0;               // guarded by mu_
};

}  // namespace apollo::orchestrator
