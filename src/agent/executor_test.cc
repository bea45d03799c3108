#include "agent/executor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

namespace apollo::agent {
namespace {

namespace fs = std::filesystem;

// Collects events as the executor hands them out.
class FakeLink final : public EventSink {
 public:
  void OnDurableEvent(const Event& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
    cv_.notify_all();
  }
  std::vector<Event> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::vector<Event> Of(const std::string& task, EventType type) const {
    std::vector<Event> out;
    for (const auto& e : events()) {
      if (e.task_id == task && e.type == type) out.push_back(e);
    }
    return out;
  }
  // Waits (bounded) until an event of `type` for `task` arrived.
  bool WaitFor(const std::string& task, EventType type,
               std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] {
      for (const auto& e : events_) {
        if (e.task_id == task && e.type == type) return true;
      }
      return false;
    });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Event> events_;
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("apollo-exec-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto reg = HandlerRegistry::Create(HandlerConfig{});
    ASSERT_TRUE(reg.ok()) << reg.status().ToString();
    registry_ = std::move(*reg);
  }
  void TearDown() override {
    executor_.reset();
    wal_.reset();
    fs::remove_all(dir_);
  }

  void Start(int concurrency = 4, uint64_t checkpoint_every = 10'000) {
    wal::WalOptions wo;
    wo.node_id = "n1";
    wo.retention = Duration(0);
    auto w = wal::Wal::Open(dir_.string(), wo, clock_);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    wal_ = std::move(*w);
    link_ = std::make_unique<FakeLink>();
    ExecutorOptions eo;
    eo.node_id = "n1";
    eo.max_concurrency = concurrency;
    eo.checkpoint_every = checkpoint_every;
    executor_ = std::make_unique<Executor>(eo, *wal_, *registry_, clock_, *link_);
    auto note = executor_->Recover();
    ASSERT_TRUE(note.ok()) << note.status().ToString();
  }
  void Restart() {
    executor_.reset();
    wal_.reset();
    Start();
  }

