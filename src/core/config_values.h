#pragma once

// Values shared by the daemons' configuration files (edge-agent.yaml,
// orchestrator.yaml) and their command-line overrides: network addresses,
// durations, and reading a config file with a size bound. One parser for
// each, so the file and the command line accept exactly the same forms.
//
// Everything here is pure except ReadConfigFile, which reads a file (the one
// place in core that does; kept beside the parsers so both daemons load their
// config the same way, and used only at startup).
//
// Thread-safety: values and pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "core/task_spec.h"

namespace apollo {

// "host:port". The host is a DNS name or IPv4 address (letters, digits, '.',
// '-', '_') or a bracketed IPv6 address ("[::1]:7011"); the port 1..65535
// (or 0 where ParseHostPort is told to allow it).
struct HostPort {
  std::string host;  // without brackets, also for IPv6
  uint16_t port = 0;

  // "host:port", IPv6 hosts in brackets: the form gRPC dials and binds.
  std::string ToString() const;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

// InvalidArgument with a message saying what is wrong (no prefix naming the
// field: the caller adds it). `allow_any_port`: port 0 is accepted, meaning
// "any free port" (a listen address in tests).
Result<HostPort> ParseHostPort(std::string_view text, bool allow_any_port = false);

// Durations: a bare integer is seconds ("10"); otherwise one or more
// <integer><unit> parts, unit one of ms, s, m, h, d ("500ms", "2m", "1h30m").
// Negative values, fractions and overflow are refused. Kept in microseconds
// (core's Duration) so config values compare directly with Clock readings.
Result<Duration> ParseDuration(std::string_view text);

// The shortest exact form ParseDuration accepts back: "90s" -> "1m30s",
// "0" for zero, "1500ms" -> "1s500ms"; below a millisecond "<n>us" (which
// ParseDuration does not accept; config values never have that precision).
std::string FormatDuration(Duration d);

// Default bound for a config file: far above any real one, low enough that
// a wrong path (a log, /dev/zero) is refused quickly.
inline constexpr size_t kMaxConfigFileBytes = 1 << 20;  // 1 MiB

// The whole file. NotFound when it does not exist (callers may fall back to
// defaults), PermissionDenied when it cannot be read, InvalidArgument for a
// directory or a file larger than `max_bytes` (reads at most max_bytes + 1
// bytes, so an endless file cannot exhaust memory). Messages name the path.
Result<std::string> ReadConfigFile(const std::string& path,
                                   size_t max_bytes = kMaxConfigFileBytes);

// Diagnostics as "file:line:column: message" lines joined by '\n' (no final
// newline): the message of the Status a loader returns for a bad file.
std::string JoinDiagnostics(const std::vector<Diagnostic>& errors);

// True if the '/'-separated `path` has a "." or ".." component (the agent
// refuses such paths in its config and in intents' parameters).
bool HasDotComponent(std::string_view path);

}  // namespace apollo
