#include "orchestrator/retention_runner.h"

namespace apollo::orchestrator {
namespace {

void Add(store::PurgeStats& into, const store::PurgeStats& s) {
  into.tasks += s.tasks;
  into.history_rows += s.history_rows;
  into.dedup_rows += s.dedup_rows;
  into.payload_rows += s.payload_rows;
  into.alert_rows += s.alert_rows;
  into.dead_letters += s.dead_letters;
  into.audit_rows += s.audit_rows;
}

}  // namespace

std::string DescribePurge(const store::PurgeStats& s) {
  std::string out;
  auto add = [&out](int64_t n, const char* what) {
    if (n == 0) return;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(s.tasks, "settled tasks");
  add(s.history_rows, "history rows");
  add(s.payload_rows, "payloads");
  add(s.dedup_rows, "dedup entries");
  add(s.alert_rows, "alerts");
  add(s.dead_letters, "dead letters");
  add(s.audit_rows, "audit rows");
  return out.empty() ? "nothing" : out;
}

RetentionRunner::RetentionRunner(RetentionRunnerOptions options, store::StateStore& store)
    : options_(std::move(options)), store_(store) {}

RetentionRunner::~RetentionRunner() { Stop(); }

void RetentionRunner::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void RetentionRunner::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

store::PurgeStats RetentionRunner::Totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

Result<store::PurgeStats> RetentionRunner::RunRound() {
  store::PurgeStats round;
  for (int call = 0; call < options_.max_calls_per_round; ++call) {
    auto s = store_.Purge(options_.policy);
    if (!s.ok()) return s.status();
    Add(round, *s);
    {
      std::lock_guard<std::mutex> lock(mu_);
      Add(totals_, *s);
    }
    round.more = s->more;
    if (!s->more) break;
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, options_.pause, [this] { return stop_; })) break;
  }
  return round;
}

void RetentionRunner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    auto round = RunRound();
    if (options_.log) {
      if (!round.ok()) {
        options_.log("retention: purge failed (retried next round): " + round.status().message());
      } else if (std::string what = DescribePurge(*round); what != "nothing") {
        options_.log("retention: purged " + what + (round->more ? " (more next round)" : ""));
      }
    }
    lock.lock();
    cv_.wait_for(lock, options_.interval, [this] { return stop_; });
  }
}

}  // namespace apollo::orchestrator
