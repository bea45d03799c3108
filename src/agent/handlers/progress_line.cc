#include "agent/handlers/progress_line.h"

#include <charconv>
#include <cmath>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/params.h"

namespace apollo::agent {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "0.4" in [0, 1] or "40%" in [0, 100], as a fraction.
std::optional<double> ParseFraction(std::string_view token) {
  const bool percent = !token.empty() && token.back() == '%';
  if (percent) token.remove_suffix(1);
  // Digits and one '.', nothing else: no sign, exponent, "inf" or "nan".
  if (token.empty() || token.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value,
                                   std::chars_format::fixed);
  if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  if (percent) value /= 100;
  if (value < 0 || value > 1) return std::nullopt;
  return value;
}

}  // namespace

std::optional<Progress> ParseProgressLine(std::string_view line) {
  const std::string_view marker = kProgressMarker;
  if (line.substr(0, marker.size()) != marker) return std::nullopt;
  std::string_view rest = TrimBlanks(line.substr(marker.size()));
  size_t blank = 0;
  while (blank < rest.size() && !IsBlank(rest[blank])) ++blank;
  std::optional<double> fraction = ParseFraction(rest.substr(0, blank));
  if (!fraction) return std::nullopt;
  std::string_view message = TrimBlanks(rest.substr(blank));
  if (message.size() > kMaxProgressMessage) message = message.substr(0, kMaxProgressMessage);
  Progress p;
  p.fraction = *fraction;
  p.message = ToValidUtf8(message);  // a cut multi-byte character becomes U+FFFD
  return p;
}

}  // namespace apollo::agent
