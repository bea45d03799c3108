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
// A commit of agent events comes with what it changed (Publish, from the
// store's writer the moment it committed: store/task_change.h). Each Watch
// of the task queues it, and its watcher brings the copy it read up to
// date without reading the task again (store::CatchUp). Any other change
// (Notify) makes the watch stale: its watcher reads.
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
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "store/task_change.h"

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

    // What was told since the last Take: the commits handed over, in
    // commit order, and whether any change came without its rows (then
    // the task must be read). Take before reading the task: what comes
    // during the read is kept for the next Take.
    struct Changes {
      bool stale = false;
      std::vector<std::shared_ptr<const store::TaskChange>> commits;
    };
    Changes Take();
    // True once there is something to Take; false after `timeout`.
    bool Wait(Duration timeout) const;

    // Commits queued past this make the watch stale instead.
    static constexpr size_t kMaxQueued = 64;

   private:
    friend class TaskWatchHub;
    TaskWatchHub& hub_;
    const std::string task_id_;
    Changes pending_;  // guarded by hub_.mu_
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
  // A commit changed the task's rows as `change` says; copied only when the
  // task is watched.
  void Publish(const store::TaskChange& change);

 private:
  struct Entry {
    std::vector<Watch*> watches;
    uint64_t generation = 0;
  };
  // Notify and Publish: `change` null for a change without its rows.
  void Tell(std::string_view task_id, const store::TaskChange* change);
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
