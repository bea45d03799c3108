#include "orchestrator/callback_notifier.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/callback_target.h"

namespace apollo::orchestrator {
namespace {

bool Settled(const store::TaskRow& t) {
  if (t.nodes.empty()) return false;
  for (const auto& n : t.nodes) {
    if (!IsSettled(n.state, n.retries >= t.spec.retry_policy.max_retries || n.permanent)) {
      return false;
    }
  }
  return true;
}

// The queue key of a callback: host:port ("" for a URL that is not one;
// Deliver refuses it).
std::string HostOf(const std::string& url) {
  Result<CallbackTarget> t = ParseCallbackUrl(url);
  return t.ok() ? t->host + ":" + std::to_string(t->port) : std::string();
}

}  // namespace

CallbackNotifier::CallbackNotifier(CallbackOptions options, store::StateStore& store,
                                   HttpPoster& poster, const Clock& clock)
    : options_(options), store_(store), poster_(poster), clock_(clock) {}

CallbackNotifier::~CallbackNotifier() { Stop(); }

void CallbackNotifier::Start() {
  scheduler_ = std::thread([this] { Schedule(); });
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] { Work(); });
  }
}

void CallbackNotifier::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  due_cv_.notify_all();
  ready_cv_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void CallbackNotifier::TaskMayHaveSettled(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (handled_.count(task_id) || !queued_.insert(task_id).second) return;
  ready_.push_back(Job{task_id, 0});
  ready_cv_.notify_one();
}

size_t CallbackNotifier::remembered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.size() + handled_.size();
}

void CallbackNotifier::Done(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  done_order_.push_back(task_id);
  while (done_order_.size() > options_.remember_done) {
    handled_.erase(done_order_.front());
    done_order_.pop_front();
  }
}

std::string CallbackNotifier::Summary(const store::TaskRow& t) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : t.nodes) {
    nlohmann::json result = nlohmann::json::parse(n.result, nullptr, false);
    if (result.is_object() && result.contains("result")) result = result["result"];
    if (result.is_discarded()) result = nullptr;
    nodes.push_back({{"node_id", n.node_id},
                     {"status", TaskStateName(n.state)},
                     {"attempt", n.attempt},
                     {"retries", n.retries},
                     {"last_error", n.last_error},
                     {"result", result}});
  }
  return nlohmann::json{
      {"task_id", t.spec.task_id},         {"intent", t.spec.intent},
      {"status", TaskStateName(t.status)}, {"finished_at", FormatRfc3339(t.updated_at)},
      {"metadata", t.spec.metadata},       {"nodes", nodes}}
      .dump();
}

void CallbackNotifier::Schedule() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (due_.empty()) {
      due_cv_.wait(lock);
      continue;
    }
    auto first = due_.begin();
    if (first->first > clock_.Now()) {
      due_cv_.wait_for(lock, std::chrono::milliseconds(200));
      continue;
    }
    ready_.push_back(std::move(first->second));
    due_.erase(first);
    ready_cv_.notify_one();
  }
}

void CallbackNotifier::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (ready_.empty()) {
      ready_cv_.wait(lock);
      continue;
    }
    Job job = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    Run(std::move(job));
    lock.lock();
  }
}

void CallbackNotifier::Run(Job job) {
  if (job.attempt == 0 && !job.claimed) {
    // From here a new trigger queues a new look (this one may be too early).
    std::lock_guard<std::mutex> lock(mu_);
    queued_.erase(job.task_id);
  }
  auto task = store_.GetTask(job.task_id);
  if (!task.ok() || task->spec.callback_url.empty() || !Settled(*task)) return;
  const std::string host = HostOf(task->spec.callback_url);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!job.claimed) {
      if (job.attempt == 0 && !handled_.insert(job.task_id).second) return;
      job.claimed = true;
    }
    if (in_flight_[host] >= std::max(1, options_.per_host)) {
      waiting_[host].push_back(std::move(job));  // its turn comes when a POST ends
      return;
    }
    ++in_flight_[host];
  }
  Deliver(std::move(job), *task);
  std::lock_guard<std::mutex> lock(mu_);
  if (--in_flight_[host] == 0) in_flight_.erase(host);
  auto w = waiting_.find(host);
  if (w != waiting_.end()) {
    ready_.push_front(std::move(w->second.front()));
    w->second.pop_front();
    if (w->second.empty()) waiting_.erase(w);
    ready_cv_.notify_one();
  }
}

void CallbackNotifier::Deliver(Job job, const store::TaskRow& task) {
  const std::string& url = task.spec.callback_url;
  Result<CallbackTarget> target = CheckCallbackTarget(url, options_.allowed_hosts);
  if (!target.ok() && target.status().code() != StatusCode::kUnavailable) {
    // Internal or malformed: never sent, never retried.
    Record(task, "callback to " + url + " refused: " + target.status().message());
    Done(job.task_id);
    return;
  }
  Status s = target.ok() ? poster_.Post(url, Summary(task), options_.timeout, {}, target->pin)
                         : target.status();
  ++job.attempt;
  if (s.ok()) {
    Record(task, "callback POST to " + url + " answered 2xx after " + std::to_string(job.attempt) +
                     " attempt(s)");
    Done(job.task_id);
    return;
  }
  bool retry = s.code() == StatusCode::kUnavailable && job.attempt < options_.max_attempts;
  if (!retry) {
    Record(task, "callback POST to " + url + " gave up after " + std::to_string(job.attempt) +
                     " attempt(s): " + (target.ok() ? FailureClass(s) : "name does not resolve"));
    Done(job.task_id);
    return;
  }
  Duration delay = options_.initial_backoff * (1 << std::min(job.attempt - 1, 10));
  std::lock_guard<std::mutex> lock(mu_);
  due_.emplace(clock_.Now() + delay, job);
  due_cv_.notify_one();
}

void CallbackNotifier::Record(const store::TaskRow& task, const std::string& detail) {
  if (task.nodes.empty()) return;
  store::TransitionRequest r;
  r.task_id = task.spec.task_id;
  r.node_id = task.nodes.front().node_id;
  r.cause = store::Cause::kCallback;
  r.blocked_reason = "";
  r.detail = detail;
  (void)store_.Transition(std::span<const store::TransitionRequest>(&r, 1));
}

}  // namespace apollo::orchestrator
