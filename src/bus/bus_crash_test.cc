// The bus conformance suite, part 2: a consumer process killed between
// publish and commit (both backends), and nats-server killed and restarted
// mid-stream (NATS).
//
// The child is this test binary re-executed (fork + exec, so no library state
// such as cnats' threads is inherited half-alive) running the disabled
// BusCrashChild test, which the parent drives through environment variables.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "bus/open_bus.h"
#include "bus/testing/bus_fixture.h"

namespace apollo::bus::testing {
namespace {

constexpr int kBatches = 40;
constexpr int kTasksPerBatch = 10;
constexpr int kKillAfter = 12;  // batches published (not necessarily committed)

std::string CrashTask(int b, int i) { return "c" + std::to_string(b) + "-" + std::to_string(i); }

// Batch b: ACCEPTED for its tasks, then SUCCEEDED for them; global seqs.
std::vector<Event> CrashBatch(int b) {
  std::vector<Event> out;
  uint64_t seq = static_cast<uint64_t>(b) * kTasksPerBatch * 2;
  for (EventType t : {EventType::kAccepted, EventType::kSucceeded}) {
    for (int i = 0; i < kTasksPerBatch; ++i) {
      Event e;
      e.task_id = CrashTask(b, i);
      e.node_id = "cn";
      e.sequence_number = ++seq;
      e.attempt = 1;
      e.type = t;
      e.payload = "{}";
      out.push_back(e);
    }
  }
  return out;
}

class NatsOnlyTest : public BusConformanceTest {};

TEST(BusCrashChild, DISABLED_Run) {
  const char* store_url = getenv("APOLLO_BUS_CHILD_STORE");
  const char* bus_url = getenv("APOLLO_BUS_CHILD_BUS");
  const char* fd_text = getenv("APOLLO_BUS_CHILD_FD");
  if (!store_url || !bus_url || !fd_text) GTEST_SKIP() << "driven by BusCrash tests only";
  int fd = atoi(fd_text);
  RealClock clock;
  auto store = store::OpenStateStore(store_url, {}, clock);
  if (!store.ok()) _exit(2);
  BusOptions o;
  o.partitions = 4;
  o.ack_wait = std::chrono::seconds(2);  // as the fixture's
  auto bus = OpenEventBus(bus_url, o, **store, clock);
  if (!bus.ok() || !(*bus)->Start().ok()) _exit(3);
  std::vector<std::future<Result<PublishAck>>> futures;
  for (int b = 0; b < kBatches; ++b) {
    futures.push_back((*bus)->Publish("cn", CrashBatch(b)));
    int32_t n = b + 1;
    if (write(fd, &n, sizeof n) != sizeof n) _exit(4);
  }
  for (auto& f : futures) (void)f.get();
  _exit(0);
}

TEST_P(BusConformanceTest, ConsumerKilledBeforeCommitLosesNothingAndAppliesNothingTwice) {
  std::vector<std::string> tasks;
  for (int b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kTasksPerBatch; ++i) tasks.push_back(CrashTask(b, i));
  }
  CreateDispatched(tasks, "cn");
  store_.reset();  // the child is the only writer while it lives

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    setenv("APOLLO_BUS_CHILD_STORE", store_url_.c_str(), 1);
    setenv("APOLLO_BUS_CHILD_BUS", bus_url_.c_str(), 1);
    setenv("APOLLO_BUS_CHILD_FD", std::to_string(fds[1]).c_str(), 1);
    execl("/proc/self/exe", "bus_conformance_test", "--gtest_filter=BusCrashChild.DISABLED_Run",
          "--gtest_also_run_disabled_tests", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  int32_t published = 0;
  while (published < kKillAfter) {
    ssize_t n = read(fds[0], &published, sizeof published);
    ASSERT_EQ(n, static_cast<ssize_t>(sizeof published)) << "child died early";
  }
  kill(child, SIGKILL);
  int st = 0;
  waitpid(child, &st, 0);
  close(fds[0]);

  // A new orchestrator: the agent resends everything it was not acked for
  // (here: everything), JetStream redelivers what it holds.
  auto s = store::OpenStateStore(store_url_, {}, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(*s);
  // The kill came between publish and commit: part of it is not stored.
  Result<uint64_t> stored = store_->HighestStoredSeq("cn");
  ASSERT_TRUE(stored.ok());
  EXPECT_LT(*stored, uint64_t{kBatches} * kTasksPerBatch * 2);
  RecordProperty("stored_at_kill", std::to_string(*stored));
  OpenBus();
  for (int b = 0; b < kBatches; ++b) {
    Result<PublishAck> r = PublishWait("cn", CrashBatch(b));
    ASSERT_TRUE(r.ok()) << "batch " << b << ": " << r.status().ToString();
  }
  EXPECT_EQ(*store_->HighestStoredSeq("cn"), uint64_t{kBatches} * kTasksPerBatch * 2);
  for (int b = 0; b < kBatches; ++b) {
    for (const Event& e : CrashBatch(b)) {
      ASSERT_EQ(AppliedCount(e.task_id, e.event_id()), 1) << e.event_id();
    }
    for (int i = 0; i < kTasksPerBatch; ++i) {
      ASSERT_EQ(StateOf(CrashTask(b, i), "cn"), TaskState::kSucceeded);
    }
  }
  EXPECT_TRUE(store_->ListAlerts(0, 10)->empty());
}

TEST_P(NatsOnlyTest, ServerKilledAndRestartedMidStreamLosesNothing) {
  ASSERT_NE(GetParam()->server(), nullptr);
  OpenBus();
  constexpr int kRounds = 24;
  std::vector<std::string> tasks;
  for (int b = 0; b < kRounds; ++b) {
    for (int i = 0; i < kTasksPerBatch; ++i) tasks.push_back(CrashTask(b, i));
  }
  CreateDispatched(tasks, "cn");
  std::vector<int> failed;
  for (int b = 0; b < kRounds; ++b) {
    if (b == 8) GetParam()->server()->Kill();
    if (b == 14) {
      ASSERT_TRUE(GetParam()->server()->Start().ok());
    }
    auto f = bus_->Publish("cn", CrashBatch(b));
    // A dead server must be reported fast, not after the commit timeout.
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready) << b;
    Result<PublishAck> r = f.get();
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
      failed.push_back(b);
    } else if (b >= 8 && b < 14) {
      ADD_FAILURE() << "publish " << b << " succeeded with the server down";
    }
  }
  EXPECT_GE(failed.size(), 6u);
  // The agents resend what was not acknowledged; the bus reconnected itself.
  for (int b : failed) {
    Result<PublishAck> r = Status::Unavailable("not yet");
    for (int tries = 0; tries < 100 && !r.ok(); ++tries) {
      r = PublishWait("cn", CrashBatch(b));
      if (!r.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(r.ok()) << "batch " << b << ": " << r.status().ToString();
  }
  EXPECT_EQ(*store_->HighestStoredSeq("cn"), uint64_t{kRounds} * kTasksPerBatch * 2);
  for (int b = 0; b < kRounds; ++b) {
    for (const Event& e : CrashBatch(b)) {
      ASSERT_EQ(AppliedCount(e.task_id, e.event_id()), 1) << e.event_id();
    }
  }
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Nats, NatsOnlyTest, ::testing::Values(NatsBackend()),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace apollo::bus::testing
