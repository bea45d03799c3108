#include "agent/handlers/params.h"

#include <cmath>

namespace apollo::agent {
namespace {

using nlohmann::json;

Status Invalid(std::string_view handler, std::string_view key, std::string_view what) {
  return Status::InvalidArgument(std::string(handler) + ": params." +
                                 std::string(key) + " " + std::string(what));
}

const json* Find(const json& params, std::string_view key) {
  if (!params.is_object()) return nullptr;
  auto it = params.find(std::string(key));
  if (it == params.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

Status CheckParamsObject(std::string_view handler, const json& params) {
  if (params.is_null() || params.is_object()) return Status::Ok();
  return Status::InvalidArgument(std::string(handler) + ": params must be an object");
}

Result<std::string> RequiredString(std::string_view handler, const json& params,
                                   std::string_view key) {
  const json* v = Find(params, key);
  if (v == nullptr) return Invalid(handler, key, "is required");
  if (!v->is_string()) return Invalid(handler, key, "must be a string");
  return v->get<std::string>();
}

Result<std::optional<std::string>> OptionalString(std::string_view handler,
                                                  const json& params,
                                                  std::string_view key) {
  const json* v = Find(params, key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return Invalid(handler, key, "must be a string");
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::optional<std::vector<std::string>>> OptionalStringList(
    std::string_view handler, const json& params, std::string_view key, bool non_empty) {
  const std::string_view what =
      non_empty ? "must be a non-empty list of strings" : "must be a list of strings";
  const json* v = Find(params, key);
  if (v == nullptr) return std::optional<std::vector<std::string>>();
  if (!v->is_array() || (non_empty && v->empty())) return Invalid(handler, key, what);
  std::vector<std::string> out;
  for (const json& item : *v) {
    if (!item.is_string()) return Invalid(handler, key, what);
    out.push_back(item.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::map<std::string, std::string>> OptionalStringMap(
    std::string_view handler, const json& params, std::string_view key) {
  std::map<std::string, std::string> out;
  const json* v = Find(params, key);
  if (v == nullptr) return out;
  if (!v->is_object()) return Invalid(handler, key, "must be an object of strings");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it.value().is_string()) {
      return Invalid(handler, key, "must be an object of strings (" + it.key() + ")");
    }
    out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

Result<std::optional<double>> OptionalNumber(std::string_view handler, const json& params,
                                             std::string_view key, double min, double max) {
  const json* v = Find(params, key);
  if (v == nullptr) return std::optional<double>();
  if (!v->is_number()) return Invalid(handler, key, "must be a number");
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    return Invalid(handler, key,
                   "must be between " + json(min).dump() + " and " + json(max).dump());
  }
  return std::optional<double>(d);
}

std::string ToValidUtf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3
                                 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= in.size();
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
    }
    if (ok && len > 1) {
      // Reject overlong forms, surrogates and code points past U+10FFFF.
      uint32_t cp = c & (0xFF >> (len + 1));
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (in[i + k] & 0x3F);
      static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (ok) {
      out.append(in.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

}  // namespace apollo::agent
