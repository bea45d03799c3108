// Operator tokens and roles through a real in-process gRPC server on
// loopback, a real SQLite store: every RPC of the operator API against the
// role table of access_control.h, expiry, revocation, bootstrap-once, and the
// audit rows of mutating calls.
#include "orchestrator/access_control.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "orchestrator/api_service.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

using Stub = apollo::v1::Orchestrator::Stub;
// One call of the operator API with `ctx`; returns its status.
using Call = std::function<grpc::Status(Stub&, grpc::ClientContext&)>;

template <typename Req, typename Resp>
Call Unary(grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*), Req req = {}) {
  return [method, req](Stub& stub, grpc::ClientContext& ctx) {
    Resp resp;
    return (stub.*method)(&ctx, req, &resp);
  };
}

// Every RPC with the role it needs.
std::map<std::string, std::pair<Role, Call>> Table() {
  apollo::v1::SubmitTasksRequest submit;
  submit.set_content(
      "task_id: t1\nintent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 60\n");
  submit.set_file_name("t.yaml");
  submit.set_force(true);  // no node offers it: this is about who may submit
  apollo::v1::SubmitTasksRequest dry = submit;
  dry.set_dry_run(true);
  apollo::v1::ReconcileRequest check;
  check.set_dry_run(true);
  apollo::v1::CreateTokenRequest create;
  create.set_name("made");
  create.set_role("viewer");
  apollo::v1::RevokeTokenRequest revoke;
  revoke.set_name("nobody");
  return {
      {"GetTask", {Role::kViewer, Unary(&Stub::GetTask)}},
      {"WhoAmI", {Role::kViewer, Unary(&Stub::WhoAmI)}},
      {"WatchTasks",
       {Role::kViewer,
        [](Stub& stub, grpc::ClientContext& ctx) {
          apollo::v1::WatchTasksRequest req;
          req.set_task_id("no-such-task");
          auto reader = stub.WatchTasks(&ctx, req);
          apollo::v1::WatchTasksResponse r;
          while (reader->Read(&r)) {
          }
          return reader->Finish();
        }}},
      {"ListTasks", {Role::kViewer, Unary(&Stub::ListTasks)}},
      {"ListNodes", {Role::kViewer, Unary(&Stub::ListNodes)}},
      {"TaskEvents", {Role::kViewer, Unary(&Stub::TaskEvents)}},
      {"ListIntents", {Role::kViewer, Unary(&Stub::ListIntents)}},
      {"ListDeadLetters", {Role::kViewer, Unary(&Stub::ListDeadLetters)}},
      {"GetDeadLetter", {Role::kViewer, Unary(&Stub::GetDeadLetter)}},
      {"BusStatus", {Role::kViewer, Unary(&Stub::BusStatus)}},
      {"ClusterStatus", {Role::kViewer, Unary(&Stub::ClusterStatus)}},
      {"ListAlerts", {Role::kViewer, Unary(&Stub::ListAlerts)}},
      {"Reconcile --dry-run", {Role::kViewer, Unary(&Stub::Reconcile, check)}},
      {"SubmitTasks --dry-run", {Role::kOperator, Unary(&Stub::SubmitTasks, dry)}},
      {"SubmitTasks", {Role::kOperator, Unary(&Stub::SubmitTasks, submit)}},
      {"CancelTask", {Role::kOperator, Unary(&Stub::CancelTask)}},
      {"RetryTask", {Role::kOperator, Unary(&Stub::RetryTask)}},
      {"WatchTask",
       {Role::kOperator,
        [](Stub& stub, grpc::ClientContext& ctx) {
          apollo::v1::WatchTaskRequest req;
          req.set_task_id("no-such-task");
          auto reader = stub.WatchTask(&ctx, req);
          apollo::v1::Task t;
          while (reader->Read(&t)) {
          }
          return reader->Finish();
        }}},
      {"SyncNode", {Role::kAdmin, Unary(&Stub::SyncNode)}},
      {"Reconcile", {Role::kAdmin, Unary(&Stub::Reconcile)}},
      {"ReplayDeadLetters", {Role::kAdmin, Unary(&Stub::ReplayDeadLetters)}},
      {"DropDeadLetter", {Role::kAdmin, Unary(&Stub::DropDeadLetter)}},
      {"CreateToken", {Role::kAdmin, Unary(&Stub::CreateToken, create)}},
      {"ListTokens", {Role::kAdmin, Unary(&Stub::ListTokens)}},
      {"RevokeToken", {Role::kAdmin, Unary(&Stub::RevokeToken, revoke)}},
      {"ListAudit", {Role::kAdmin, Unary(&Stub::ListAudit)}},
  };
}

class AccessControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.status().ok()) << temp_.status().ToString();
    clock_.Set(FromUnixMicros(1'800'000'000'000'000));
    orch_ = std::make_unique<Orchestrator>(OrchestratorOptions{}, *store_, clock_);
    api_ = std::make_unique<ApiService>(*store_, *orch_, clock_, access_);
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(api_.get());
    server_ = b.BuildAndStart();
    ASSERT_NE(port, 0);
    stub_ = apollo::v1::Orchestrator::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    api_.reset();
    orch_.reset();
  }
  // A token of `role`, straight into the store; returns the token.
  std::string Token(const std::string& name, Role role,
                    std::optional<TimePoint> expires = std::nullopt) {
    std::string token = NewToken();
    store::TokenRow row{
        name,  std::string(RoleName(role)), TokenHash(token), clock_.Now(), expires, std::nullopt,
        "test"};
    EXPECT_TRUE(store_->CreateToken(row, false).ok());
    return token;
  }
  grpc::Status Run(const Call& call, const std::string& token) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    return call(*stub_, ctx);
  }
  std::vector<store::AuditRow> Audit() {
    store::AuditQuery q;
    q.limit = 1000;
    auto rows = store_->ListAudit(q);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<store::AuditRow>{};
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  store::StateStore* store_ = temp_.store();
  AccessControl access_{*store_, clock_, /*enabled=*/true};
  std::unique_ptr<Orchestrator> orch_;
  std::unique_ptr<ApiService> api_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Stub> stub_;
};

bool Refused(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         s.error_code() == grpc::StatusCode::PERMISSION_DENIED;
}

TEST_F(AccessControlTest, WhoAmINamesTheTokenAndItsRole) {
  const std::string token = Token("vera", Role::kOperator);
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + token);
  apollo::v1::WhoAmIResponse r;
  grpc::Status s = stub_->WhoAmI(&ctx, apollo::v1::WhoAmIRequest(), &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.name(), "vera");
  EXPECT_EQ(r.role(), "operator");
  EXPECT_TRUE(r.tokens_required());
}

TEST_F(AccessControlTest, EveryRpcNeedsItsRole) {
  const std::map<Role, std::string> tokens = {{Role::kViewer, Token("v", Role::kViewer)},
                                              {Role::kOperator, Token("o", Role::kOperator)},
                                              {Role::kAdmin, Token("a", Role::kAdmin)}};
  for (const auto& [name, entry] : Table()) {
    const auto& [needed, call] = entry;
    SCOPED_TRACE(name);
    grpc::Status none = Run(call, "");
    EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
    EXPECT_NE(none.error_message().find("APOLLO_TOKEN"), std::string::npos);
    EXPECT_EQ(Run(call, "apollo-not-a-token").error_code(), grpc::StatusCode::UNAUTHENTICATED);
    for (const auto& [role, token] : tokens) {
      grpc::Status s = Run(call, token);
      if (role < needed) {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << RoleName(role) << ": " << s.error_message();
        EXPECT_NE(s.error_message().find(std::string("needs ") + std::string(RoleName(needed))),
                  std::string::npos)
            << s.error_message();
      } else {
        EXPECT_FALSE(Refused(s)) << RoleName(role) << ": " << s.error_message();
      }
    }
  }
  // The refused viewer's submit stored nothing; the admin's did.
  auto t = store_->GetTask("t1");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
}

