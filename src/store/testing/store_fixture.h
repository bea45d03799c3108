#pragma once

// The conformance suite's seam: one StoreBackend per backend, and a fixture
// that gives every test a fresh, empty store on a ManualClock.
//
// Adding a backend = a StoreBackend subclass (which may start a server on
// first use) + one INSTANTIATE_TEST_SUITE_P line, e.g.
//   INSTANTIATE_TEST_SUITE_P(Postgres, StoreConformanceTest,
//                            ::testing::Values(PostgresBackend()),
//                            [](const auto& info) { return info.param->Name(); });

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/event.h"
#include "core/task_spec.h"
#include "store/open_store.h"
#include "store/state_store.h"

namespace apollo::store::testing {

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  virtual std::string Name() const = 0;
  // A URL naming a new, empty store, with `temp_dir` (empty, removed after
  // the test) for any files it needs.
  virtual Result<std::string> NewStoreUrl(const std::string& temp_dir) = 0;
  // Loads the backend's schema-1 fixture (src/store/testdata/<name>_v1.sql,
  // a dump of a store made by the code before the one engine) into the new,
  // empty store at `url`, without opening it.
  virtual Status LoadV1Fixture(const std::string& url) = 0;
};

class StoreConformanceTest : public ::testing::TestWithParam<StoreBackend*> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Closes and reopens the same store (a restart).
  void Reopen();
  StateStore& store() { return *store_; }

  // A task named `id` targeting `nodes`, with a 60 s timeout and 2 retries.
  static TaskSpec Spec(const std::string& id, std::vector<std::string> nodes);
  // A plain transition request (no CAS, no deadlines).
  static TransitionRequest Req(const std::string& task, const std::string& node,
                               std::optional<TaskState> to, Cause cause);
  // Creates the tasks (expects success).
  void Create(const std::vector<TaskSpec>& specs, const std::vector<std::string>& nodes);
  // Applies one orchestrator transition and returns its outcome.
  EventOutcome Move(const std::string& task, const std::string& node,
                    std::optional<TaskState> to, Cause cause,
                    std::optional<int64_t> expected_version = std::nullopt,
                    bool new_attempt = false);
  // Creates a task on `node` and drives its row to `state` (attempt 1;
  // RETRYING: the retry granted and sent, attempt 2 awaiting its ack).
  void DriveTo(const std::string& task, const std::string& node, TaskState state);
  // The next sequence number for `node` (per-fixture counter).
  uint64_t NextSeq(const std::string& node);
  Event Ev(const std::string& task, const std::string& node, EventType type,
           uint32_t attempt = 1, std::string payload = "");
  ApplyResult ApplyOk(std::vector<Event> events);
  NodeRow Row(const std::string& task, const std::string& node);

  ManualClock clock_;
  std::string dir_;
  std::string url_;
  StoreOptions options_;
  std::unique_ptr<StateStore> store_;
  std::map<std::string, uint64_t> seqs_;
};

}  // namespace apollo::store::testing
