#pragma once

// Typed access to a handler's JSON params, with errors as values.
//
// Every getter returns InvalidArgument with a message naming the handler and
// the param ("exec: params.argv must be a non-empty list of strings"), so a
// handler can turn it straight into FAILED. None of them throws.
//
// Thread-safety: pure functions.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace apollo::agent {

// The params must be an object (null counts as an empty object).
Status CheckParamsObject(std::string_view handler, const nlohmann::json& params);

// A required string.
Result<std::string> RequiredString(std::string_view handler,
                                   const nlohmann::json& params,
                                   std::string_view key);

// An optional string; nullopt if absent or null.
Result<std::optional<std::string>> OptionalString(std::string_view handler,
                                                  const nlohmann::json& params,
                                                  std::string_view key);

// A list of strings; `non_empty` rejects []. Absent -> nullopt.
Result<std::optional<std::vector<std::string>>> OptionalStringList(
    std::string_view handler, const nlohmann::json& params, std::string_view key,
    bool non_empty);

// An object of string values. Absent or null -> empty map.
Result<std::map<std::string, std::string>> OptionalStringMap(
    std::string_view handler, const nlohmann::json& params, std::string_view key);

// A finite number in [min, max]. Absent -> nullopt.
Result<std::optional<double>> OptionalNumber(std::string_view handler,
                                             const nlohmann::json& params,
                                             std::string_view key, double min,
                                             double max);

// Replaces invalid UTF-8 with U+FFFD, so captured process output can always
// be put into JSON and serialised.
std::string ToValidUtf8(std::string_view bytes);

}  // namespace apollo::agent