TEST_F(AccessControlTest, ExpiredAndRevokedTokensAreRefused) {
  std::string brief = Token("brief", Role::kAdmin, clock_.Now() + std::chrono::seconds(60));
  std::string kept = Token("kept", Role::kAdmin);
  Call list = Unary(&Stub::ListTasks);
  EXPECT_TRUE(Run(list, brief).ok());
  clock_.Advance(std::chrono::seconds(61));
  grpc::Status s = Run(list, brief);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("token 'brief' expired at"), std::string::npos)
      << s.error_message();

  apollo::v1::RevokeTokenRequest revoke;
  revoke.set_name("kept");
  EXPECT_TRUE(Run(Unary(&Stub::RevokeToken, revoke), kept).ok());  // revokes itself
  s = Run(list, kept);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("token 'kept' was revoked at"), std::string::npos);
}

TEST_F(AccessControlTest, BootstrapWorksOnceAndMakesAnAdmin) {
  apollo::v1::BootstrapAclRequest req;
  apollo::v1::CreateTokenResponse first;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->BootstrapAcl(&ctx, req, &first).ok());
  }
  EXPECT_EQ(first.name(), "admin");
  EXPECT_EQ(first.role(), "admin");
  EXPECT_EQ(first.token().size(), std::string("apollo-").size() + 48);
  auto stored = store_->FindToken(TokenHash(first.token()));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->role, "admin");
  EXPECT_EQ(stored->hash.find(first.token()), std::string::npos);  // only the hash
  apollo::v1::CreateTokenResponse second;
  grpc::ClientContext ctx;
  grpc::Status s = stub_->BootstrapAcl(&ctx, req, &second);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(second.token().empty());
  EXPECT_TRUE(Run(Unary(&Stub::ListTokens), first.token()).ok());
}

TEST_F(AccessControlTest, MutatingCallsAreAudited) {
  std::string viewer = Token("vera", Role::kViewer);
  std::string admin = Token("ada", Role::kAdmin);
  apollo::v1::SubmitTasksRequest submit;
  submit.set_content(
      "task_id: t9\nintent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 60\n");
  submit.set_file_name("t.yaml");
  submit.set_force(true);
  EXPECT_EQ(Run(Unary(&Stub::SubmitTasks, submit), viewer).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Run(Unary(&Stub::SubmitTasks, submit), admin).ok());
  apollo::v1::CancelTaskRequest cancel;
  cancel.set_task_id("t9");
  EXPECT_TRUE(Run(Unary(&Stub::CancelTask, cancel), admin).ok());
  EXPECT_TRUE(Run(Unary(&Stub::ListTasks), admin).ok());  // a read: not audited
  submit.set_dry_run(true);
  EXPECT_TRUE(Run(Unary(&Stub::SubmitTasks, submit), admin).ok());  // a dry run: not audited

  std::vector<store::AuditRow> rows = Audit();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].who, "vera");
  EXPECT_EQ(rows[0].action, "task.submit");
  EXPECT_EQ(rows[0].outcome.rfind("PERMISSION_DENIED: ", 0), 0u) << rows[0].outcome;
  EXPECT_EQ(rows[1].who, "ada");
  EXPECT_EQ(rows[1].target, "t9");
  EXPECT_EQ(rows[1].outcome, "ok");
  EXPECT_EQ(rows[2].action, "task.cancel");
  EXPECT_EQ(rows[2].target, "t9");
  for (const auto& r : rows) {
    EXPECT_EQ(r.peer.rfind("ipv4:127.0.0.1:", 0), 0u) << r.peer;
    EXPECT_EQ(r.args_digest.size(), 64u);
  }
  // The same request gives the same digest; another, another.
  EXPECT_NE(rows[1].args_digest, rows[2].args_digest);
  submit.set_dry_run(false);
  EXPECT_EQ(RequestDigest(submit), rows[1].args_digest);
}

TEST(AccessControlRoles, OrderAndNames) {
  EXPECT_LT(Role::kViewer, Role::kOperator);
  EXPECT_LT(Role::kOperator, Role::kAdmin);
  for (Role r : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
  }
  EXPECT_FALSE(ParseRole("root").has_value());
  EXPECT_NE(NewToken(), NewToken());
  // SHA-256 of "abc" (FIPS 180-2 test vector).
  EXPECT_EQ(TokenHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace apollo::orchestrator
