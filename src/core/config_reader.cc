#include "core/config_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <tuple>

#include "core/task_id.h"

namespace apollo::internal {
namespace {

std::string Named(std::string_view name) { return "'" + std::string(name) + "'"; }

std::string Shape(const YAML::Node& n) {
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "nothing";
  return Quote(n.Scalar());
}

std::string Number(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

}  // namespace

void ParseConfigDocument(std::string_view content, std::string_view file,
                         std::vector<Diagnostic>* errors,
                         const std::function<void(YamlReader&, const YAML::Node&)>& body) {
  ParseLimits limits;
  YamlReader r(file, limits, errors);
  if (content.size() > limits.max_file_bytes) {
    r.Error(YAML::Mark(), "file is " + std::to_string(content.size()) + " bytes; the limit is " +
                              std::to_string(limits.max_file_bytes));
    return;
  }
  try {
    YAML::Node root = YAML::Load(std::string(content));
    if (!r.CheckBounds(root)) return;
    if (!root.IsNull() && !root.IsMap()) {
      r.Error(root, "expected a mapping of settings (key: value lines), got " + Shape(root));
    } else {
      body(r, root);
    }
  } catch (const YAML::Exception& e) {
    r.Error(e.mark, "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    r.Error(YAML::Mark(), std::string("could not read the file: ") + e.what());
  }
  std::stable_sort(errors->begin(), errors->end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
}

bool RequireMap(YamlReader& r, const YAML::Node& n, std::string_view name,
                std::string_view hint) {
  if (n.IsMap()) return true;
  r.Error(n, Named(name) + " must be a mapping (" + std::string(hint) + "), got " + Shape(n));
  return false;
}

std::optional<std::vector<Field>> MapEntries(YamlReader& r, const YAML::Node& n,
                                             std::string_view name) {
  if (n.IsNull()) return std::vector<Field>{};  // "labels:" with nothing after it
  if (!n.IsMap()) {
    r.Error(n, Named(name) + " must be a mapping, got " + Shape(n));
    return std::nullopt;
  }
  std::vector<Field> out;
  std::set<std::string> seen;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) {
      r.Error(kv.first, "a key of " + Named(name) + " must be a plain name");
    } else if (!seen.insert(kv.first.Scalar()).second) {
      r.Error(kv.first, "duplicate key " + Quote(kv.first.Scalar()) + " in " + Named(name));
    } else {
      out.push_back(Field{kv.first.Scalar(), kv.first, kv.second});
    }
  }
  return out;
}

bool ReadInt(YamlReader& r, const YAML::Node& n, std::string_view name, int64_t min,
             int64_t max, int64_t* out) {
  auto v = r.Integer(n, name);
  if (!v) return false;
  if (*v < min || *v > max) {
    r.Error(n, Named(name) + " must be between " + std::to_string(min) + " and " +
                   std::to_string(max) + ", got " + std::to_string(*v));
    return false;
  }
  *out = *v;
  return true;
}

bool ReadNumber(YamlReader& r, const YAML::Node& n, std::string_view name, double min,
                double max, double* out) {
  std::optional<double> v;
  if (n.IsScalar() && n.Tag() != "!" && !n.Scalar().empty()) {
    const std::string& s = n.Scalar();
    bool chars_ok = std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    });
    char* end = nullptr;
    double d = chars_ok ? std::strtod(s.c_str(), &end) : 0;
    if (chars_ok && end == s.c_str() + s.size() && std::isfinite(d)) v = d;
  }
  if (!v) {
    r.Error(n, Named(name) + " must be a number, got " + Shape(n));
    return false;
  }
  if (*v < min || *v > max) {
    r.Error(n, Named(name) + " must be between " + Number(min) + " and " + Number(max) +
                   ", got " + Number(*v));
    return false;
  }
  *out = *v;
  return true;
}

