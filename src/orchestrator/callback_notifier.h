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
// One slow endpoint cannot stall the others: `workers` threads POST at
// once, at most `per_host` of them to one host (host:port of the URL); the
// other callbacks for a busy host wait in that host's queue, in order,
// while other hosts' callbacks go ahead. A scheduler thread releases
// retries when their backoff is over.
//
// Thread-safety: TaskMayHaveSettled may be called from any thread.

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

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
  int workers = 8;   // POSTs in flight at once, in all
  int per_host = 2;  // of which to one host
  // Tasks whose callback is finished (sent, given up or refused) that are
  // still remembered, so a late duplicate trigger does not send it again;
  // beyond this the oldest are forgotten (delivery is at least once anyway).
  size_t remember_done = 10'000;
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

  // Tasks queued, in delivery, or remembered as done (bounded, for tests).
  size_t remembered() const;

  // The JSON summary sent for a task (pure, for tests).
  static std::string Summary(const store::TaskRow& task);

 private:
  struct Job {
    std::string task_id;
    int attempt = 0;  // attempts made so far
    bool claimed = false;  // in handled_ by this job
  };
  // Moves retries whose backoff is over to ready_.
  void Schedule();
  // Takes jobs from ready_ and runs them.
  void Work();
  void Run(Job job);
  // POSTs (attempt job.attempt + 1) and records or reschedules.
  void Deliver(Job job, const store::TaskRow& task);
  void Record(const store::TaskRow& task, const std::string& detail);
  // The task's callback is finished: remembered among the last remember_done.
  void Done(const std::string& task_id);

  const CallbackOptions options_;
  store::StateStore& store_;
  HttpPoster& poster_;
  const Clock& clock_;

  mutable std::mutex mu_;
  std::condition_variable due_cv_;                  // due_ changed, or stop_
  std::condition_variable ready_cv_;                // ready_ changed, or stop_
  std::multimap<TimePoint, Job> due_;               // guarded by mu_: retries, by time
  std::deque<Job> ready_;                           // guarded by mu_: to run now
  std::map<std::string, int> in_flight_;            // guarded by mu_: POSTs per host
  std::map<std::string, std::deque<Job>> waiting_;  // guarded by mu_: per busy host
  // Guarded by mu_: waiting for a first look (one queued job per task).
  std::set<std::string> queued_;
  // Guarded by mu_: settled with a callback_url, being delivered or done
  // (the done ones are also in done_order_, oldest first, and leave both
  // beyond remember_done).
  std::set<std::string> handled_;
  std::deque<std::string> done_order_;  // guarded by mu_
  bool stop_ = false;                  // guarded by mu_
  std::thread scheduler_;
  std::vector<std::thread> workers_;
};

}  // namespace apollo::orchestrator
