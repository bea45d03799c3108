#pragma once

// Helpers shared by the handler tests: a temp dir that cleans up after
// itself, a ready-made HandlerContext, and bounded waits on processes.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/handlers/handler.h"
#include "core/clock.h"

namespace apollo::agent::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> List() const;  // sorted names in the dir

 private:
  std::string path_;
};

// One run's context with a real clock (or the given one), a token and a
// progress sink that records every report.
class TestRun {
 public:
  explicit TestRun(std::string intent, nlohmann::json params = nlohmann::json::object(),
                   const Clock* clock = nullptr);

  void SetTimeout(Duration d) { ctx.deadline = ctx.clock->Now() + d; }
  std::vector<Progress> Reports() const;

  RealClock real_clock;
  CancelToken token;
  ProgressSink progress;
  HandlerContext ctx;

 private:
  mutable std::mutex mu_;
  std::vector<Progress> reports_;  // guarded by mu_
};

// Polls `pred` every 10 ms until true or `limit` passes.
bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds limit);

// kill(pid, 0) / kill(-pgid, 0) fails with ESRCH.
bool ProcessGone(pid_t pid);
bool GroupGone(pid_t pgid);
// Gone, or a zombie waiting for init to reap it (this sandbox's init reaps
// orphans only every second or so).
bool ProcessDead(pid_t pid);

// Writes an executable file (a script for the external handler tests).
void WriteExecutable(const std::string& path, const std::string& text);

}  // namespace apollo::agent::testing
