#pragma once

// exec's progress protocol: a command reports how far it got by printing a
// line to stdout
//
//   ::progress:: <fraction> [message]
//
// <fraction> is a number in [0, 1] ("0.4") or a percentage in [0, 100]
// ("40%", "42.5%"); the message is the rest of the line, trimmed, made
// valid UTF-8 and cut to kMaxProgressMessage bytes. A line that starts with
// the marker but does not parse (a fraction out of range, not a number) is
// ordinary output.
//
// Thread-safety: a pure function.

#include <cstddef>
#include <optional>
#include <string_view>

#include "agent/handlers/handler.h"

namespace apollo::agent {

inline constexpr size_t kMaxProgressMessage = 512;

// The progress a line reports (Progress::at left unset), or nullopt if it
// is not a progress line.
std::optional<Progress> ParseProgressLine(std::string_view line);

}  // namespace apollo::agent