  // Waits (bounded) until a worker has started the task's handler.
  bool WaitStarted(const std::string& task_id) {
    for (int i = 0; i < 2000; ++i) {
      auto p = executor_->Progress(task_id);
      if (p && p->started) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  static IntentRequest Intent(std::string id, std::string intent, nlohmann::json params = {},
                              uint32_t attempt = 1) {
    IntentRequest r;
    r.task_id = std::move(id);
    r.intent = std::move(intent);
    r.attempt = attempt;
    r.params = params.is_null() ? nlohmann::json::object() : params;
    return r;
  }

  fs::path dir_;
  RealClock clock_;
  std::unique_ptr<HandlerRegistry> registry_;
  std::unique_ptr<wal::Wal> wal_;
  std::unique_ptr<FakeLink> link_;
  std::unique_ptr<Executor> executor_;
};

TEST_F(ExecutorTest, RunsATaskAndReportsDurableEventsInOrder) {
  Start();
  auto d = executor_->Deliver(Intent("t1", "noop"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, Delivery::kAccepted);
  ASSERT_TRUE(link_->WaitFor("t1", EventType::kSucceeded));
  auto events = link_->events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, EventType::kAccepted);
  EXPECT_EQ(events[0].event_id(), "n1-1");
  EXPECT_EQ(events[1].event_id(), "n1-2");
  EXPECT_EQ(events[1].attempt, 1u);
  // Both are in the WAL, unacknowledged, for a resend.
  auto unacked = wal_->ReadUnacked();
  ASSERT_TRUE(unacked.ok());
  EXPECT_EQ(unacked->size(), 2u);
}

TEST_F(ExecutorTest, TheSameIntentDelivered100TimesConcurrentlyRunsOnce) {
  std::atomic<int> runs{0};
  std::atomic<bool> delivered{false};
  // Runs until all 100 deliveries have been answered (bounded: 30 s), so
  // every one of them meets the run in flight, however slowly a loaded
  // machine starts the 100 threads (a fixed 200 ms was not always enough
  // under ASan beside other work: 15 came after the run had ended).
  class Counting final : public Handler {
   public:
    Counting(std::atomic<int>* n, std::atomic<bool>* delivered) : n_(n), delivered_(delivered) {}
    HandlerResult Run(const HandlerContext& ctx) override {
      n_->fetch_add(1);
      for (int i = 0; i < 3000 && !delivered_->load(); ++i) {
        ctx.Stop().WaitFor(std::chrono::milliseconds(10));
      }
      return HandlerResult::Succeeded({{"ran", true}});
    }
    std::atomic<int>* n_;
    std::atomic<bool>* delivered_;
  };
  ASSERT_TRUE(
      registry_->Register("count", [&] { return std::make_unique<Counting>(&runs, &delivered); })
          .ok());
  Start(8);
  std::vector<std::thread> threads;
  std::atomic<int> accepted{0}, repeats{0};
  for (int i = 0; i < 100; ++i) {
    threads.emplace_back([&] {
      auto d = executor_->Deliver(Intent("once", "count"));
      ASSERT_TRUE(d.ok());
      (*d == Delivery::kAccepted ? accepted : repeats).fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  delivered = true;
  ASSERT_TRUE(link_->WaitFor("once", EventType::kSucceeded));
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(accepted.load(), 1);
  EXPECT_EQ(repeats.load(), 99);
  EXPECT_EQ(link_->Of("once", EventType::kAccepted).size(), 1u);
  EXPECT_EQ(link_->Of("once", EventType::kSucceeded).size(), 1u);
  // After it finished, a repeat is answered from the cache, not run.
  auto again = executor_->Deliver(Intent("once", "count"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, Delivery::kAlreadyDone);
  auto done = link_->Of("once", EventType::kAlreadyDone);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(done[0].payload)["result"]["ran"], true);
  EXPECT_EQ(done[0].attempt, 1u);
  EXPECT_EQ(runs.load(), 1);
  // A newer attempt (the center retried after giving up on attempt 1 as it
  // finished) is answered for that attempt, naming the run that did the
  // work, so the store's attempt fence lets it settle the row.
  auto retry = executor_->Deliver(Intent("once", "count", {}, 3));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(*retry, Delivery::kAlreadyDone);
  done = link_->Of("once", EventType::kAlreadyDone);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].attempt, 3u);
  EXPECT_EQ(nlohmann::json::parse(done[1].payload)["ran_attempt"], 1);
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(ExecutorTest, ABatchOfIntentsSharesOneWalCommitAndAnswersRepeatsInOrder) {
  Start(1);
  // Occupy the only slot so nothing below runs before we look.
  ASSERT_TRUE(executor_->Deliver(Intent("blocker", "sleep", {{"seconds", 1.0}})).ok());
  ASSERT_TRUE(WaitStarted("blocker"));
  const uint64_t syncs_before = wal_->stats().syncs;
  std::vector<IntentRequest> batch;
  for (int i = 0; i < 50; ++i) batch.push_back(Intent("b" + std::to_string(i), "noop"));
  batch.push_back(Intent("blocker", "sleep", {{"seconds", 1.0}}));  // a repeat, running
  batch.push_back(Intent("b0", "noop"));  // a repeat within the batch itself
  auto d = executor_->DeliverBatch(batch);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), batch.size());
  for (int i = 0; i < 50; ++i) EXPECT_EQ((*d)[i], Delivery::kAccepted) << i;
  EXPECT_EQ((*d)[50], Delivery::kAlreadyRunning);
  EXPECT_EQ((*d)[51], Delivery::kAlreadyRunning);
  // 50 ACCEPTED + 1 ALREADY_RUNNING, one group commit (the sleeping
  // blocker logs nothing meanwhile).
  EXPECT_EQ(wal_->stats().syncs - syncs_before, 1u);
  auto unacked = wal_->ReadUnacked();
  ASSERT_TRUE(unacked.ok());
  size_t accepted = 0;
  for (const Event& e : *unacked) accepted += e.type == EventType::kAccepted ? 1 : 0;
  EXPECT_EQ(accepted, 51u);  // the blocker's and the batch's 50
  EXPECT_EQ(link_->Of("b0", EventType::kAccepted).size(), 1u);
  EXPECT_EQ(link_->Of("blocker", EventType::kAlreadyRunning).size(), 1u);
  // Each runs once, after its ACCEPTED was durable.
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(link_->WaitFor("b" + std::to_string(i), EventType::kSucceeded)) << i;
  }
  EXPECT_EQ(link_->Of("b0", EventType::kSucceeded).size(), 1u);
  // A repeat of the whole batch is answered from the cache, nothing runs.
  auto again = executor_->DeliverBatch(std::vector<IntentRequest>(batch.begin(), batch.begin() + 50));
  ASSERT_TRUE(again.ok());
  for (Delivery x : *again) EXPECT_EQ(x, Delivery::kAlreadyDone);
  EXPECT_EQ(link_->Of("b7", EventType::kAlreadyDone).size(), 1u);
  EXPECT_EQ(link_->Of("b7", EventType::kAccepted).size(), 1u);
}

// Short tasks run back to back by one worker: each final event is queued in
// the WAL while the next task runs, and the last one's commit writes them
// all. One fdatasync per task would be 65 here.
TEST_F(ExecutorTest, ShortTasksRunBackToBackShareFdatasyncs) {
  Start(1);
  ASSERT_TRUE(executor_->Deliver(Intent("blocker", "sleep", {{"seconds", 0.3}})).ok());
  ASSERT_TRUE(WaitStarted("blocker"));
  std::vector<IntentRequest> batch;
  for (int i = 0; i < 64; ++i) batch.push_back(Intent("s" + std::to_string(i), "noop"));
  ASSERT_TRUE(executor_->DeliverBatch(batch).ok());
  const uint64_t syncs_before = wal_->stats().syncs;  // the batch's ACCEPTEDs are in
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(link_->WaitFor("s" + std::to_string(i), EventType::kSucceeded)) << i;
  }
  ASSERT_TRUE(link_->WaitFor("blocker", EventType::kSucceeded));
  const uint64_t syncs = wal_->stats().syncs - syncs_before;
  EXPECT_GE(syncs, 1u);
  // Each syncer round waits at most 2 ms for the burst, so a slow build
  // (sanitizers, a loaded machine) makes a few more rounds; never one per task.
  EXPECT_LE(syncs, 32u) << "the final events of a burst did not share fdatasyncs";
  // Reported once each, and each reported event is in the log with its seq.
  auto logged = wal_->ReadUnacked();
  ASSERT_TRUE(logged.ok());
  std::set<uint64_t> in_wal;
  for (const Event& e : *logged) in_wal.insert(e.sequence_number);
  for (int i = 0; i < 64; ++i) {
    auto done = link_->Of("s" + std::to_string(i), EventType::kSucceeded);
    ASSERT_EQ(done.size(), 1u) << i;
    EXPECT_TRUE(in_wal.count(done[0].sequence_number)) << i;
  }
}

// A long handler behind a short one does not hold back the short one's
// report: the syncer waits for a burst only briefly.
TEST_F(ExecutorTest, ALongHandlerDoesNotHoldBackTheReportBeforeIt) {
  std::promise<void> open;
  std::shared_future<void> gate = open.get_future().share();
  class Gated final : public Handler {
   public:
    explicit Gated(std::shared_future<void> gate) : gate_(std::move(gate)) {}
    HandlerResult Run(const HandlerContext&) override {
      gate_.wait_for(std::chrono::seconds(30));
      return HandlerResult::Succeeded({});
    }
    std::shared_future<void> gate_;
  };
  ASSERT_TRUE(registry_->Register("gated", [gate] { return std::make_unique<Gated>(gate); }).ok());
  Start(1);
  ASSERT_TRUE(executor_->DeliverBatch({Intent("quick", "noop"), Intent("long", "gated")}).ok());
  ASSERT_TRUE(WaitStarted("long"));
  // The long handler runs until the gate opens; the quick task's SUCCEEDED
  // is reported meanwhile.
  EXPECT_TRUE(link_->WaitFor("quick", EventType::kSucceeded, std::chrono::seconds(5)));
  EXPECT_TRUE(link_->Of("long", EventType::kSucceeded).empty());
  open.set_value();
  ASSERT_TRUE(link_->WaitFor("long", EventType::kSucceeded));
}

// Checkpoints taken while final events are queued hold them: after a
// restart every task of the burst is known done, none interrupted.
TEST_F(ExecutorTest, CheckpointsDuringABurstHoldItsQueuedEvents) {
  Start(1, /*checkpoint_every=*/3);
  ASSERT_TRUE(executor_->Deliver(Intent("blocker", "sleep", {{"seconds", 0.2}})).ok());
  ASSERT_TRUE(WaitStarted("blocker"));
  std::vector<IntentRequest> batch;
  for (int i = 0; i < 40; ++i) batch.push_back(Intent("k" + std::to_string(i), "noop"));
  ASSERT_TRUE(executor_->DeliverBatch(batch).ok());
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(link_->WaitFor("k" + std::to_string(i), EventType::kSucceeded)) << i;
  }
  Restart();
  for (const Event& e : link_->events()) {
    EXPECT_NE(e.type, EventType::kFailed) << "reported after restart: " << e.task_id;
  }
  for (int i = 0; i < 40; ++i) {
    auto d = executor_->Deliver(Intent("k" + std::to_string(i), "noop"));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, Delivery::kAlreadyDone) << i;
  }
}

