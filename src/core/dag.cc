#include "core/dag.h"

#include <functional>
#include <queue>
#include <unordered_map>

namespace apollo {
namespace {

struct Graph {
  std::unordered_map<std::string, size_t> index;
  const std::vector<DagNode>* nodes;

  explicit Graph(const std::vector<DagNode>& n) : nodes(&n) {
    for (size_t i = 0; i < n.size(); ++i) index.emplace(n[i].id, i);
  }
};

}  // namespace

std::optional<std::vector<std::string>> FindCycle(const std::vector<DagNode>& nodes) {
  Graph g(nodes);
  enum Color : char { kWhite, kGrey, kBlack };
  std::vector<Color> color(nodes.size(), kWhite);
  // Iterative DFS so a long chain cannot overflow the stack.
  struct Frame {
    size_t node;
    size_t next_dep;
  };
  for (size_t root = 0; root < nodes.size(); ++root) {
    if (color[root] != kWhite) continue;
    std::vector<Frame> stack{{root, 0}};
    color[root] = kGrey;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& deps = nodes[f.node].deps;
      if (f.next_dep == deps.size()) {
        color[f.node] = kBlack;
        stack.pop_back();
        continue;
      }
      auto it = g.index.find(deps[f.next_dep++]);
      if (it == g.index.end()) continue;
      size_t d = it->second;
      if (color[d] == kGrey) {
        std::vector<std::string> cycle;
        size_t start = 0;
        while (stack[start].node != d) ++start;
        for (size_t i = start; i < stack.size(); ++i) cycle.push_back(nodes[stack[i].node].id);
        cycle.push_back(nodes[d].id);
        return cycle;
      }
      if (color[d] == kWhite) {
        color[d] = kGrey;
        stack.push_back({d, 0});
      }
    }
  }
  return std::nullopt;
}

std::string FormatCycle(const std::vector<std::string>& cycle) {
  std::string out;
  for (size_t i = 0; i < cycle.size(); ++i) {
    if (i) out += " -> ";
    out += cycle[i];
  }
  return out;
}

std::optional<std::vector<std::string>> TopologicalOrder(const std::vector<DagNode>& nodes) {
  Graph g(nodes);
  std::vector<int> waiting(nodes.size(), 0);
  std::vector<std::vector<size_t>> dependents(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& dep : nodes[i].deps) {
      auto it = g.index.find(dep);
      if (it == g.index.end()) continue;
      waiting[i]++;
      dependents[it->second].push_back(i);
    }
  }
  // Kahn's algorithm; a min-heap of indexes keeps input order among ready nodes.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<std::string> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(nodes[i].id);
    for (size_t d : dependents[i]) {
      if (--waiting[d] == 0) ready.push(d);
    }
  }
  if (order.size() < nodes.size()) return std::nullopt;
  return order;
}

}  // namespace apollo
