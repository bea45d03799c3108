#pragma once

// The bus conformance suite's seam: one BusBackend per backend and a fixture
// giving every test a fresh SQLite store (real, in a temp dir), a bus on it,
// and helpers to create dispatched tasks and build events.
//
// Adding a backend = a BusBackend subclass + one INSTANTIATE_TEST_SUITE_P.

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bus/event_bus.h"
#include "bus/testing/nats_server.h"
#include "core/clock.h"
#include "store/open_store.h"
#include "store/state_store.h"

namespace apollo::bus::testing {

class BusBackend {
 public:
  virtual ~BusBackend() = default;
  virtual std::string Name() const = 0;
  // The bus URL for a test using `temp_dir`; may start a server.
  virtual Result<std::string> Url(const std::string& temp_dir) = 0;
  // The server started by Url, or nullptr (embedded).
  virtual NatsServer* server() { return nullptr; }
  virtual void Release() {}  // after each test
};

BusBackend* EmbeddedBackend();
BusBackend* NatsBackend();

class BusConformanceTest : public ::testing::TestWithParam<BusBackend*> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Opens (or reopens) a bus on the store with `options_`, started.
  void OpenBus();
  void CloseBus() { bus_.reset(); }

  // Tasks on `node`, created and dispatched (attempt 1).
  void CreateDispatched(const std::vector<std::string>& tasks, const std::string& node);
  Event Ev(const std::string& task, const std::string& node, uint64_t seq, EventType type,
           std::string payload = "");
  // Publishes and waits (bounded) for the result.
  Result<PublishAck> PublishWait(const std::string& node, std::vector<Event> events);
  TaskState StateOf(const std::string& task, const std::string& node);
  // Checks (EXPECT) that `task`'s history applied its events in sequence
  // order; returns how many event rows it has (-1 if it cannot be read).
  int ExpectAppliedInOrder(const std::string& task);
  // How many history rows applied `event_id` of `task`.
  int AppliedCount(const std::string& task, const std::string& event_id);
  std::vector<BusAlert> alerts();

  RealClock clock_;
  std::string dir_;
  std::string store_url_;
  std::string bus_url_;
  BusOptions options_;
  std::unique_ptr<store::StateStore> store_;
  std::unique_ptr<EventBus> bus_;
  std::mutex alerts_mu_;
  std::vector<BusAlert> alerts_;  // guarded by alerts_mu_
};

}  // namespace apollo::bus::testing