TEST_F(ExecutorTest, HigherPriorityStartsFirst) {
  std::mutex mu;
  std::vector<std::string> order;
  class Recording final : public Handler {
   public:
    Recording(std::mutex* mu, std::vector<std::string>* order) : mu_(mu), order_(order) {}
    HandlerResult Run(const HandlerContext& ctx) override {
      std::lock_guard<std::mutex> lock(*mu_);
      order_->push_back(ctx.task_id);
      return HandlerResult::Succeeded({});
    }
    std::mutex* mu_;
    std::vector<std::string>* order_;
  };
  ASSERT_TRUE(registry_->Register("rec", [&] { return std::make_unique<Recording>(&mu, &order); }).ok());
  Start(1);
  // Occupy the only slot, then queue low, normal, high.
  ASSERT_TRUE(executor_->Deliver(Intent("blocker", "sleep", {{"seconds", 0.5}})).ok());
  for (auto [id, p] : {std::pair{"low", Priority::kLow}, {"normal", Priority::kNormal},
                       {"high", Priority::kHigh}, {"low2", Priority::kLow}}) {
    IntentRequest r = Intent(id, "rec");
    r.priority = p;
    ASSERT_TRUE(executor_->Deliver(r).ok());
  }
  ASSERT_TRUE(link_->WaitFor("low2", EventType::kSucceeded));
  EXPECT_EQ(order, (std::vector<std::string>{"high", "normal", "low", "low2"}));
}

