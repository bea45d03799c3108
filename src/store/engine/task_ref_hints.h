#pragma once

// task_id -> task_ref of the tasks a writer has created or read lately, so
// the events' locked read can reach each node row by its whole key
// (task_ref, node_ref) instead of through the tasks table's text index.
//
// A hint, never a fact: a statement that uses one also checks the task id
// (tasks are purged and their ids made again; a rolled-back insert's ref may
// go to another task), so a stale hint finds no row and the caller asks by
// id, which gives the right hint for next time. Bounded: the oldest goes
// first. Shared by a store's writers (one creates, another applies the
// events on PostgreSQL), so thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace apollo::store::engine {

class TaskRefHints {
 public:
  explicit TaskRefHints(size_t capacity) : capacity_(capacity) {}

  std::optional<int64_t> Find(std::string_view task_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = refs_.find(task_id);
    if (it == refs_.end()) return std::nullopt;
    return it->second;
  }

  void Put(std::string_view task_id, int64_t ref) {
    if (capacity_ == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = refs_.find(task_id);
    if (it != refs_.end()) {
      it->second = ref;
      return;
    }
    while (refs_.size() >= capacity_ && !order_.empty()) {
      refs_.erase(refs_.find(order_.front()));  // there: each key has one view
      order_.pop_front();
    }
    auto [made, _] = refs_.emplace(std::string(task_id), ref);
    order_.push_back(made->first);
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refs_.size();
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> refs_;  // mu_
  // Each key of refs_ once, oldest first: views of refs_' keys, which stay
  // put (a node-based map) until the eviction that pops the view erases them.
  std::deque<std::string_view> order_;  // mu_
};

}  // namespace apollo::store::engine
