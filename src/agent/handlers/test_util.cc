#include "agent/handlers/test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

namespace apollo::agent::testing {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                     "/apollo-handlers-test-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) abort();  // no temp dir: nothing can run
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::List() const {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(path_)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TestRun::TestRun(std::string intent, nlohmann::json params, const Clock* clock)
    : progress([this](double f, std::string m) {
        std::lock_guard<std::mutex> lock(mu_);
        reports_.push_back({f, std::move(m)});
      }) {
  ctx.task_id = "task-42";
  ctx.attempt = 3;
  ctx.node_id = "node-7";
  ctx.intent = std::move(intent);
  ctx.params = std::move(params);
  ctx.metadata = {{"owner", "tests"}};
  ctx.clock = clock != nullptr ? clock : &real_clock;
  ctx.cancel = &token;
  ctx.progress = &progress;
}

std::vector<Progress> TestRun::Reports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reports_;
}

bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

bool ProcessGone(pid_t pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }
bool GroupGone(pid_t pgid) { return pgid > 0 && kill(-pgid, 0) != 0 && errno == ESRCH; }

bool ProcessDead(pid_t pid) {
  if (ProcessGone(pid)) return true;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return true;
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() &&
         (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

void WriteExecutable(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path);
    out << text;
  }
  chmod(path.c_str(), 0755);
}

}  // namespace apollo::agent::testing
