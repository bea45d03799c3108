#pragma once

// The intent handler interface of the edge agent.
//
// A handler carries out one intent on this node ("ensure", not "do": running
// it twice with the same params leaves the node as running it once). The
// executor builds a HandlerContext per run, calls Handler::Run on a thread of
// its own, and may meanwhile cancel the run through the context's
// CancelToken or ask for its latest progress through the ProgressSink.
//
// Contract of Run():
//  - never throws (RunHandler() below also converts a stray exception into
//    FAILED, so a buggy handler cannot take the agent down);
//  - returns CANCELLED / TIMEOUT promptly after the token trips or the
//    deadline passes, having stopped everything it started (processes
//    included);
//  - bad params are FAILED with a message naming the param, not a crash,
//    and marked permanent (HandlerResult::Refused): the same intent would
//    fail the same way on every retry. So is an intent this node's policy
//    refuses (a command not allowed, a path outside allowed_dirs).
//
// Thread-safety: a Handler instance serves one run at a time (the registry
// makes a fresh one per run). ProgressSink is thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/handlers/cancel_token.h"
#include "core/clock.h"

namespace apollo::agent {

enum class Outcome { kSucceeded, kFailed, kCancelled, kTimeout };

// "SUCCEEDED", "FAILED", "CANCELLED", "TIMEOUT" (the task state names).
std::string_view OutcomeName(Outcome outcome);

struct HandlerResult {
  Outcome outcome = Outcome::kFailed;
  nlohmann::json result = nlohmann::json::object();  // SUCCEEDED: the result
  std::string error;                                 // FAILED: why
  nlohmann::json detail = nlohmann::json::object();  // any outcome: extra facts
  // FAILED only: retrying cannot help (bad params, refused by this node's
  // policy, unknown or disabled intent). The executor reports it as
  // "kind": "permanent" in the FAILED event, so the center does not retry.
  bool permanent = false;

  static HandlerResult Succeeded(nlohmann::json result);
  // A failure that may go away (a command exiting non-zero, a missing
  // directory): the center's retry policy decides.
  static HandlerResult Failed(std::string error,
                              nlohmann::json detail = nlohmann::json::object());
  // A permanent failure: the intent was refused before it changed anything.
  static HandlerResult Refused(std::string error,
                               nlohmann::json detail = nlohmann::json::object());
  // CANCELLED or TIMEOUT for `reason` (precondition: reason != kNone).
  static HandlerResult Stopped(StopReason reason,
                               nlohmann::json detail = nlohmann::json::object());
};

struct Progress {
  double fraction = 0.0;  // in [0, 1]
  std::string message;
  TimePoint at{};         // when it was reported (sink's clock); epoch: never
};

using ProgressCallback = std::function<void(double fraction, std::string message)>;

// Keeps the latest progress of one run, so the executor can answer a
// ProgressQuery at any time, and forwards each report to an optional
// callback (called on the reporting thread, outside the lock). With a
// clock (not owned; must outlive the sink) each report is stamped, so the
// center can tell a run that still moves from one that stalled.
class ProgressSink {
 public:
  explicit ProgressSink(ProgressCallback callback = nullptr, const Clock* clock = nullptr)
      : callback_(std::move(callback)), clock_(clock) {}

  // Clamps fraction to [0, 1] (NaN becomes 0).
  void Report(double fraction, std::string message);
  Progress Latest() const;

 private:
  ProgressCallback callback_;
  const Clock* clock_;
  mutable std::mutex mu_;
  Progress latest_;  // guarded by mu_
};

// Everything one run needs. The pointers are not owned; the executor keeps
// what they point to alive until Run() returns.
struct HandlerContext {
  std::string task_id;
  uint32_t attempt = 0;
  std::string node_id;
  std::string intent;
  nlohmann::json params = nlohmann::json::object();
  std::map<std::string, std::string> metadata;

  const Clock* clock = nullptr;        // required
  std::optional<TimePoint> deadline;   // on *clock; none = no timeout
  CancelToken* cancel = nullptr;       // required
  ProgressSink* progress = nullptr;    // optional

  StopCondition Stop() const { return StopCondition(*cancel, *clock, deadline); }
  void ReportProgress(double fraction, std::string message) const {
    if (progress != nullptr) progress->Report(fraction, std::move(message));
  }
  // APOLLO_TASK_ID, APOLLO_ATTEMPT, APOLLO_NODE_ID, APOLLO_INTENT.
  std::map<std::string, std::string> ApolloEnv() const;
};

class Handler {
 public:
  virtual ~Handler() = default;
  virtual HandlerResult Run(const HandlerContext& ctx) = 0;
};

using HandlerFactory = std::function<std::unique_ptr<Handler>()>;

// Runs `handler` defensively: a context missing its clock or token is
// FAILED, a run whose token already tripped is not started, and an exception
// escaping the handler becomes FAILED "internal error: ...".
HandlerResult RunHandler(Handler& handler, const HandlerContext& ctx);

}  // namespace apollo::agent
