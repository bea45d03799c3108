#pragma once

// Alert delivery: every alert row (dead letter, open breaker, queue
// watermark, impersonation refused, compensation failed, ...) is POSTed as
// JSON to `alerts.webhook_url` — on its own thread, so dispatch and ingest
// never wait on it. The store is the queue: a new alert is a row in
// `pending`; this thread reads at most `batch` due rows at a time, posts
// each, and records the outcome on the row (delivered; failing, retried at
// next_delivery_at with exponential backoff; gave_up after max_attempts),
// so a restart resumes where it stopped and `apollo-cli alert list` shows
// each alert's delivery.
//
// Delivery is at least once (a crash between the POST and its row repeats
// it); receivers key on `id`.
//
// Thread-safety: Kick may be called from any thread.

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "orchestrator/http_poster.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

struct AlertNotifierOptions {
  std::string webhook_url;           // empty: no delivery (rows stay pending)
  std::vector<std::string> headers;  // "Name: value", e.g. an Authorization
  Duration timeout = std::chrono::seconds(5);
  int max_attempts = 10;
  Duration initial_backoff = std::chrono::seconds(1);
  Duration max_backoff = std::chrono::minutes(5);
  Duration poll = std::chrono::seconds(1);  // a new row is seen within this
  int batch = 100;                          // rows held in memory at most
};

class AlertNotifier {
 public:
  AlertNotifier(AlertNotifierOptions options, store::StateStore& store, HttpPoster& poster,
                const Clock& clock);
  ~AlertNotifier();
  AlertNotifier(const AlertNotifier&) = delete;
  AlertNotifier& operator=(const AlertNotifier&) = delete;

  // No-op without a webhook_url.
  void Start();
  void Stop();
  // An alert was raised: look now rather than at the next poll.
  void Kick();

  // The JSON body for one alert (pure, for tests).
  static std::string Body(const store::AlertRow& alert);
  // The wait before the next try after `attempts` failed ones.
  static Duration Backoff(const AlertNotifierOptions& options, int attempts);

  // One round on the caller's thread: posts what is due (at most `batch`)
  // and records each outcome; false when the store could not be read.
  bool DeliverDue();

 private:
  void Loop();

  const AlertNotifierOptions options_;
  store::StateStore& store_;
  HttpPoster& poster_;
  const Clock& clock_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool kicked_ = false;  // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::orchestrator
