#pragma once

// Internal to core: reading yaml-cpp nodes into typed values while
// collecting Diagnostics instead of throwing. Used by task_spec_parse.cc.
//
// yaml-cpp's own accessors throw and its operator[] on a non-const map
// inserts; everything here goes through const nodes and explicit checks.
//
// Thread-safety: a YamlReader is used by one thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/task_spec.h"

namespace apollo::internal {

// One mapping, its fields in file order, duplicates and unknowns reported.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

class YamlReader {
 public:
  YamlReader(std::string_view file, const ParseLimits& limits, std::vector<Diagnostic>* out)
      : file_(file), limits_(limits), out_(out) {}

  const ParseLimits& limits() const { return limits_; }

  void Error(const YAML::Mark& at, std::string message);
  void Error(const YAML::Node& at, std::string message) { Error(at.Mark(), std::move(message)); }

  // Walks the whole document once, counting nodes (an alias counted each time
  // it is reached) and depth, and stops at the first limit it meets. Returns
  // false, with a diagnostic, if a limit is exceeded.
  bool CheckBounds(const YAML::Node& root);

  // The fields of `map` (which must be a mapping; `what` names it in
  // messages). Reports non-scalar keys, duplicates, and keys not in
  // `allowed`; those are left out of the result.
  std::vector<Field> Fields(const YAML::Node& map, std::string_view what,
                            const std::vector<std::string_view>& allowed);

  // Typed scalars. Each reports "'<name>' must be ..." at the node and
  // returns nullopt when the node is not of the type.
  std::optional<std::string> String(const YAML::Node& n, std::string_view name);
  std::optional<int64_t> Integer(const YAML::Node& n, std::string_view name);
  std::optional<bool> Bool(const YAML::Node& n, std::string_view name);
  std::optional<std::vector<std::pair<std::string, YAML::Node>>> StringList(
      const YAML::Node& n, std::string_view name);

  // A YAML subtree as JSON (plain scalars typed as YAML 1.2's core schema,
  // quoted scalars as strings), within the depth/node limits; then its
  // serialized size checked against max_payload_bytes.
  std::optional<nlohmann::json> Json(const YAML::Node& n, std::string_view name);

 private:
  bool Walk(const YAML::Node& n, int depth, size_t* visited);
  bool ToJson(const YAML::Node& n, int depth, nlohmann::json* out);

  std::string file_;
  const ParseLimits& limits_;
  std::vector<Diagnostic>* out_;
};

// "'abc'" with control characters escaped and long values shortened, for
// quoting user input in messages.
std::string Quote(std::string_view s);

// Levenshtein distance, for "did you mean" on misspelt names.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace apollo::internal
