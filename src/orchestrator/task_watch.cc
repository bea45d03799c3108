#include "orchestrator/task_watch.h"

namespace apollo::orchestrator {

TaskWatchHub::Watch::Watch(TaskWatchHub& hub, std::string task_id)
    : hub_(hub), task_id_(std::move(task_id)) {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  ++hub_.entries_[task_id_].watchers;
  hub_.watched_.store(static_cast<int>(hub_.entries_.size()));
}

TaskWatchHub::Watch::~Watch() {
  std::lock_guard<std::mutex> lock(hub_.mu_);
  auto it = hub_.entries_.find(task_id_);
  if (it != hub_.entries_.end() && --it->second.watchers == 0) hub_.entries_.erase(it);
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

void TaskWatchHub::Notify(std::string_view task_id) {
  if (watched_.load(std::memory_order_relaxed) == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(task_id);
    if (it == entries_.end()) return;
    ++it->second.generation;
  }
  cv_.notify_all();
}

}  // namespace apollo::orchestrator
