#pragma once

// callback_url: when a task settles (every node SUCCEEDED or CANCELLED, or
// FAILED/TIMEOUT with no retry left), POST a JSON summary to the task's
// callback_url — on its own thread, retried with exponential backoff, never
// blocking dispatch — and record the outcome in the task's history (cause
// `callback`).
//
// Delivery is at least once: a restart of the orchestrator between the POST
// and its history row can repeat it, so receivers should key on task_id.
//
// Thread-safety: TaskMayHaveSettled may be called from any thread.

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/status.h"
#include "orchestrator/http_poster.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

struct CallbackOptions {
  Duration timeout = std::chrono::seconds(5);
  int max_attempts = 5;
  // Hosts a callback may reach although they are internal (callback_target.h).
  std::vector<std::string> allowed_hosts;
  Duration initial_backoff = std::chrono::seconds(1);
};

class CallbackNotifier {
 public:
  CallbackNotifier(CallbackOptions options, store::StateStore& store, HttpPoster& poster,
                   const Clock& clock);
  ~CallbackNotifier();
  void Start();
  void Stop();

  // A task's rows changed towards an end; if it has settled and has a
  // callback_url, it is notified (once per orchestrator run).
  void TaskMayHaveSettled(const std::string& task_id);

  // The JSON summary sent for a task (pure, for tests).
  static std::string Summary(const store::TaskRow& task);

 private:
  struct Job {
    std::string task_id;
    int attempt = 0;  // attempts made so far
  };
  void Loop();
  void Run(Job job);
  void Record(const store::TaskRow& task, const std::string& detail);

  const CallbackOptions options_;
  store::StateStore& store_;
  HttpPoster& poster_;
  const Clock& clock_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<TimePoint, Job> due_;  // guarded by mu_
  std::set<std::string> handled_;      // guarded by mu_: queued or done this run
  bool stop_ = false;                  // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::orchestrator