TEST_F(ExecutorTest, CancelQueuedAndRunning) {
  Start(1);
  ASSERT_TRUE(executor_->Deliver(Intent("running", "sleep", {{"seconds", 60}})).ok());
  ASSERT_TRUE(WaitStarted("running"));
  ASSERT_TRUE(executor_->Deliver(Intent("queued", "sleep", {{"seconds", 60}})).ok());
  EXPECT_EQ(executor_->queued(), 1u);
  ASSERT_TRUE(executor_->Cancel("queued", 0).ok());
  ASSERT_TRUE(link_->WaitFor("queued", EventType::kCancelled));
  ASSERT_TRUE(executor_->Cancel("running", 1).ok());
  ASSERT_TRUE(link_->WaitFor("running", EventType::kCancelled, std::chrono::seconds(5)));
  EXPECT_EQ(executor_->Cancel("running", 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(executor_->Cancel("nope", 0).code(), StatusCode::kNotFound);
}

TEST_F(ExecutorTest, TimeoutAndUnknownIntent) {
  Start();
  IntentRequest r = Intent("slow", "sleep", {{"seconds", 30}});
  r.timeout = std::chrono::seconds(1);
  ASSERT_TRUE(executor_->Deliver(r).ok());
  ASSERT_TRUE(executor_->Deliver(Intent("what", "launch_rockets")).ok());
  ASSERT_TRUE(link_->WaitFor("what", EventType::kFailed));
  auto failed = link_->Of("what", EventType::kFailed);
  auto payload = nlohmann::json::parse(failed[0].payload);
  EXPECT_EQ(payload["error"], "unknown intent launch_rockets");
  EXPECT_EQ(payload["kind"], "permanent");
  ASSERT_TRUE(link_->WaitFor("slow", EventType::kTimeout, std::chrono::seconds(10)));
}

// "kind" in a FAILED payload tells the center whether a retry can help.
TEST_F(ExecutorTest, FailedEventsSayWhetherTheFailureIsPermanent) {
  HandlerConfig config;  // the default: exec is off
  auto reg = HandlerRegistry::Create(config);
  ASSERT_TRUE(reg.ok());
  registry_ = std::move(*reg);
  Start();
  const std::string marker = (dir_.parent_path() / ("apollo-exec-marker-" +
                                                    std::to_string(::getpid()))).string();
  ASSERT_TRUE(executor_->Deliver(Intent("off", "exec", {{"argv", {"touch", marker}}})).ok());
  ASSERT_TRUE(executor_->Deliver(Intent("bad", "sleep", {{"seconds", "soon"}})).ok());
  ASSERT_TRUE(link_->WaitFor("off", EventType::kFailed));
  ASSERT_TRUE(link_->WaitFor("bad", EventType::kFailed));
  auto off = nlohmann::json::parse(link_->Of("off", EventType::kFailed)[0].payload);
  EXPECT_EQ(off["error"].get<std::string>().rfind("exec is disabled on this node", 0), 0u) << off;
  EXPECT_EQ(off["kind"], "permanent");
  EXPECT_FALSE(fs::exists(marker)) << "a disabled exec ran";
  auto bad = nlohmann::json::parse(link_->Of("bad", EventType::kFailed)[0].payload);
  EXPECT_EQ(bad["kind"], "permanent") << bad;

  executor_.reset();
  wal_.reset();
  config.enabled_builtins.push_back("exec");
  reg = HandlerRegistry::Create(config);
  ASSERT_TRUE(reg.ok());
  registry_ = std::move(*reg);
  Start();
  ASSERT_TRUE(executor_->Deliver(Intent("exit3", "exec", {{"argv", {"sh", "-c", "exit 3"}}})).ok());
  ASSERT_TRUE(link_->WaitFor("exit3", EventType::kFailed));
  auto exit3 = nlohmann::json::parse(link_->Of("exit3", EventType::kFailed)[0].payload);
  EXPECT_EQ(exit3["error"], "exec: exited with code 3");
  EXPECT_EQ(exit3["kind"], "transient");
}

TEST_F(ExecutorTest, ProgressCarriesWhenItWasReported) {
  Start();
  ASSERT_TRUE(executor_->Deliver(Intent("nap", "sleep", {{"seconds", 30}})).ok());
  ASSERT_TRUE(WaitStarted("nap"));
  std::optional<TaskProgress> p;
  for (int i = 0; i < 2000 && !(p && p->reported_at != TimePoint{}); ++i) {
    p = executor_->Progress("nap");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(p->reported_at, TimePoint{});
  EXPECT_LE(p->reported_at, clock_.Now());
  EXPECT_EQ(p->message.rfind("sleeping", 0) == 0 || p->message.rfind("slept", 0) == 0, true)
      << p->message;
  ASSERT_TRUE(executor_->Cancel("nap", 0).ok());
}

TEST_F(ExecutorTest, RestartKeepsResultsAndSequenceNumbers) {
  Start();
  ASSERT_TRUE(executor_->Deliver(Intent("t1", "noop")).ok());
  ASSERT_TRUE(link_->WaitFor("t1", EventType::kSucceeded));
  uint64_t last = wal_->last_seq();
  Restart();
  auto d = executor_->Deliver(Intent("t1", "noop"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, Delivery::kAlreadyDone);
  auto done = link_->Of("t1", EventType::kAlreadyDone);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_GT(done[0].sequence_number, last);
}

TEST_F(ExecutorTest, CheckpointShortensReplayButKeepsState) {
  Start(2, /*checkpoint_every=*/5);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(executor_->Deliver(Intent("c" + std::to_string(i), "noop")).ok());
  }
  ASSERT_TRUE(link_->WaitFor("c9", EventType::kSucceeded));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(link_->WaitFor("c" + std::to_string(i), EventType::kSucceeded));
  Restart();
  for (int i = 0; i < 10; ++i) {
    auto d = executor_->Deliver(Intent("c" + std::to_string(i), "noop"));
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, Delivery::kAlreadyDone) << i;
  }
}

TEST_F(ExecutorTest, ConservativeModeRefusesNewWorkAndHoldsTheQueue) {
  Start(1);
  ASSERT_TRUE(executor_->Deliver(Intent("running", "sleep", {{"seconds", 0.3}})).ok());
  ASSERT_TRUE(WaitStarted("running"));
  ASSERT_TRUE(executor_->Deliver(Intent("queued", "noop")).ok());
  executor_->SetConservative(true);
  auto d = executor_->Deliver(Intent("new", "noop"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, Delivery::kRejected);
  auto rejected = link_->Of("new", EventType::kRejected);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].payload.find("conservative_mode"), std::string::npos);
  ASSERT_TRUE(link_->WaitFor("running", EventType::kSucceeded));  // finishes what runs
  EXPECT_FALSE(link_->WaitFor("queued", EventType::kAccepted, std::chrono::milliseconds(1)) &&
               link_->WaitFor("queued", EventType::kSucceeded, std::chrono::milliseconds(300)));
  EXPECT_EQ(executor_->queued(), 1u);
  executor_->SetConservative(false);
  ASSERT_TRUE(link_->WaitFor("queued", EventType::kSucceeded));
}

// A real crash: a child process runs a `sleep` task and is killed with
// SIGKILL while it runs. After restart the task is reported FAILED
// (interrupted), and a retry (attempt 2) runs it again.
TEST_F(ExecutorTest, CrashDuringSleepIsReportedInterruptedAfterRestart) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    Start();
    auto d = executor_->Deliver(Intent("nap", "sleep", {{"seconds", 300}}));
    char ok = (d.ok() && *d == Delivery::kAccepted) ? 'A' : 'X';
    (void)!::write(fds[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(fds[1]);
  char c = 0;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  ::close(fds[0]);
  ASSERT_EQ(c, 'A');
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  Start();
  auto failed = link_->Of("nap", EventType::kFailed);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].attempt, 1u);
  EXPECT_EQ(nlohmann::json::parse(failed[0].payload)["error"], "interrupted by agent restart");
  EXPECT_EQ(failed[0].sequence_number, 2u);  // after the child's ACCEPTED (seq 1)
  // The same attempt is not run again; a retry is.
  EXPECT_EQ(*executor_->Deliver(Intent("nap", "sleep", {{"seconds", 0}}, 1)), Delivery::kAlreadyFinished);
  EXPECT_EQ(*executor_->Deliver(Intent("nap", "sleep", {{"seconds", 0}}, 2)), Delivery::kAccepted);
  ASSERT_TRUE(link_->WaitFor("nap", EventType::kSucceeded));
}

