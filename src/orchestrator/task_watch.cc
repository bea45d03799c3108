#include "orchestrator/task_watch.h"

#include <algorithm>
#include <unordered_set>

namespace apollo::orchestrator {

TaskWatchHub::Watch::Watch(TaskWatchHub& hub, std::string task_id)
    : hub_(hub), task_id_(std::move(task_id)) {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  hub_.entries_[task_id_].watches.push_back(this);
  hub_.watched_.store(static_cast<int>(hub_.entries_.size()));
}

TaskWatchHub::Watch::~Watch() {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  auto it = hub_.entries_.find(task_id_);
  if (it != hub_.entries_.end()) {
    std::erase(it->second.watches, this);
    if (it->second.watches.empty()) hub_.entries_.erase(it);
  }
  hub_.watched_.store(static_cast<int>(hub_.entries_.size()));
}

uint64_t TaskWatchHub::Watch::generation() const {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  auto it = hub_.entries_.find(task_id_);
  return it == hub_.entries_.end() ? 0 : it->second.generation;
}

void TaskWatchHub::Watch::WaitPast(uint64_t seen, Duration timeout) const {
  std::unique_lock<std::mutex> lock(hub_.mu_);
  hub_.cv_.wait_for(lock, timeout, [&] {
    auto it = hub_.entries_.find(task_id_);
    return it == hub_.entries_.end() || it->second.generation != seen;
  });
}

TaskWatchHub::Watch::Changes TaskWatchHub::Watch::Take() {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  Changes out = std::move(pending_);
  pending_ = Changes{};
  return out;
}

bool TaskWatchHub::Watch::Wait(Duration timeout) const {
  std::unique_lock<std::mutex> lock(hub_.mu_);
  return hub_.cv_.wait_for(lock, timeout,
                           [&] { return pending_.stale || !pending_.commits.empty(); });
}

TaskWatchHub::Feed::Feed(TaskWatchHub& hub) : hub_(hub) {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  if (hub_.ring_.empty()) hub_.ring_.resize(kFeedRing);
  cursor_ = hub_.seq_;
  hub_.feeds_.fetch_add(1);
}

TaskWatchHub::Feed::~Feed() {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  if (hub_.feeds_.fetch_sub(1) == 1) {
    // The last one: give the ring's memory back.
    std::vector<std::string>().swap(hub_.ring_);
  }
}

TaskWatchHub::Feed::Changes TaskWatchHub::Feed::Next(Duration timeout, size_t max) {
  Changes out;
  std::unique_lock<std::mutex> lock(hub_.mu_);
  hub_.cv_.wait_for(lock, timeout, [&] { return hub_.seq_ != cursor_; });
  if (hub_.seq_ - cursor_ > kFeedRing) {
    out.overflow = true;
    cursor_ = hub_.seq_;
    return out;
  }
  std::unordered_set<std::string_view> seen;
  while (cursor_ != hub_.seq_ && out.task_ids.size() < max) {
    ++cursor_;
    const std::string& id = hub_.ring_[cursor_ % kFeedRing];
    if (seen.insert(id).second) out.task_ids.push_back(id);
  }
  return out;
}

void TaskWatchHub::Notify(std::string_view task_id) { Tell(task_id, nullptr); }

void TaskWatchHub::Publish(const store::TaskChange& change) { Tell(change.task_id, &change); }

void TaskWatchHub::Tell(std::string_view task_id, const store::TaskChange* change) {
  const bool feeds = feeds_.load(std::memory_order_relaxed) > 0;
  if (!feeds && watched_.load(std::memory_order_relaxed) == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool wake = false;
    if (feeds && !ring_.empty()) {
      ++seq_;
      ring_[seq_ % kFeedRing].assign(task_id);
      wake = true;
    }
    if (auto it = entries_.find(task_id); it != entries_.end()) {
      ++it->second.generation;
      std::shared_ptr<const store::TaskChange> copy;
      if (change) copy = std::make_shared<const store::TaskChange>(*change);
      for (Watch* w : it->second.watches) {
        if (!copy || w->pending_.commits.size() >= Watch::kMaxQueued) {
          w->pending_.stale = true;
        } else {
          w->pending_.commits.push_back(copy);
        }
      }
      wake = true;
    }
    if (!wake) return;
  }
  cv_.notify_all();
}

}  // namespace apollo::orchestrator
