#include "core/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/task_spec_rules.h"

namespace apollo::internal {
namespace {

bool IsPlain(const YAML::Node& n) { return n.Tag() != "!"; }

bool IsNullScalar(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> BoolScalar(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

std::optional<int64_t> IntScalar(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> FloatScalar(const std::string& s) {
  // YAML 1.2 core schema floats: [-+]? ( . [0-9]+ | [0-9]+ ( . [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') digit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') return std::nullopt;
  }
  if (!digit) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// `c` as a message shows it: control characters escaped, so a message is
// one printable line whatever the file holds.
void AppendShown(char c, std::string* out) {
  if (c == '\n') {
    *out += "\\n";
  } else if (c == '\t') {
    *out += "\\t";
  } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
    *out += '?';
  } else {
    *out += c;
  }
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1] ? 1 : 0)});
      prev = cur;
    }
  }
  return row[b.size()];
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  size_t n = 0;
  for (char c : s) {
    if (++n > 60) {
      out += "...";
      break;
    }
    AppendShown(c, &out);
  }
  return out + "'";
}

void YamlReader::Error(const YAML::Mark& at, std::string message) {
  // yaml-cpp marks are 0-based and -1 when unknown.
  int line = at.line >= 0 ? at.line + 1 : 1;
  int column = at.column >= 0 ? at.column + 1 : 1;
  // yaml-cpp's own messages quote the offending character raw
  // ("unknown escape character: " and a line break).
  std::string shown;
  shown.reserve(message.size());
  for (char c : message) AppendShown(c, &shown);
  out_->push_back(Diagnostic{file_, line, column, std::move(shown), /*task_index=*/-1});
}

bool YamlReader::Walk(const YAML::Node& n, int depth, size_t* visited) {
  if (++*visited > limits_.max_nodes) {
    Error(n, "document has more than " + std::to_string(limits_.max_nodes) +
                 " nodes once aliases are expanded (alias bomb?); refusing it");
    return false;
  }
  if (depth > limits_.max_depth) {
    Error(n, DepthProblem(limits_));
    return false;
  }
  if (n.IsSequence() || n.IsMap()) {
    const bool is_map = n.IsMap();
    for (const auto& item : n) {
      if (is_map) {
        if (!Walk(item.first, depth + 1, visited) || !Walk(item.second, depth + 1, visited)) {
          return false;
        }
      } else if (!Walk(item, depth + 1, visited)) {
        return false;
      }
    }
  }
  return true;
}

bool YamlReader::CheckBounds(const YAML::Node& root) {
  size_t visited = 0;
  return Walk(root, 0, &visited);
}

std::vector<Field> YamlReader::Fields(const YAML::Node& map, std::string_view what,
                                      const std::vector<std::string_view>& allowed) {
  std::vector<Field> fields;
  std::set<std::string> seen;
  for (const auto& kv : map) {
    const YAML::Node& k = kv.first;
    if (!k.IsScalar()) {
      Error(k, "a key of " + std::string(what) + " must be a plain name");
      continue;
    }
    const std::string& key = k.Scalar();
    if (!seen.insert(key).second) {
      Error(k, "duplicate field " + Quote(key) + " in " + std::string(what));
      continue;
    }
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (!known) {
      std::string_view best;
      size_t best_distance = 3;  // suggest only close matches
      for (auto a : allowed) {
        size_t d = EditDistance(key, a);
        if (d < best_distance) best = a, best_distance = d;
      }
      std::string hint;
      if (!best.empty()) {
        hint = "; did you mean '" + std::string(best) + "'?";
      } else {
        for (auto a : allowed) hint += (hint.empty() ? " (expected one of: " : ", ") + std::string(a);
        hint += ")";
      }
      Error(k, "unknown field " + Quote(key) + " in " + std::string(what) + hint);
      continue;
    }
    fields.push_back(Field{key, k, kv.second});
  }
  return fields;
}

std::optional<std::string> YamlReader::String(const YAML::Node& n, std::string_view name) {
  if (!n.IsScalar()) {
    Error(n, "'" + std::string(name) + "' must be a string");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int64_t> YamlReader::Integer(const YAML::Node& n, std::string_view name) {
  std::optional<int64_t> v;
  if (n.IsScalar() && IsPlain(n)) v = IntScalar(n.Scalar());
  if (!v) {
    Error(n, "'" + std::string(name) + "' must be an integer, got " +
                 (n.IsScalar() ? Quote(n.Scalar()) : std::string("a ") +
                                                          (n.IsMap() ? "mapping" : "list")));
  }
  return v;
}

std::optional<bool> YamlReader::Bool(const YAML::Node& n, std::string_view name) {
  std::optional<bool> v;
  if (n.IsScalar() && IsPlain(n)) v = BoolScalar(n.Scalar());
  if (!v) Error(n, "'" + std::string(name) + "' must be true or false");
  return v;
}

std::optional<std::vector<std::pair<std::string, YAML::Node>>> YamlReader::StringList(
    const YAML::Node& n, std::string_view name) {
  if (!n.IsSequence()) {
    Error(n, "'" + std::string(name) + "' must be a list of strings");
    return std::nullopt;
  }
  std::vector<std::pair<std::string, YAML::Node>> out;
  bool ok = true;
  for (const auto& item : n) {
    if (!item.IsScalar()) {
      Error(item, "each entry of '" + std::string(name) + "' must be a string");
      ok = false;
      continue;
    }
    out.emplace_back(item.Scalar(), item);
  }
  if (!ok) return std::nullopt;
  return out;
}

bool YamlReader::ToJson(const YAML::Node& n, int depth, nlohmann::json* out) {
  if (depth > limits_.max_depth) {
    Error(n, DepthProblem(limits_));
    return false;
  }
  if (n.IsNull()) {
    *out = nullptr;
  } else if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (!IsPlain(n)) {
      *out = s;
    } else if (IsNullScalar(s)) {
      *out = nullptr;
    } else if (auto b = BoolScalar(s)) {
      *out = *b;
    } else if (auto i = IntScalar(s)) {
      *out = *i;
    } else if (auto d = FloatScalar(s)) {
      *out = *d;
    } else {
      *out = s;
    }
  } else if (n.IsSequence()) {
    *out = nlohmann::json::array();
    for (const auto& item : n) {
      nlohmann::json v;
      if (!ToJson(item, depth + 1, &v)) return false;
      out->push_back(std::move(v));
    }
  } else if (n.IsMap()) {
    *out = nlohmann::json::object();
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) {
        Error(kv.first, "keys inside params must be strings");
        return false;
      }
      const std::string& key = kv.first.Scalar();
      if (out->contains(key)) {
        Error(kv.first, "duplicate key " + Quote(key));
        return false;
      }
      nlohmann::json v;
      if (!ToJson(kv.second, depth + 1, &v)) return false;
      (*out)[key] = std::move(v);
    }
  }
  return true;
}

std::optional<nlohmann::json> YamlReader::Json(const YAML::Node& n, std::string_view name) {
  nlohmann::json j;
  if (!ToJson(n, 0, &j)) return std::nullopt;
  if (auto p = PayloadProblem(name, j.dump().size(), limits_); !p.empty()) {
    Error(n, p);
    return std::nullopt;
  }
  return j;
}

}  // namespace apollo::internal
