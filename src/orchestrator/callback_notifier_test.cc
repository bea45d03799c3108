// Task callbacks over a real SQLite store, through the HTTP seam: one slow
// endpoint does not stall the callbacks of other hosts, a host gets at most
// `per_host` POSTs at once and the rest wait in its queue, and every
// callback is still delivered once; finished tasks are remembered only in
// bounded numbers (the oldest beyond remember_done are forgotten).
#include "orchestrator/callback_notifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

// Answers 2xx; POSTs to `slow_host` block until Release().
class GatedPoster final : public HttpPoster {
 public:
  explicit GatedPoster(std::string slow_host) : slow_host_(std::move(slow_host)) {}
  Status Post(const std::string& url, const std::string& json, Duration,
              const std::vector<std::string>&, const std::string&) override {
    std::unique_lock lock(mu_);
    bool slow = url.find(slow_host_) != std::string::npos;
    if (slow) {
      ++slow_in_flight_;
      max_slow_in_flight_ = std::max(max_slow_in_flight_, slow_in_flight_);
      cv_.wait(lock, [&] { return released_; });
      --slow_in_flight_;
    }
    auto j = nlohmann::json::parse(json);
    delivered_.push_back(j["task_id"].get<std::string>());
    cv_.notify_all();
    return Status::Ok();
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Waits (bounded) until `n` POSTs completed.
  bool WaitDelivered(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return delivered_.size() >= n; });
  }
  bool WaitSlowInFlight(int n) {
    std::unique_lock lock(mu_);
    for (int i = 0; i < 200 && slow_in_flight_ < n; ++i) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      lock.lock();
    }
    return slow_in_flight_ >= n;
  }
  std::vector<std::string> delivered() {
    std::lock_guard lock(mu_);
    return delivered_;
  }
  int max_slow_in_flight() {
    std::lock_guard lock(mu_);
    return max_slow_in_flight_;
  }

 private:
  const std::string slow_host_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int slow_in_flight_ = 0;
  int max_slow_in_flight_ = 0;
  std::vector<std::string> delivered_;
};

class CallbackNotifierTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.status().ok()) << temp_.status().ToString(); }
  // A task with a callback to `url`, cancelled (settled) on its one node.
  void SettledTask(const std::string& id, const std::string& url) {
    store::NewTask t;
    t.spec.task_id = id;
    t.spec.intent = "noop";
    t.spec.timeout = std::chrono::seconds(60);
    t.spec.callback_url = url;
    t.node_ids = {"n1"};
    auto created = store_->CreateTasks(std::span<const store::NewTask>(&t, 1));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    store::TransitionRequest r;
    r.task_id = id;
    r.node_id = "n1";
    r.to = TaskState::kCancelled;
    r.cause = store::Cause::kCancel;
    auto out = store_->Transition(std::span<const store::TransitionRequest>(&r, 1));
    ASSERT_TRUE(out.ok() && (*out)[0].outcome == store::Outcome::kApplied);
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  store::StateStore* store_ = temp_.store();
};

TEST_F(CallbackNotifierTest, ASlowHostDoesNotStallOthersAndGetsAtMostPerHost) {
  GatedPoster poster("127.0.0.2");  // declared first: outlives the notifier
  CallbackOptions o;
  o.allowed_hosts = {"127.0.0.1", "127.0.0.2"};
  o.workers = 4;
  o.per_host = 2;
  CallbackNotifier notifier(o, *store_, poster, clock_);
  // Whatever fails below, the blocked POSTs end before the notifier stops.
  struct ReleaseAtEnd {
    GatedPoster& p;
    ~ReleaseAtEnd() { p.Release(); }
  } release_at_end{poster};
  for (int i = 0; i < 5; ++i) SettledTask("slow-" + std::to_string(i), "http://127.0.0.2:9/hook");
  for (int i = 0; i < 6; ++i) SettledTask("fast-" + std::to_string(i), "http://127.0.0.1:9/hook");
  notifier.Start();
  for (int i = 0; i < 5; ++i) notifier.TaskMayHaveSettled("slow-" + std::to_string(i));
  ASSERT_TRUE(poster.WaitSlowInFlight(2));
  for (int i = 0; i < 6; ++i) notifier.TaskMayHaveSettled("fast-" + std::to_string(i));
  // Every fast callback is delivered while the slow host still holds two.
  ASSERT_TRUE(poster.WaitDelivered(6));
  std::vector<std::string> first = poster.delivered();
  std::set<std::string> got(first.begin(), first.end());
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(got.count("fast-" + std::to_string(i))) << i;
  EXPECT_EQ(got.size(), 6u);  // no slow one finished
  poster.Release();
  ASSERT_TRUE(poster.WaitDelivered(11));
  notifier.Stop();
  EXPECT_EQ(poster.max_slow_in_flight(), 2);  // never more than per_host
  std::vector<std::string> all = poster.delivered();
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 11u);  // each once
  EXPECT_EQ(all.size(), 11u);
  // The history says so, once per task.
  auto h = store_->GetHistory("slow-4");
  ASSERT_TRUE(h.ok());
  int callbacks = 0;
  for (const auto& e : *h) callbacks += e.cause == store::Cause::kCallback;
  EXPECT_EQ(callbacks, 1);
}

