#pragma once

// The daemons' log: one line per event on stderr, as text (the default,
// "orchestrator: message", for a terminal and journald) or as JSON
// (`--log-format json`, config `log_format`, for a log pipeline):
//
//   {"ts":"2026-12-01T21:53:27.123456Z","level":"info","daemon":"edge-agent",
//    "msg":"...","task_id":"...","node_id":"...","attempt":2}
//
// task_id, node_id, attempt (and event_id) are separate keys whenever the
// line is about a task, so a pipeline can follow one task across both
// daemons. Each line is one write(2): lines from several threads never mix.
// Target apollo_log (not apollo_core: this one reads the wall clock and
// writes a file descriptor).
//
// Thread-safety: Init once in main before other threads; the rest from any
// thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace apollo::log {

enum class Format { kText, kJson };
enum class Level { kInfo, kWarning, kError, kAlert };

// What a line is about; empty members are left out.
struct Fields {
  std::string_view task_id;
  std::string_view node_id;
  std::optional<uint32_t> attempt;
  std::string_view event_id;

  static Fields Of(std::string_view task_id, std::string_view node_id = {},
                   std::optional<uint32_t> attempt = std::nullopt, std::string_view event_id = {}) {
    Fields f;
    f.task_id = task_id;
    f.node_id = node_id;
    f.attempt = attempt;
    f.event_id = event_id;
    return f;
  }
};

// "text" or "json"; InvalidArgument naming both otherwise.
Result<Format> ParseFormat(std::string_view text);

// The daemon's name (the text prefix, JSON "daemon") and the format; an
// agent names its node, which JSON lines without a node_id then carry.
// Lines below `min_level` are dropped (the benchmark's in-process agents
// keep only warnings and worse).
void Init(std::string_view daemon, Format format, std::string_view node_id = "",
          Level min_level = Level::kInfo);
Format CurrentFormat();

// Writes one line to stderr.
void Write(Level level, std::string_view message, const Fields& fields = {});
inline void Info(std::string_view message, const Fields& fields = {}) {
  Write(Level::kInfo, message, fields);
}
inline void Warning(std::string_view message, const Fields& fields = {}) {
  Write(Level::kWarning, message, fields);
}
inline void Error(std::string_view message, const Fields& fields = {}) {
  Write(Level::kError, message, fields);
}
inline void Alert(std::string_view message, const Fields& fields = {}) {
  Write(Level::kAlert, message, fields);
}

// One line as Write would write it (with its "\n"), at `unix_micros`.
// Text: "<daemon>: [WARNING: |ALERT: ]<message>"; the fields are in the
// message already when they matter to a reader, so text adds none.
std::string FormatLine(std::string_view daemon, Format format, Level level,
                       std::string_view message, const Fields& fields, int64_t unix_micros);

}  // namespace apollo::log
