#pragma once

// Dependency graphs of tasks (depends_on). Pure functions over ids.
//
// Thread-safety: pure functions.

#include <optional>
#include <string>
#include <vector>

namespace apollo {

struct DagNode {
  std::string id;
  std::vector<std::string> deps;  // ids this node waits for
};

// A cycle, if the graph has one: the ids along it with the first repeated at
// the end ("a", "b", "a"). Deps naming ids not in `nodes` are ignored here.
// Deterministic: the first cycle found scanning `nodes` in order.
std::optional<std::vector<std::string>> FindCycle(const std::vector<DagNode>& nodes);

// "a -> b -> a"
std::string FormatCycle(const std::vector<std::string>& cycle);

// The ids in an order where every node comes after its deps (deps not in
// `nodes` ignored); nullopt if there is a cycle. Stable: among ready nodes,
// input order is kept.
std::optional<std::vector<std::string>> TopologicalOrder(const std::vector<DagNode>& nodes);

}  // namespace apollo
