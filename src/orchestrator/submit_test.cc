// SubmitTaskFile with typed specs (issue 18): the same tasks stored as from
// the file, the same refusals, and content with specs refused.
#include "orchestrator/submit.h"

#include <gtest/gtest.h>

#include "core/task_spec_proto.h"
#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

constexpr const char* kFile = R"(tasks:
  - task_id: sub-write
    intent: ensure_file
    target_selector: {type: label, key: role, value: web}
    timeout: 30
    retry_policy: {preset: slow}
    params: {path: /etc/app.conf, content: "port = 80\n", mode: "0644"}
    metadata: {operator: ops}
    priority: high
    start_timeout: 45
    on_failure: {intent: ensure_file, params: {path: /etc/app.conf.bak}}
  - task_id: sub-check
    intent: noop
    target_selector: {type: nodes, nodes: [web-1]}
    timeout: 10
    depends_on: [sub-write]
    callback_url: https://hooks.example.com/apollo
  - intent: noop
    target_selector: {type: group, group: edge}
    timeout: 5
    retry_policy: {tiers: [{preset: fast}, {max_retries: 2, initial_interval: 1, max_interval: 4}]}
)";

class SubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (store::StateStore* s : {a_.store(), b_.store()}) {
      ASSERT_NE(s, nullptr);
      for (const char* id : {"web-1", "web-2"}) {
        store::NodeInfo n;
        n.node_id = id;
        n.labels = {{"role", "web"}};
        n.groups = {"edge"};
        n.intents = {"ensure_file", "noop"};
        ASSERT_TRUE(s->UpsertNode(n).ok());
      }
    }
    options_.presets = &presets_;
  }

  // The file as the CLI sends it: parsed here, typed, presets by name.
  v1::SubmitTasksRequest Typed(const std::string& content) {
    ParsedTasks parsed =
        ParseTaskFile(content, "f.yaml", {}, [](std::string_view) { return true; });
    EXPECT_TRUE(parsed.ok());
    v1::SubmitTasksRequest req;
    req.set_file_name("f.yaml");
    for (size_t i = 0; i < parsed.tasks.size(); ++i) {
      TaskSpecToProto(parsed.tasks[i], parsed.retry_written[i], req.add_specs());
    }
    return req;
  }

  v1::SubmitTasksRequest Yaml(const std::string& content) {
    v1::SubmitTasksRequest req;
    req.set_file_name("f.yaml");
    req.set_content(content);
    return req;
  }

  Status Submit(store::StateStore& s, const v1::SubmitTasksRequest& req,
                v1::SubmitTasksResponse* resp) {
    return SubmitTaskFile(req, options_, s, ids_, resp);
  }

  ManualClock clock_;
  testing::TempStore a_{clock_};
  testing::TempStore b_{clock_};
  TaskIdGenerator ids_{clock_, {1, 2, 3, 4}};
  // The server's presets differ from the built-in ones: the typed request
  // must get these, as the file does.
  RetryPresets presets_ = [] {
    RetryPresets p = BuiltinRetryPresets();
    p["slow"] = RetryPolicy{
        7, std::chrono::seconds(90), std::chrono::seconds(90), Backoff::kFixed, false, {}};
    return p;
  }();
  SubmitOptions options_;
};

TEST_F(SubmitTest, TypedSpecsStoreTheSameTasksAsTheFile) {
  v1::SubmitTasksResponse from_file, typed;
  ASSERT_TRUE(Submit(*a_.store(), Yaml(kFile), &from_file).ok());
  ASSERT_TRUE(Submit(*b_.store(), Typed(kFile), &typed).ok());
  ASSERT_EQ(from_file.errors_size(), 0) << from_file.errors(0).message();
  ASSERT_EQ(typed.errors_size(), 0) << typed.errors(0).message();
  ASSERT_EQ(from_file.tasks_size(), 3);
  ASSERT_EQ(typed.tasks_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(typed.tasks(i).created());
    EXPECT_EQ(typed.tasks(i).nodes().size(), from_file.tasks(i).nodes().size());
  }
  for (const char* id : {"sub-write", "sub-check"}) {
    auto x = a_.store()->GetTask(id);
    auto y = b_.store()->GetTask(id);
    ASSERT_TRUE(x.ok() && y.ok()) << id;
    EXPECT_EQ(CanonicalSpec(y->spec), CanonicalSpec(x->spec)) << id;
    EXPECT_EQ(y->start_timeout, x->start_timeout) << id;
    ASSERT_EQ(y->nodes.size(), x->nodes.size()) << id;
    for (size_t n = 0; n < x->nodes.size(); ++n)
      EXPECT_EQ(y->nodes[n].node_id, x->nodes[n].node_id);
  }
  auto write = b_.store()->GetTask("sub-write");
  ASSERT_TRUE(write.ok());
  EXPECT_EQ(write->spec.retry_policy.max_retries, 7) << "the server's slow preset";
  // The generated id differs; the spec behind it does not.
  auto gx = a_.store()->GetTask(from_file.tasks(2).task_id());
  auto gy = b_.store()->GetTask(typed.tasks(2).task_id());
  ASSERT_TRUE(gx.ok() && gy.ok());
  gy->spec.task_id = gx->spec.task_id;
  EXPECT_EQ(CanonicalSpec(gy->spec), CanonicalSpec(gx->spec));

  // Sent typed again to the store that has them from the file: the same
  // canonical specs, so nothing new (idempotent resubmission).
  v1::SubmitTasksRequest again = Typed(kFile);
  again.mutable_specs()->RemoveLast();  // the generated id would be new
  v1::SubmitTasksResponse resp;
  ASSERT_TRUE(Submit(*a_.store(), again, &resp).ok());
  ASSERT_EQ(resp.errors_size(), 0) << resp.errors(0).message();
  ASSERT_EQ(resp.tasks_size(), 2);
  EXPECT_FALSE(resp.tasks(0).created());
  EXPECT_FALSE(resp.tasks(1).created());
}

