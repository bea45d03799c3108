#include "store/task_change.h"

#include <algorithm>

namespace apollo::store {

bool CatchUp(TaskRow& row, const TaskChange& c) {
  if (c.task_id != row.spec.task_id || row.spec.rollout || row.rollout) return false;
  if (c.node_count != static_cast<int>(row.nodes.size()) || c.nodes.size() != row.nodes.size()) {
    return false;
  }
  std::vector<NodeRow*> targets;
  targets.reserve(c.nodes.size());
  size_t newer = 0;
  for (const NodeRowChange& n : c.nodes) {
    auto it = std::find_if(row.nodes.begin(), row.nodes.end(),
                           [&](const NodeRow& r) { return r.node_id == n.node_id; });
    if (it == row.nodes.end() || n.result_elsewhere) return false;
    if (std::find(targets.begin(), targets.end(), &*it) != targets.end()) return false;
    targets.push_back(&*it);
    if (n.version > it->version) {
      if (it->version != n.from_version) return false;  // a commit in between
      ++newer;
    }
  }
  if (newer == 0) return true;  // the copy already holds this commit
  if (newer != c.nodes.size()) return false;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const NodeRowChange& n = c.nodes[i];
    NodeRow& r = *targets[i];
    r.state = n.state;
    r.version = n.version;
    r.attempt = n.attempt;
    r.retries = n.retries;
    r.updated_at = n.updated_at;
    r.due_kind = n.due_kind;
    r.due_at = n.due_at;
    r.start_deadline = n.start_deadline;
    r.extensions = n.extensions;
    r.permanent = n.permanent;
    if (n.last_error) r.last_error = *n.last_error;
    if (n.blocked_reason) r.blocked_reason = *n.blocked_reason;
    if (n.result) {
      r.result = *n.result;
      r.result_ref.reset();
    }
  }
  row.status = c.status;
  if (c.status_at) row.updated_at = *c.status_at;
  return true;
}

}  // namespace apollo::store
