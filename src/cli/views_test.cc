// The pure parts of apollo-cli: tables, JSON shapes, error wording, watch
// logic. No server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/proto_json.h"
#include "cli/rpc_error.h"
#include "cli/table.h"
#include "cli/text_views.h"
#include "cli/watch_progress.h"

namespace apollo::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kT0 = 1'712'345'678'000'000;  // 2024-04-05T19:34:38Z

v1::Task SampleTask() {
  v1::Task t;
  t.set_task_id("collect-1");
  t.set_intent("collect_metrics");
  t.set_status("RUNNING");
  v1::NodeTask* a = t.add_nodes();
  a->set_node_id("node-a");
  a->set_status("SUCCEEDED");
  a->set_attempt(1);
  a->set_updated_at_us(kT0);
  a->set_result_json(R"({"cpu":0.5})");
  v1::NodeTask* b = t.add_nodes();
  b->set_node_id("node-b");
  b->set_status("RETRYING");
  b->set_attempt(2);
  b->set_retries(1);
  b->set_updated_at_us(kT0 + 1'500'000);
  b->set_last_error("exit 3");
  b->set_blocked_reason("backoff until 2024-04-05T19:34:45Z");
  return t;
}

TEST(CliRenderTable, AlignsColumnsAndDashesEmptyCells) {
  std::string t = RenderTable({{"A", "BB", "C"}, {"xxx", "", "z"}, {"y"}});
  EXPECT_EQ(t, "A    BB  C\nxxx  -   z\ny    -   -\n");
}

TEST(CliRenderTable, ServerTextCannotBreakLines) {
  std::string t = RenderTable({{"H"}, {"a\nb\x1b[31m"}});
  EXPECT_EQ(t, "H\na b [31m\n");
}

TEST(CliRenderTable, CountsUtf8CodePoints) {
  std::string t = RenderTable({{"N", "X"}, {"é", "1"}});
  EXPECT_EQ(t, "N  X\né  1\n");
}

TEST(CliFormatMicros, Rfc3339OrPlaceholder) {
  EXPECT_EQ(FormatMicros(kT0), "2024-04-05T19:34:38.000000Z");
  EXPECT_EQ(FormatMicros(0), "-");
  EXPECT_EQ(FormatMicros(0, "never"), "never");
}

TEST(CliTaskStatusJson, ExactShape) {
  v1::Task t = SampleTask();
  (*t.mutable_metadata())["ticket"] = "CHG-42";
  (*t.mutable_metadata())["by"] = "ops";
  t.set_start_timeout_s(600);
  nlohmann::json j = TaskStatusToJson(t);
  nlohmann::json want = nlohmann::json::parse(R"({
    "task_id": "collect-1", "status": "RUNNING",
    "metadata": {"by": "ops", "ticket": "CHG-42"}, "start_timeout_s": 600,
    "nodes": [
      {"node_id": "node-a", "status": "SUCCEEDED", "updated_at": "2024-04-05T19:34:38.000000Z",
       "attempt": 1, "retries": 0, "last_error": "", "blocked_reason": "",
       "result": {"cpu": 0.5}},
      {"node_id": "node-b", "status": "RETRYING", "updated_at": "2024-04-05T19:34:39.500000Z",
       "attempt": 2, "retries": 1, "last_error": "exit 3",
       "blocked_reason": "backoff until 2024-04-05T19:34:45Z"}
    ]})");
  EXPECT_EQ(j, want) << j.dump(2);
}

TEST(CliTaskStatusJson, ResultThatIsNotJsonStaysAString) {
  v1::Task t;
  t.add_nodes()->set_result_json("not json {");
  EXPECT_EQ(TaskStatusToJson(t)["nodes"][0]["result"], "not json {");
  EXPECT_TRUE(TaskStatusToJson(t)["nodes"][0]["updated_at"].is_null());
}

TEST(CliDumpJson, InvalidUtf8NeverThrows) {
  v1::Task t;
  t.set_task_id("bad\xff");
  std::string s;
  EXPECT_NO_THROW(s = DumpJson(TaskStatusToJson(t)));
  EXPECT_THAT(s, HasSubstr("bad\xEF\xBF\xBD"));
}

TEST(CliTaskStatusText, HeaderAndTable) {
  std::string s = TaskStatusText(SampleTask());
  EXPECT_THAT(s, HasSubstr("task collect-1: RUNNING (intent collect_metrics, 2 nodes)\n"));
  EXPECT_THAT(s, HasSubstr("NODE    STATUS     ATTEMPT  RETRIES  UPDATED"));
  EXPECT_THAT(s, HasSubstr("LAST_ERROR  BLOCKED_REASON\n"));
  EXPECT_THAT(
      s, HasSubstr("node-b  RETRYING   2        1        2024-04-05T19:34:39.500000Z  exit 3"));
}