TEST_F(CallbackNotifierTest, ATaskIsNotifiedOnceEvenWhenAskedTwice) {
  GatedPoster poster("none");
  CallbackOptions o;
  o.allowed_hosts = {"127.0.0.1"};
  CallbackNotifier notifier(o, *store_, poster, clock_);
  SettledTask("t1", "http://127.0.0.1:9/hook");
  notifier.Start();
  notifier.TaskMayHaveSettled("t1");
  notifier.TaskMayHaveSettled("t1");
  ASSERT_TRUE(poster.WaitDelivered(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  notifier.Stop();
  EXPECT_EQ(poster.delivered().size(), 1u);
}

class CountingPoster final : public HttpPoster {
 public:
  Status Post(const std::string&, const std::string&, Duration, const std::vector<std::string>&,
              const std::string&) override {
    posts.fetch_add(1);
    return Status::Ok();
  }
  std::atomic<int> posts{0};
};

TEST(CallbackNotifierMemory, RemembersOnlyTheLastFinishedTasks) {
  ManualClock clock;
  testing::TempStore temp(clock);
  ASSERT_TRUE(temp.status().ok());
  store::StateStore& store = *temp.store();
  std::vector<store::NewTask> tasks;
  for (int t = 0; t < 30; ++t) {
    TaskSpec s;
    s.task_id = "cb-" + std::to_string(t);
    s.intent = "collect_metrics";
    s.target_selector.type = SelectorType::kNodes;
    s.target_selector.nodes = {"edge-1"};
    s.callback_url = "http://hooks.internal/done";
    tasks.push_back({s, {"edge-1"}, std::chrono::seconds(0)});
  }
  ASSERT_TRUE(store.CreateTasks(tasks).ok());
  for (const auto& t : tasks) {  // settled: cancelled
    store::TransitionRequest r;
    r.task_id = t.spec.task_id;
    r.node_id = "edge-1";
    r.to = TaskState::kCancelled;
    r.cause = store::Cause::kCancel;
    ASSERT_TRUE(store.Transition(std::span<const store::TransitionRequest>(&r, 1)).ok());
  }
  CountingPoster poster;
  CallbackOptions o;
  o.allowed_hosts = {"hooks.internal"};
  o.remember_done = 5;
  o.workers = 1;  // done in submission order: cb-29 is among the last five
  CallbackNotifier notifier(o, store, poster, clock);
  notifier.Start();
  for (const auto& t : tasks) {
    notifier.TaskMayHaveSettled(t.spec.task_id);
    notifier.TaskMayHaveSettled(t.spec.task_id);  // a duplicate trigger: one job
  }
  for (int i = 0; i < 500 && poster.posts.load() < 30; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Bounded wait for the last Done() after its POST.
  for (int i = 0; i < 500 && notifier.remembered() > 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(poster.posts.load(), 30);
  EXPECT_EQ(notifier.remembered(), 5u);  // not 30: the oldest were forgotten
  // A remembered task is not sent again.
  notifier.TaskMayHaveSettled("cb-29");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(poster.posts.load(), 30);
  notifier.Stop();
}

}  // namespace
}  // namespace apollo::orchestrator