bool ReadDuration(YamlReader& r, const YAML::Node& n, std::string_view name, Duration min,
                  Duration max, Duration* out) {
  if (!n.IsScalar()) {
    r.Error(n, Named(name) + " must be a duration (10, 10s, 2m, 1h), got " + Shape(n));
    return false;
  }
  auto d = ParseDuration(n.Scalar());
  if (!d.ok()) {
    r.Error(n, Named(name) + ": " + d.status().message());
    return false;
  }
  if (*d < min || *d > max) {
    r.Error(n, Named(name) + " must be between " + FormatDuration(min) + " and " +
                   FormatDuration(max) + ", got " + FormatDuration(*d));
    return false;
  }
  *out = *d;
  return true;
}

bool ReadHostPort(YamlReader& r, const YAML::Node& n, std::string_view name, HostPort* out,
                  bool allow_any_port) {
  auto s = r.String(n, name);
  if (!s) return false;
  auto hp = ParseHostPort(*s, allow_any_port);
  if (!hp.ok()) {
    r.Error(n, Named(name) + ": " + hp.status().message());
    return false;
  }
  *out = *hp;
  return true;
}

namespace {

std::string NameRule(std::string_view v, bool allow_slash) {
  std::string checked(v);
  if (allow_slash) std::replace(checked.begin(), checked.end(), '/', '_');
  if (TaskIdProblem(checked).empty()) return {};
  return std::string(" is not a valid name: letters, digits, '.', '_', '-'") +
         (allow_slash ? ", '/'" : "") + ", 1 to " + std::to_string(kMaxTaskIdLength) +
         " characters";
}

}  // namespace

std::string NameProblem(std::string_view what, std::string_view v, bool allow_slash) {
  std::string rule = NameRule(v, allow_slash);
  return rule.empty() ? rule : Named(what) + " " + Quote(v) + rule;
}

std::string KeyProblem(std::string_view map_name, std::string_view v, bool allow_slash) {
  std::string rule = NameRule(v, allow_slash);
  return rule.empty() ? rule : "key " + Quote(v) + " in " + Named(map_name) + rule;
}

bool ReadName(YamlReader& r, const YAML::Node& n, std::string_view name, bool allow_slash,
              std::string* out) {
  auto s = r.String(n, name);
  if (!s) return false;
  if (auto p = NameProblem(name, *s, allow_slash); !p.empty()) {
    r.Error(n, p);
    return false;
  }
  *out = *s;
  return true;
}

bool ReadPath(YamlReader& r, const YAML::Node& n, std::string_view name, bool absolute,
              std::string* out) {
  auto s = r.String(n, name);
  if (!s) return false;
  if (s->empty()) {
    r.Error(n, Named(name) + " must not be empty");
    return false;
  }
  if (s->find('\0') != std::string::npos) {
    r.Error(n, Named(name) + " must not contain a NUL character");
    return false;
  }
  if (absolute && s->front() != '/') {
    r.Error(n, Named(name) + " must be an absolute path, got " + Quote(*s));
    return false;
  }
  *out = *s;
  return true;
}

bool ReadUniqueList(YamlReader& r, const YAML::Node& n, std::string_view name,
                    const std::function<bool(const std::string&, const YAML::Node&)>& check,
                    std::vector<std::string>* out) {
  if (n.IsNull()) {  // "groups:" with nothing after it
    out->clear();
    return true;
  }
  auto list = r.StringList(n, name);
  if (!list) return false;
  std::vector<std::string> values;
  std::set<std::string> seen;
  bool ok = true;
  for (const auto& [value, node] : *list) {
    if (!check(value, node)) {
      ok = false;
    } else if (!seen.insert(value).second) {
      r.Error(node, Quote(value) + " is listed twice in " + Named(name));
      ok = false;
    } else {
      values.push_back(value);
    }
  }
  if (ok) *out = std::move(values);
  return ok;
}

}  // namespace apollo::internal
