#include "store/testing/store_fixture.h"

#include <cstdlib>
#include <filesystem>

namespace apollo::store::testing {

void StoreConformanceTest::SetUp() {
  char tmpl[] = "/tmp/apollo-store-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  dir_ = tmpl;
  Result<std::string> url = GetParam()->NewStoreUrl(dir_);
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  url_ = *url;
  Reopen();
}

void StoreConformanceTest::TearDown() {
  store_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void StoreConformanceTest::Reopen() {
  store_.reset();
  Result<std::unique_ptr<StateStore>> s = OpenStateStore(url_, options_, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(*s);
}

TaskSpec StoreConformanceTest::Spec(const std::string& id, std::vector<std::string> nodes) {
  TaskSpec s;
  s.task_id = id;
  s.intent = "collect_metrics";
  s.target_selector.type = SelectorType::kNodes;
  s.target_selector.nodes = std::move(nodes);
  s.timeout = std::chrono::seconds(60);
  s.retry_policy.max_retries = 2;
  return s;
}

TransitionRequest StoreConformanceTest::Req(const std::string& task, const std::string& node,
                                            std::optional<TaskState> to, Cause cause) {
  TransitionRequest r;
  r.task_id = task;
  r.node_id = node;
  r.to = to;
  r.cause = cause;
  return r;
}

void StoreConformanceTest::Create(const std::vector<TaskSpec>& specs,
                                  const std::vector<std::string>& nodes) {
  std::vector<NewTask> tasks;
  for (const TaskSpec& s : specs) tasks.push_back({s, nodes});
  Result<std::vector<CreatedTask>> r = store().CreateTasks(tasks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

EventOutcome StoreConformanceTest::Move(const std::string& task, const std::string& node,
                                        std::optional<TaskState> to, Cause cause,
                                        std::optional<int64_t> expected_version,
                                        bool new_attempt) {
  TransitionRequest r;
  r.task_id = task;
  r.node_id = node;
  r.to = to;
  r.cause = cause;
  r.expected_version = expected_version;
  r.new_attempt = new_attempt;
  if (to == TaskState::kDispatched || new_attempt) r.ack_deadline = clock_.Now() + std::chrono::seconds(10);
  if (to == TaskState::kRetrying) r.next_attempt_at = clock_.Now() + std::chrono::seconds(5);
  Result<std::vector<EventOutcome>> o = store().Transition({&r, 1});
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  return o.ok() ? o->at(0) : EventOutcome{};
}

void StoreConformanceTest::DriveTo(const std::string& task, const std::string& node,
                                   TaskState state) {
  Create({Spec(task, {node})}, {node});
  auto apply = [&](EventType t) { ApplyOk({Ev(task, node, t)}); };
  switch (state) {
    case TaskState::kPending: return;
    case TaskState::kCancelled: Move(task, node, state, Cause::kCancel); return;
    default: Move(task, node, TaskState::kDispatched, Cause::kDispatch);
  }
  if (state == TaskState::kDispatched) return;
  apply(EventType::kAccepted);
  if (state == TaskState::kRunning) return;
  if (state == TaskState::kSucceeded) return apply(EventType::kSucceeded);
  if (state == TaskState::kTimeout) return apply(EventType::kTimeout);
  apply(EventType::kFailed);
  if (state != TaskState::kRetrying) return;
  Move(task, node, state, Cause::kRetry);
  Move(task, node, std::nullopt, Cause::kDispatch, std::nullopt, /*new_attempt=*/true);
}

uint64_t StoreConformanceTest::NextSeq(const std::string& node) { return ++seqs_[node]; }

Event StoreConformanceTest::Ev(const std::string& task, const std::string& node, EventType type,
                               uint32_t attempt, std::string payload) {
  Event e;
  e.task_id = task;
  e.node_id = node;
  e.sequence_number = NextSeq(node);
  e.attempt = attempt;
  e.type = type;
  e.timestamp = clock_.Now();
  e.payload = std::move(payload);
  return e;
}

ApplyResult StoreConformanceTest::ApplyOk(std::vector<Event> events) {
  Result<ApplyResult> r = store().Apply(std::move(events));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ApplyResult{};
}

NodeRow StoreConformanceTest::Row(const std::string& task, const std::string& node) {
  Result<TaskRow> t = store().GetTask(task);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (t.ok()) {
    for (const NodeRow& r : t->nodes) {
      if (r.node_id == node) return r;
    }
  }
  ADD_FAILURE() << "no row " << task << "/" << node;
  return {};
}

}  // namespace apollo::store::testing
