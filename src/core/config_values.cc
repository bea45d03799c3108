#include "core/config_values.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <sys/stat.h>

namespace apollo {
namespace {

constexpr std::string_view kHostPortHint = "; expected host:port such as 127.0.0.1:7011";
constexpr std::string_view kDurationHint =
    " is not a duration; use whole seconds (10) or a number with a unit ms, s, m, h, d "
    "(500ms, 10s, 2m, 1h30m)";
constexpr size_t kMaxHostLength = 253;  // DNS

std::string Quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 80)) out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  if (s.size() > 80) out += "...";
  return out + "'";
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::optional<int64_t> Digits(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

Status BadHostPort(std::string_view text, std::string_view why) {
  return Status::InvalidArgument(Quoted(text) + " " + std::string(why) +
                                 std::string(kHostPortHint));
}

// Microseconds per unit, 0 for an unknown unit.
int64_t UnitMicros(std::string_view unit) {
  if (unit == "ms") return 1'000;
  if (unit == "s") return 1'000'000;
  if (unit == "m") return 60'000'000;
  if (unit == "h") return 3'600'000'000;
  if (unit == "d") return 86'400'000'000;
  return 0;
}

}  // namespace

std::string HostPort::ToString() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<HostPort> ParseHostPort(std::string_view text, bool allow_any_port) {
  if (text.empty()) return Status::InvalidArgument("the address is empty" + std::string(kHostPortHint));
  std::string_view host, port;
  bool v6 = false;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return BadHostPort(text, "has no closing ']'");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return BadHostPort(text, "has no port");
    port = rest.substr(1);
    v6 = true;
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return BadHostPort(text, "has no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return BadHostPort(text, "has an IPv6 host without brackets (write [::1]:7011)");
    }
  }
  if (host.empty()) return BadHostPort(text, "has no host (use 0.0.0.0 for every interface)");
  if (host.size() > kMaxHostLength) return BadHostPort(text, "has a host name that is too long");
  for (char c : host) {
    bool ok = v6 ? (IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
                    c == '.')
                 : (IsDigit(c) || IsAlpha(c) || c == '.' || c == '-' || c == '_');
    if (!ok) return BadHostPort(text, "has a character that is not allowed in a host");
  }
  auto p = Digits(port);
  if (port.empty()) return BadHostPort(text, "has no port");
  if (!p || port.front() == '+' || port.front() == '-') {
    return BadHostPort(text, "has a port that is not a number");
  }
  if (*p == 0 && allow_any_port) return HostPort{std::string(host), 0};
  if (*p < 1 || *p > 65535) return BadHostPort(text, "has a port outside 1..65535");
  return HostPort{std::string(host), static_cast<uint16_t>(*p)};
}

Result<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("the duration is empty; use e.g. 10, 10s, 2m, 1h");
  if (text.front() == '-' || text.front() == '+') {
    return Status::InvalidArgument(Quoted(text) + std::string(kDurationHint));
  }
  if (auto seconds = Digits(text)) {
    if (*seconds > std::numeric_limits<int64_t>::max() / 1'000'000) {
      return Status::InvalidArgument(Quoted(text) + " is too large a duration");
    }
    return Duration(*seconds * 1'000'000);
  }
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    size_t unit_start = i;
    while (i < text.size() && IsAlpha(text[i])) ++i;
    auto number = Digits(text.substr(start, unit_start - start));
    int64_t unit = UnitMicros(text.substr(unit_start, i - unit_start));
    if (!number || unit == 0) return Status::InvalidArgument(Quoted(text) + std::string(kDurationHint));
    if (*number > (std::numeric_limits<int64_t>::max() - total) / unit) {
      return Status::InvalidArgument(Quoted(text) + " is too large a duration");
    }
    total += *number * unit;
  }
  return Duration(total);
}

std::string FormatDuration(Duration d) {
  int64_t us = d.count();
  if (us == 0) return "0";
  std::string out;
  if (us < 0) {
    out = "-";
    us = -us;
  }
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {86'400'000'000, "d"}, {3'600'000'000, "h"}, {60'000'000, "m"},
      {1'000'000, "s"},      {1'000, "ms"},        {1, "us"}};
  for (auto [size, name] : kUnits) {
    if (us >= size) {
      out += std::to_string(us / size) + name;
      us %= size;
    }
  }
  return out;
}

Result<std::string> ReadConfigFile(const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int e = errno;
    std::string m = "cannot read " + path + ": " + std::strerror(e);
    return e == ENOENT ? Status::NotFound(m) : Status::PermissionDenied(m);
  }
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::PermissionDenied("cannot read " + path + ": " + std::strerror(errno));
  std::string data(max_bytes + 1, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (data.size() > max_bytes) {
    return Status::InvalidArgument(path + " is larger than " + std::to_string(max_bytes) +
                                   " bytes; is it really a config file?");
  }
  return data;
}

std::string JoinDiagnostics(const std::vector<Diagnostic>& errors) {
  std::string out;
  for (const auto& d : errors) out += (out.empty() ? "" : "\n") + d.ToString();
  return out;
}

bool HasDotComponent(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "." || part == "..") return true;
    start = end + 1;
  }
  return false;
}

}  // namespace apollo