TEST(CliTaskListText, EmptyAndPaged) {
  EXPECT_EQ(TaskListText({}), "no tasks\n");
  v1::ListTasksResponse r;
  v1::Task* t = r.add_tasks();
  t->set_task_id("t1");
  t->set_status("FAILED");
  t->set_intent("exec");
  r.set_next_page_token("p2");
  EXPECT_EQ(TaskListText(r),
            "TASK_ID  STATUS  INTENT  CREATED  METADATA\nt1       FAILED  exec    -        -\n"
            "more tasks: add --page-token p2\n");
  // Metadata: sorted key=value, cut to 40 characters.
  (*t->mutable_metadata())["ticket"] = "CHG-42";
  (*t->mutable_metadata())["by"] = std::string(50, 'x');
  EXPECT_THAT(TaskListText(r), ::testing::HasSubstr("  by=" + std::string(34, 'x') + "...\n"));
  EXPECT_EQ(TaskListToJson(r)["tasks"][0]["status"], "FAILED");
  EXPECT_EQ(TaskListToJson(r)["next_page_token"], "p2");
}

TEST(CliHistoryViews, TransitionsInOrder) {
  v1::TaskEventsResponse r;
  v1::HistoryEntry* e = r.add_entries();
  e->set_node_id("n1");
  e->set_to_status("PENDING");
  e->set_cause("submit");
  e->set_at_us(kT0);
  e = r.add_entries();
  e->set_node_id("n1");
  e->set_from_status("PENDING");
  e->set_to_status("DISPATCHED");
  e->set_attempt(1);
  e->set_cause("dispatch");
  e->set_at_us(kT0 + 1);
  std::string s = HistoryText("t", r);
  EXPECT_THAT(s, HasSubstr("TIME                         NODE  TRANSITION"));
  EXPECT_THAT(s, HasSubstr("(new) -> PENDING"));
  EXPECT_THAT(s, HasSubstr("PENDING -> DISPATCHED  1        dispatch"));
  nlohmann::json j = HistoryToJson("t", r);
  EXPECT_EQ(j["entries"][1]["from"], "PENDING");
  EXPECT_EQ(j["entries"][1]["at"], "2024-04-05T19:34:38.000001Z");
  EXPECT_EQ(HistoryText("t", {}), "task t: no history yet\n");
}

TEST(CliNodesViews, LabelsSortedAndNeverSeen) {
  v1::ListNodesResponse r;
  v1::Node* n = r.add_nodes();
  n->set_node_id("edge-1");
  (*n->mutable_labels())["zone"] = "b";
  (*n->mutable_labels())["role"] = "worker";
  n->add_groups("g1");
  n->add_groups("g2");
  n->set_liveness("NEVER_SEEN");
  n->set_mode("NORMAL");
  std::string s = NodesText(r);
  EXPECT_THAT(s,
              HasSubstr("NODE    LIVENESS    MODE    CONNECTED  RUNNING  LAST_HEARTBEAT  LABELS"));
  EXPECT_THAT(s, HasSubstr("edge-1  NEVER_SEEN  NORMAL  no         0        never           "
                           "role=worker,zone=b  g1,g2"));
  nlohmann::json j = NodesToJson(r);
  EXPECT_EQ(j["nodes"][0]["labels"], (nlohmann::json{{"role", "worker"}, {"zone", "b"}}));
  EXPECT_TRUE(j["nodes"][0]["last_heartbeat"].is_null());
  EXPECT_EQ(NodesText({}), "no nodes\n");
}

TEST(CliSubmitViews, CreatedUnchangedDryRunAndProblems) {
  v1::SubmitTasksResponse r;
  v1::SubmittedTask* t = r.add_tasks();
  t->set_task_id("a");
  t->set_created(true);
  t->add_nodes("n1");
  t->add_nodes("n2");
  t = r.add_tasks();
  t->set_task_id("b");
  r.add_warnings("node 'x' is not registered");
  EXPECT_EQ(SubmitText(r, false),
            "task a: created, 2 nodes: n1, n2\ntask b: already submitted (unchanged), 0 nodes\n");
  EXPECT_EQ(SubmitText(r, true),
            "task a: would target 2 nodes: n1, n2\ntask b: would target 0 nodes\n"
            "dry run: nothing was stored\n");
  v1::Diagnostic* d = r.add_errors();
  d->set_file("f.yaml");
  d->set_line(3);
  d->set_column(5);
  d->set_message("no node matches label role=db");
  EXPECT_EQ(SubmitProblemsText(r),
            "f.yaml:3:5: no node matches label role=db\nwarning: node 'x' is not registered\n");
  nlohmann::json j = SubmitToJson(r, false);
  EXPECT_FALSE(j["stored"]);
  EXPECT_EQ(j["errors"][0]["line"], 3);
}