// Writes every durable event's seq to a pipe, as an agent would report it.
class PipeLink final : public EventSink {
 public:
  explicit PipeLink(int fd) : fd_(fd) {}
  void OnDurableEvent(const Event& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t seq = e.sequence_number;
    (void)!::write(fd_, &seq, sizeof seq);
  }

 private:
  std::mutex mu_;
  int fd_;
};

// kill -9 of an agent process during a burst of transitions: every event it
// reported durable is in the WAL after restart, and sequence numbers
// continue above the highest one, never repeating.
TEST_F(ExecutorTest, KilledDuringABurstLosesNothingReportedDurable) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    wal::WalOptions wo;
    wo.node_id = "n1";
    auto w = wal::Wal::Open(dir_.string(), wo, clock_);
    if (!w.ok()) ::_exit(3);
    PipeLink link(fds[1]);
    ExecutorOptions eo;
    eo.node_id = "n1";
    eo.max_concurrency = 8;
    Executor ex(eo, **w, *registry_, clock_, link);
    if (!ex.Recover().ok()) ::_exit(4);
    std::vector<std::thread> senders;
    for (int t = 0; t < 8; ++t) {
      senders.emplace_back([&ex, t] {
        for (int i = 0; i < 100'000; ++i) {
          (void)ex.Deliver(Intent("burst-" + std::to_string(t) + "-" + std::to_string(i), "noop"));
        }
      });
    }
    for (auto& s : senders) s.join();
    ::_exit(0);
  }
  ::close(fds[1]);
  // Let the burst run until 2,000 events were reported durable, then kill.
  std::set<uint64_t> reported;
  uint64_t seq = 0;
  while (reported.size() < 2000 && ::read(fds[0], &seq, sizeof seq) == sizeof seq) {
    reported.insert(seq);
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  ::waitpid(child, nullptr, 0);
  while (::read(fds[0], &seq, sizeof seq) == sizeof seq) reported.insert(seq);  // drain
  ::close(fds[0]);
  ASSERT_GE(reported.size(), 2000u);

  Start();
  auto logged = wal_->ReadUnacked();  // nothing was acked: every event is here
  ASSERT_TRUE(logged.ok());
  std::set<uint64_t> in_wal;
  for (const auto& e : *logged) {
    EXPECT_TRUE(in_wal.insert(e.sequence_number).second) << "seq repeated: " << e.sequence_number;
  }
  for (uint64_t s : reported) EXPECT_TRUE(in_wal.count(s)) << "reported durable, lost: " << s;
  // Restart reports the interrupted tasks with new, higher seqs.
  uint64_t max_before = *reported.rbegin();
  for (const auto& e : link_->events()) EXPECT_GT(e.sequence_number, max_before);
  ASSERT_TRUE(executor_->Deliver(Intent("after", "noop")).ok());
  ASSERT_TRUE(link_->WaitFor("after", EventType::kSucceeded));
  for (const auto& e : link_->Of("after", EventType::kSucceeded)) {
    EXPECT_GT(e.sequence_number, *in_wal.rbegin());
  }
}

}  // namespace
}  // namespace apollo::agent
