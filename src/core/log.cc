#include "core/log.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>

namespace apollo::log {
namespace {

struct State {
  std::string daemon = "apollo";
  Format format = Format::kText;
  std::string node_id;
  Level min_level = Level::kInfo;
};
State& Global() {
  static State* s = new State();
  return *s;
}

const char* LevelName(Level l) {
  switch (l) {
    case Level::kInfo:
      return "info";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
    case Level::kAlert:
      return "alert";
  }
  return "info";
}

// RFC 3339 in UTC with microseconds.
std::string Timestamp(int64_t unix_micros) {
  const time_t secs = static_cast<time_t>(unix_micros / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%06lldZ", static_cast<long long>(unix_micros % 1000000));
  return std::string(buf, n) + frac;
}

}  // namespace

Result<Format> ParseFormat(std::string_view text) {
  if (text == "text") return Format::kText;
  if (text == "json") return Format::kJson;
  return Status::InvalidArgument("must be text or json, got '" + std::string(text) + "'");
}

void Init(std::string_view daemon, Format format, std::string_view node_id, Level min_level) {
  Global().daemon = std::string(daemon);
  Global().format = format;
  Global().node_id = std::string(node_id);
  Global().min_level = min_level;
}

Format CurrentFormat() { return Global().format; }

std::string FormatLine(std::string_view daemon, Format format, Level level,
                       std::string_view message, const Fields& fields, int64_t unix_micros) {
  if (format == Format::kText) {
    std::string out(daemon);
    out += ": ";
    if (level == Level::kWarning) out += "WARNING: ";
    if (level == Level::kAlert) out += "ALERT: ";
    out += message;
    out += '\n';
    return out;
  }
  nlohmann::ordered_json j;
  j["ts"] = Timestamp(unix_micros);
  j["level"] = LevelName(level);
  j["daemon"] = daemon;
  j["msg"] = message;
  if (!fields.task_id.empty()) j["task_id"] = fields.task_id;
  if (!fields.node_id.empty()) j["node_id"] = fields.node_id;
  if (fields.attempt) j["attempt"] = *fields.attempt;
  if (!fields.event_id.empty()) j["event_id"] = fields.event_id;
  // Bytes that are not UTF-8 (a handler's output) become U+FFFD, not an
  // exception.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void Write(Level level, std::string_view message, const Fields& fields) {
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const State& s = Global();
  if (static_cast<int>(level) < static_cast<int>(s.min_level)) return;
  Fields f = fields;
  if (f.node_id.empty()) f.node_id = s.node_id;
  const std::string line = FormatLine(s.daemon, s.format, level, message, f, now);
  // One write per line (stderr is unbuffered): concurrent lines do not mix.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) return;  // nowhere to log to: nothing better to do
    done += static_cast<size_t>(n);
  }
}

}  // namespace apollo::log