TEST(CliDescribeRpcError, OperatorWording) {
  RpcCallInfo info{"127.0.0.1:7011", "t-1", false, 10};
  Status s = DescribeRpcError({grpc::StatusCode::UNAVAILABLE, "failed to connect\nall"}, info);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "cannot reach the orchestrator at 127.0.0.1:7011: failed to connect all");
  EXPECT_EQ(DescribeRpcError({grpc::StatusCode::NOT_FOUND, "x"}, info).message(), "no task 't-1'");
  EXPECT_EQ(
      DescribeRpcError({grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"}, info).message(),
      "cannot reach the orchestrator at 127.0.0.1:7011: Deadline Exceeded");
  info.channel_was_ready = true;
  EXPECT_EQ(
      DescribeRpcError({grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"}, info).message(),
      "the orchestrator at 127.0.0.1:7011 did not answer within 10s");
  EXPECT_EQ(DescribeRpcError({grpc::StatusCode::FAILED_PRECONDITION, "task is SUCCEEDED"}, info)
                .message(),
            "task is SUCCEEDED");
  EXPECT_EQ(DescribeRpcError({grpc::StatusCode::INTERNAL, ""}, info).message(),
            "the orchestrator answered INTERNAL");
}

TEST(CliDescribeRpcError, SeveralReplicasNoneReachable) {
  EXPECT_EQ(ServersPhrase({"127.0.0.1:7011"}), "127.0.0.1:7011");
  RpcCallInfo info{ServersPhrase({"a:7011", "b:7011", "c:7011"}), "", false, 10};
  EXPECT_EQ(info.server, "any of a:7011, b:7011, c:7011");
  EXPECT_EQ(DescribeRpcError({grpc::StatusCode::UNAVAILABLE, "Connection refused"}, info).message(),
            "cannot reach the orchestrator at any of a:7011, b:7011, c:7011: Connection refused");
}

v1::Task WithStates(const std::string& rollup, std::vector<std::string> states) {
  v1::Task t;
  t.set_task_id("w");
  t.set_status(rollup);
  for (size_t i = 0; i < states.size(); ++i) {
    v1::NodeTask* n = t.add_nodes();
    n->set_node_id("n" + std::to_string(i));
    n->set_status(states[i]);
  }
  return t;
}

TEST(CliIsWatchFinal, FollowsTheRollUpRules) {
  EXPECT_TRUE(IsWatchFinal(WithStates("SUCCEEDED", {"SUCCEEDED"})));
  EXPECT_TRUE(IsWatchFinal(WithStates("CANCELLED", {"CANCELLED", "SUCCEEDED"})));
  EXPECT_TRUE(IsWatchFinal(WithStates("FAILED", {"FAILED", "SUCCEEDED"})));
  EXPECT_TRUE(IsWatchFinal(WithStates("TIMEOUT", {"TIMEOUT"})));
  EXPECT_FALSE(IsWatchFinal(WithStates("FAILED", {"FAILED", "RETRYING"})));
  EXPECT_FALSE(IsWatchFinal(WithStates("TIMEOUT", {"TIMEOUT", "PENDING"})));
  EXPECT_FALSE(IsWatchFinal(WithStates("RUNNING", {"RUNNING"})));
  EXPECT_FALSE(IsWatchFinal(WithStates("PENDING", {})));
}

TEST(CliIsWatchFinal, FailedWithRetriesLeftIsNotFinal) {
  v1::Task t = WithStates("FAILED", {"FAILED", "SUCCEEDED"});
  t.set_spec_json(R"({"retry_policy": {"max_retries": 2}})");
  t.mutable_nodes(0)->set_retries(1);
  EXPECT_FALSE(IsWatchFinal(t));  // the supervisor will retry it
  t.mutable_nodes(0)->set_retries(2);
  EXPECT_TRUE(IsWatchFinal(t));
  t.set_spec_json("not json");
  t.mutable_nodes(0)->set_retries(0);
  EXPECT_TRUE(IsWatchFinal(t));  // unknown policy: the roll-up decides
}

TEST(CliWatchPrinter, PrintsOnlyChanges) {
  WatchPrinter p;
  v1::Task t = WithStates("DISPATCHED", {"DISPATCHED", "PENDING"});
  t.mutable_nodes(0)->set_updated_at_us(kT0);
  EXPECT_EQ(p.Update(t),
            "2024-04-05T19:34:38.000000Z  n0  DISPATCHED  attempt 0\n"
            "-  n1  PENDING  attempt 0\n"
            "task w: DISPATCHED\n");
  t.mutable_nodes(0)->set_updated_at_us(kT0 + 5);  // time alone: nothing new
  EXPECT_EQ(p.Update(t), "");
  t.mutable_nodes(1)->set_status("RUNNING");
  t.mutable_nodes(1)->set_attempt(1);
  t.mutable_nodes(1)->set_updated_at_us(kT0);
  t.set_status("RUNNING");
  EXPECT_EQ(p.Update(t), "2024-04-05T19:34:38.000000Z  n1  RUNNING  attempt 1\ntask w: RUNNING\n");
  t.mutable_nodes(0)->set_blocked_reason("awaiting_ack since T");
  EXPECT_THAT(p.Update(t), HasSubstr("n0  DISPATCHED  attempt 0  blocked: awaiting_ack since T\n"));
  EXPECT_THAT(p.Update(t), Not(HasSubstr("n0")));
}

}  // namespace
}  // namespace apollo::cli
