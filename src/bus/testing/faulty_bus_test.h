#pragma once

// A conformance fixture whose bus runs on a FaultyStore (faulty_store.h)
// over the test's real store, for tests that fail or withhold store commits
// (embedded/direct_path_test.cc, nats/pipeline_test.cc).

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "bus/open_bus.h"
#include "bus/testing/bus_fixture.h"
#include "bus/testing/faulty_store.h"

namespace apollo::bus::testing {

class FaultyBusTest : public BusConformanceTest {
 protected:
  // Opens (started) the backend's bus on `faulty_`, with `options_`.
  void OpenFaultyBus() {
    faulty_ = std::make_unique<FaultyStore>(*store_);
    auto b = OpenEventBus(bus_url_, options_, *faulty_, clock_);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    bus_ = std::move(*b);
    Status s = bus_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void TearDown() override {
    if (faulty_) faulty_->release_applies();
    bus_.reset();
    BusConformanceTest::TearDown();
  }
  // One event of kind `k` per task on node n1, sequence numbers from ++seq.
  std::vector<Event> Batch(const std::vector<std::string>& tasks, uint64_t& seq, EventType k) {
    std::vector<Event> out;
    for (const std::string& t : tasks) out.push_back(Ev(t, "n1", ++seq, k, "{}"));
    return out;
  }
  // Waits (bounded) for a publish; checks it committed `n` events, none parked.
  void ExpectCommitted(std::future<Result<PublishAck>>& f, size_t n) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    Result<PublishAck> r = f.get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->committed, n);
    EXPECT_EQ(r->dead_lettered, 0u);
  }
  // Every task SUCCEEDED on n1 with its ACCEPTED and SUCCEEDED applied in
  // order, and n1's mark at `seq`: nothing lost, nothing applied twice.
  void ExpectAllSucceeded(const std::vector<std::string>& tasks, uint64_t seq) {
    for (const std::string& t : tasks) {
      EXPECT_EQ(StateOf(t, "n1"), TaskState::kSucceeded) << t;
      EXPECT_EQ(ExpectAppliedInOrder(t), 2) << t;
    }
    EXPECT_EQ(*store_->HighestStoredSeq("n1"), seq);
  }
  // "t0" .. "t<n-1>".
  static std::vector<std::string> Tasks(int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back("t" + std::to_string(i));
    return out;
  }

  std::unique_ptr<FaultyStore> faulty_;
};

}  // namespace apollo::bus::testing
