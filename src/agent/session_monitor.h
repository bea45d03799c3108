#pragma once

// Watches how long sessions have been cut off from the center (their
// autonomy window, session.h) on one thread, every 500 ms.
//
// An edge agent has one Session, which owns a monitor of its own. A process
// that runs many Sessions (the benchmark's simulated fleet: 10,000 agents in
// one process) shares one monitor between them (SessionOptions::monitor), so
// the check costs one thread per process instead of one per session.
//
// Thread-safety: thread-safe. Lifetime: must outlive every session added;
// Remove waits for a check of that session in progress to finish.

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace apollo::agent {

class Session;

class SessionMonitor {
 public:
  SessionMonitor();
  ~SessionMonitor();
  SessionMonitor(const SessionMonitor&) = delete;
  SessionMonitor& operator=(const SessionMonitor&) = delete;

  void Add(Session* session);
  void Remove(Session* session);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;               // guarded by mu_
  std::vector<Session*> sessions_;  // guarded by mu_; checked under it
  std::thread thread_;              // last member: started once the rest is built
};

}  // namespace apollo::agent
