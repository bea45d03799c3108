// Selectors that follow the fleet: at each Hello (a node registers, or comes
// back with other labels or groups), every following task whose selector
// the node now matches gets a row there — once: the store keeps one row per
// (task, node), and the center remembers the pairs it already settled.
#include <algorithm>

#include "orchestrator/orchestrator.h"
#include "orchestrator/submit.h"

namespace apollo::orchestrator {
namespace {

bool Matches(const TargetSelector& sel, const store::NodeInfo& node) {
  switch (sel.type) {
    case SelectorType::kLabel: {
      auto it = node.labels.find(sel.key);
      return it != node.labels.end() && it->second == sel.value;
    }
    case SelectorType::kGroup:
      return std::find(node.groups.begin(), node.groups.end(), sel.group) != node.groups.end();
    case SelectorType::kNodes:
      return false;
  }
  return false;
}

}  // namespace

void Orchestrator::FollowNode(const store::NodeInfo& node) {
  std::vector<store::FollowingTask> following;
  {
    std::lock_guard<std::mutex> lock(follow_mu_);
    const TimePoint now = clock_.Now();
    if (following_stale_ || now - following_read_ >= kFollowingRefresh) {
      auto r = store_.ListFollowing();
      if (!r.ok()) return;  // the store is unavailable: the next Hello tries again
      following_ = std::move(*r);
      following_read_ = now;
      following_stale_ = false;
    }
    following = following_;
  }
  bool added_any = false;
  for (const store::FollowingTask& f : following) {
    if (!Matches(f.selector, node)) continue;
    {
      std::lock_guard<std::mutex> lock(follow_mu_);
      if (followed_.count({f.task_id, node.node_id})) continue;
    }
    auto added =
        store_.AddFollowRow(f.task_id, node.node_id,
                            "node " + node.node_id + " matches " + DescribeSelector(f.selector) +
                                " (follow): it gets the task");
    if (!added.ok()) {
      if (added.status().code() == StatusCode::kFailedPrecondition) {
        std::lock_guard<std::mutex> lock(follow_mu_);
        following_stale_ = true;  // stopped following meanwhile
      }
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(follow_mu_);
      if (followed_.size() >= kMaxFollowed) followed_.clear();  // a bound; the store decides
      followed_.insert({f.task_id, node.node_id});
    }
    if (*added) {
      if (bus_ != nullptr) bus_->RowsStored({{f.task_id, node.node_id}});
      task_watches_.Notify(f.task_id);
      added_any = true;
    }
  }
  if (added_any) Kick();
}

void Orchestrator::FollowingStored(const std::vector<std::pair<std::string, std::string>>& rows) {
  {
    std::lock_guard<std::mutex> lock(follow_mu_);
    following_stale_ = true;
    for (const auto& r : rows) followed_.insert(r);  // resolved at submit: they have one
  }
  // A node that registered between the submit's resolve and the store has
  // no row yet: one sweep over the registered nodes gives it one.
  auto nodes = store_.ListNodes();
  if (!nodes.ok()) return;  // its next Hello does
  for (const store::NodeInfo& n : *nodes) {
    if (n.registered) FollowNode(n);
  }
}

void Orchestrator::FollowingChanged() {
  std::lock_guard<std::mutex> lock(follow_mu_);
  following_stale_ = true;
}

}  // namespace apollo::orchestrator
