#include "bus/testing/bus_fixture.h"

#include <stdlib.h>

#include <filesystem>
#include <future>

#include "bus/open_bus.h"

namespace apollo::bus::testing {
namespace {

class Embedded final : public BusBackend {
 public:
  std::string Name() const override { return "Embedded"; }
  Result<std::string> Url(const std::string&) override { return std::string("embedded"); }
};

class Nats final : public BusBackend {
 public:
  std::string Name() const override { return "Nats"; }
  Result<std::string> Url(const std::string& temp_dir) override {
    server_ = std::make_unique<NatsServer>(temp_dir);
    APOLLO_RETURN_IF_ERROR(server_->Start());
    return server_->url();
  }
  NatsServer* server() override { return server_.get(); }
  void Release() override { server_.reset(); }

 private:
  std::unique_ptr<NatsServer> server_;
};

}  // namespace

BusBackend* EmbeddedBackend() {
  static Embedded b;  // test-only registry of backends
  return &b;
}
BusBackend* NatsBackend() {
  static Nats b;
  return &b;
}

void BusConformanceTest::SetUp() {
  char tmpl[] = "/tmp/apollo-bus-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  dir_ = tmpl;
  store_url_ = "sqlite://" + dir_ + "/x.db";
  auto s = store::OpenStateStore(store_url_, {}, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(*s);
  Result<std::string> url = GetParam()->Url(dir_);
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  bus_url_ = *url;
  options_.partitions = 4;
  options_.max_deliver = 3;
  options_.redeliver_delay = std::chrono::milliseconds(10);
  options_.commit_timeout = std::chrono::seconds(20);
  options_.ack_wait = std::chrono::seconds(2);
  options_.on_alert = [this](const BusAlert& a) {
    std::lock_guard<std::mutex> lock(alerts_mu_);
    alerts_.push_back(a);
  };
}

void BusConformanceTest::TearDown() {
  bus_.reset();
  store_.reset();
  GetParam()->Release();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

void BusConformanceTest::OpenBus() {
  bus_.reset();
  auto b = OpenEventBus(bus_url_, options_, *store_, clock_);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  bus_ = std::move(*b);
  Status s = bus_->Start();
  ASSERT_TRUE(s.ok()) << s.ToString();
}

void BusConformanceTest::CreateDispatched(const std::vector<std::string>& tasks,
                                          const std::string& node) {
  std::vector<store::NewTask> news;
  std::vector<store::TransitionRequest> dispatch;
  for (const std::string& id : tasks) {
    TaskSpec s;
    s.task_id = id;
    s.intent = "collect_metrics";
    s.target_selector.type = SelectorType::kNodes;
    s.target_selector.nodes = {node};
    s.timeout = std::chrono::seconds(600);
    s.retry_policy.max_retries = 1;
    news.push_back({s, {node}});
    store::TransitionRequest r;
    r.task_id = id;
    r.node_id = node;
    r.to = TaskState::kDispatched;
    r.cause = store::Cause::kDispatch;
    r.ack_deadline = clock_.Now() + std::chrono::seconds(600);
    dispatch.push_back(r);
  }
  auto c = store_->CreateTasks(news);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto t = store_->Transition(dispatch);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
}

Event BusConformanceTest::Ev(const std::string& task, const std::string& node, uint64_t seq,
                             EventType type, std::string payload) {
  Event e;
  e.task_id = task;
  e.node_id = node;
  e.sequence_number = seq;
  e.attempt = 1;
  e.type = type;
  e.timestamp = clock_.Now();
  e.payload = std::move(payload);
  return e;
}

Result<PublishAck> BusConformanceTest::PublishWait(const std::string& node,
                                                   std::vector<Event> events) {
  auto f = bus_->Publish(node, std::move(events));
  if (f.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    return Status::DeadlineExceeded("publish did not complete in 30 s");
  }
  return f.get();
}

int BusConformanceTest::ExpectAppliedInOrder(const std::string& task) {
  auto h = store_->GetHistory(task);
  if (!h.ok()) {
    ADD_FAILURE() << task << ": " << h.status().ToString();
    return -1;
  }
  uint64_t last = 0;
  int applied = 0;
  for (const auto& row : *h) {
    if (row.event_id.empty()) continue;
    auto parts = ParseEventId(row.event_id);
    if (!parts.ok()) {
      ADD_FAILURE() << task << ": bad event id " << row.event_id;
      return -1;
    }
    EXPECT_GT(parts->sequence_number, last) << task << " applied out of order";
    last = parts->sequence_number;
    ++applied;
  }
  return applied;
}

TaskState BusConformanceTest::StateOf(const std::string& task, const std::string& node) {
  auto t = store_->GetTask(task);
  if (!t.ok()) return TaskState::kPending;
  for (const auto& n : t->nodes) {
    if (n.node_id == node) return n.state;
  }
  return TaskState::kPending;
}

int BusConformanceTest::AppliedCount(const std::string& task, const std::string& event_id) {
  auto h = store_->GetHistory(task);
  if (!h.ok()) return -1;
  int n = 0;
  for (const auto& row : *h) {
    n += row.event_id == event_id && row.outcome == store::Outcome::kApplied;
  }
  return n;
}

std::vector<BusAlert> BusConformanceTest::alerts() {
  std::lock_guard<std::mutex> lock(alerts_mu_);
  return alerts_;
}

}  // namespace apollo::bus::testing
