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
// Thread-safety: thread-safe.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

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
};

}  // namespace apollo::orchestrator