TEST_F(SubmitTest, ContentAndSpecsTogetherAreRefused) {
  v1::SubmitTasksRequest req = Typed(kFile);
  req.set_content(kFile);
  v1::SubmitTasksResponse resp;
  Status s = Submit(*a_.store(), req, &resp);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "SubmitTasks: set either content (a task file's text) or specs (typed tasks), not both");
  EXPECT_EQ(resp.tasks_size(), 0);
  EXPECT_EQ(a_.store()->GetTask("sub-write").status().code(), StatusCode::kNotFound);
}

TEST_F(SubmitTest, TypedProblemsNameTheTask) {
  // A rule of the file: refused whole, nothing stored.
  v1::SubmitTasksRequest req = Typed(kFile);
  req.mutable_specs(1)->set_timeout_s(-1);
  req.mutable_specs(1)->add_depends_on("nowhere");
  v1::SubmitTasksResponse resp;
  ASSERT_TRUE(Submit(*a_.store(), req, &resp).ok());
  ASSERT_EQ(resp.errors_size(), 1);
  EXPECT_EQ(resp.errors(0).file(), "f.yaml");
  EXPECT_EQ(resp.errors(0).line(), 0);
  EXPECT_EQ(resp.errors(0).column(), 0);
  EXPECT_EQ(resp.errors(0).task_index(), 1);
  EXPECT_EQ(resp.errors(0).message(),
            "task 2 (id sub-check): 'timeout' must be between 1 and 2592000 seconds, got -1");
  EXPECT_EQ(resp.tasks_size(), 0);
  EXPECT_EQ(a_.store()->GetTask("sub-write").status().code(), StatusCode::kNotFound);
  // A dependency the store does not know either.
  req = Typed(kFile);
  req.mutable_specs(1)->add_depends_on("nowhere");
  resp.Clear();
  ASSERT_TRUE(Submit(*a_.store(), req, &resp).ok());
  ASSERT_EQ(resp.errors_size(), 1);
  EXPECT_EQ(resp.errors(0).message(),
            "task 2 (id sub-check): 'depends_on' names unknown task 'nowhere' (not in this file "
            "nor in the store)");

  // An intent the matched nodes do not run: did-you-mean, shared with the
  // file, with the task's index instead of a line.
  std::string misspelt = kFile;
  misspelt.replace(misspelt.find("intent: noop"), 12, "intent: nop");
  req = Typed(misspelt);
  resp.Clear();
  ASSERT_TRUE(Submit(*a_.store(), req, &resp).ok());
  ASSERT_EQ(resp.errors_size(), 1);
  EXPECT_EQ(resp.errors(0).line(), 0);
  EXPECT_EQ(resp.errors(0).task_index(), 1);
  EXPECT_NE(resp.errors(0).message().find("task 'sub-check': intent 'nop' is not offered by"),
            std::string::npos)
      << resp.errors(0).message();
  EXPECT_NE(resp.errors(0).message().find("did you mean 'noop'?"), std::string::npos);
  // The file gives the same message at the intent's line:column.
  v1::SubmitTasksResponse from_file;
  ASSERT_TRUE(Submit(*a_.store(), Yaml(misspelt), &from_file).ok());
  ASSERT_EQ(from_file.errors_size(), 1);
  EXPECT_EQ(from_file.errors(0).message(), resp.errors(0).message());
  EXPECT_EQ(from_file.errors(0).line(), 13);
  EXPECT_EQ(from_file.errors(0).column(), 13);
  EXPECT_EQ(from_file.errors(0).task_index(), 1);
}

}  // namespace
}  // namespace apollo::orchestrator
