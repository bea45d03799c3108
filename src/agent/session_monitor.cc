#include "agent/session_monitor.h"

#include <algorithm>

#include "agent/session.h"

namespace apollo::agent {

SessionMonitor::SessionMonitor() : thread_([this] { Loop(); }) {}

SessionMonitor::~SessionMonitor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SessionMonitor::Add(Session* session) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.push_back(session);
}

void SessionMonitor::Remove(Session* session) {
  // Sessions are checked under mu_: once this returns, none is in progress.
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(std::remove(sessions_.begin(), sessions_.end(), session), sessions_.end());
}

void SessionMonitor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; });
    if (stop_) return;
    for (Session* s : sessions_) s->CheckCutOff();
  }
}

}  // namespace apollo::agent
