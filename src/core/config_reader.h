#pragma once

// Internal to the config loaders (agent/agent_config.cc,
// orchestrator/orchestrator_config.cc): typed, range-checked settings read
// from yaml-cpp nodes through a YamlReader, so both daemons word their
// errors alike and accept the same forms (config_values.h).
//
// Every Read* reports "'<name>' ..." at the node and returns false when the
// value is wrong; *out is written only on success, so it keeps its default.
//
// Thread-safety: a YamlReader and these helpers are used by one thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/config_values.h"
#include "core/task_spec.h"
#include "core/yaml_reader.h"

namespace apollo::internal {

// The skeleton every config file shares: size bound, YAML syntax, depth and
// alias bounds, a mapping at the root. An empty file is valid (all defaults)
// and `body` sees a null root. `body` runs only if the document is a mapping
// or empty; yaml-cpp exceptions from anywhere are caught and reported.
// Diagnostics are sorted by position.
void ParseConfigDocument(std::string_view content, std::string_view file,
                         std::vector<Diagnostic>* errors,
                         const std::function<void(YamlReader&, const YAML::Node&)>& body);

// Reports "'<name>' must be a mapping (<hint>)" unless `n` is one.
bool RequireMap(YamlReader& r, const YAML::Node& n, std::string_view name,
                std::string_view hint);

// The entries of an open-ended map (labels, handlers, presets): non-scalar
// keys and duplicates are reported and left out. nullopt if not a map.
std::optional<std::vector<Field>> MapEntries(YamlReader& r, const YAML::Node& n,
                                             std::string_view name);

// An integer in [min, max].
bool ReadInt(YamlReader& r, const YAML::Node& n, std::string_view name, int64_t min,
             int64_t max, int64_t* out);
template <typename T>
bool ReadInt(YamlReader& r, const YAML::Node& n, std::string_view name, int64_t min,
             int64_t max, T* out) {
  int64_t v = 0;
  if (!ReadInt(r, n, name, min, max, &v)) return false;
  *out = static_cast<T>(v);
  return true;
}

// A number (integer or decimal) in [min, max].
bool ReadNumber(YamlReader& r, const YAML::Node& n, std::string_view name, double min,
                double max, double* out);

// A duration (config_values.h: integer seconds or "10s", "2m", ...) in
// [min, max].
bool ReadDuration(YamlReader& r, const YAML::Node& n, std::string_view name, Duration min,
                  Duration max, Duration* out);

// `allow_any_port`: as ParseHostPort's (port 0 for a listen address).
bool ReadHostPort(YamlReader& r, const YAML::Node& n, std::string_view name, HostPort* out,
                  bool allow_any_port = false);

// A name with the task_id alphabet (letters, digits, '.', '_', '-'; at most
// 128 characters); with `allow_slash` also '/' (label keys and values,
// groups, as in task selectors).
bool ReadName(YamlReader& r, const YAML::Node& n, std::string_view name, bool allow_slash,
              std::string* out);
// Empty when `v` is a valid name in the sense of ReadName, else the reason
// ("'<what>' '<v>' is not a valid name: ...").
std::string NameProblem(std::string_view what, std::string_view v, bool allow_slash);
// The same for a key of the open-ended map `map_name` ("key '<v>' in
// '<map_name>' is not a valid name: ...").
std::string KeyProblem(std::string_view map_name, std::string_view v, bool allow_slash);

// A non-empty file system path; absolute when `absolute` is set.
bool ReadPath(YamlReader& r, const YAML::Node& n, std::string_view name, bool absolute,
              std::string* out);

// A list of strings with no duplicates, each passed to `check` (which
// reports its own error and returns false to drop the entry).
bool ReadUniqueList(YamlReader& r, const YAML::Node& n, std::string_view name,
                    const std::function<bool(const std::string&, const YAML::Node&)>& check,
                    std::vector<std::string>* out);

}  // namespace apollo::internal
