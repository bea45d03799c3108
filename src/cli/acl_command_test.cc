// apollo-cli acl / token / audit: the views, --since, and the command line
// against the fake orchestrator (the token travels as metadata).
// tests/e2e/tls_test.sh runs them against a real orchestrator.
#include "cli/acl_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/command_result.h"
#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::HasSubstr;

v1::AuditEntry Entry(int64_t id, const std::string& who, const std::string& action,
                     const std::string& target, const std::string& outcome) {
  v1::AuditEntry e;
  e.set_id(id);
  e.set_at_us(kT0);
  e.set_who(who);
  e.set_action(action);
  e.set_target(target);
  e.set_args_digest(std::string(64, 'a'));
  e.set_peer("ipv4:127.0.0.1:5000");
  e.set_outcome(outcome);
  return e;
}

TEST(CliAclViews, NewTokenIsShownOnceWithHowToUseIt) {
  v1::CreateTokenResponse t;
  t.set_name("ops");
  t.set_role("operator");
  t.set_token("apollo-abc");
  std::string text = NewTokenText(t);
  EXPECT_THAT(text, HasSubstr("token ops (role operator)"));
  EXPECT_THAT(text, HasSubstr("\n  apollo-abc\n"));
  EXPECT_THAT(text, HasSubstr("export APOLLO_TOKEN=apollo-abc"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("expires")));
  t.set_expires_at_us(kT0);
  EXPECT_THAT(NewTokenText(t), HasSubstr("expires 2024-04-05T19:34:38"));
}

TEST(CliAclViews, TokenStates) {
  v1::ListTokensResponse r;
  EXPECT_THAT(TokensText(r, FromUnixMicros(kT0)), HasSubstr("acl bootstrap"));
  auto* a = r.add_tokens();
  a->set_name("active-one");
  a->set_role("viewer");
  auto* x = r.add_tokens();
  x->set_name("old");
  x->set_role("admin");
  x->set_expires_at_us(kT0 - 1);
  auto* v = r.add_tokens();
  v->set_name("gone");
  v->set_role("operator");
  v->set_revoked_at_us(kT0);
  std::string text = TokensText(r, FromUnixMicros(kT0));
  EXPECT_THAT(text, ::testing::ContainsRegex("active-one +viewer +active .* never"));
  EXPECT_THAT(text, ::testing::ContainsRegex("old +admin +expired"));
  EXPECT_THAT(text, ::testing::ContainsRegex("gone +operator +revoked 2024-04-05"));
}

TEST(CliAclViews, AuditTableJsonAndPaging) {
  v1::ListAuditResponse r;
  EXPECT_EQ(AuditText(r, {}), "no audit entries\n");
  AuditOptions who;
  who.who = "otto";
  EXPECT_EQ(AuditText(r, who), "no audit entries match --who otto\n");
  *r.add_entries() = Entry(1, "", "task.submit", "t1", "ok");
  *r.add_entries() = Entry(2, "otto", "task.cancel", "t1", "PERMISSION_DENIED: token 'otto'\nx");
  r.set_more(true);
  r.set_next_after_id(2);
  std::string text = AuditText(r, who);
  EXPECT_THAT(
      text, ::testing::ContainsRegex("1 +2024-04-05T19:34:38[^ ]* +\\(anonymous\\) +task.submit"));
  EXPECT_THAT(text, HasSubstr("PERMISSION_DENIED: token 'otto' x"));  // one line
  EXPECT_THAT(text, HasSubstr("more entries: apollo-cli audit list --after 2 --who otto"));
  nlohmann::json j = AuditToJson(r.entries(0));
  EXPECT_TRUE(j["who"].is_null());
  EXPECT_EQ(j["action"], "task.submit");
  EXPECT_EQ(j["peer"], "ipv4:127.0.0.1:5000");
}

TEST(CliAclViews, SinceTakesATimeOrADurationAgo) {
  TimePoint now = FromUnixMicros(kT0);
  auto t = ParseSince("2024-04-05T19:00:00Z", now);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 1'712'343'600'000'000);
  auto ago = ParseSince("2h", now);
  ASSERT_TRUE(ago.ok());
  EXPECT_EQ(*ago, kT0 - 2LL * 3600 * 1'000'000);
  for (const char* bad :
       {"yesterday", "2024-04-05", "2024-13-05T19:00:00Z", "-1h", "2024-04-05T19:00:00Zjunk"}) {
    auto r = ParseSince(bad, now);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("UTC time")) << bad;
  }
}

TEST_F(CliCommandsTest, TheTokenTravelsAsMetadataFlagOverEnvironment) {
  CliEnv env;
  env.apollo_token = "apollo-from-env";
  ASSERT_EQ(Cli({"node", "list"}, env).code, kExitOk);
  {
    std::lock_guard lock(fake_.mu);
    EXPECT_EQ(fake_.last_authorization, "Bearer apollo-from-env");
  }
  ASSERT_EQ(Cli({"node", "list", "--token", "apollo-flag"}, env).code, kExitOk);
  {
    std::lock_guard lock(fake_.mu);
    EXPECT_EQ(fake_.last_authorization, "Bearer apollo-flag");
  }
  ASSERT_EQ(Cli({"node", "list"}).code, kExitOk);
  std::lock_guard lock(fake_.mu);
  EXPECT_EQ(fake_.last_authorization, "");  // none: no header at all
}

TEST_F(CliCommandsTest, TokenCreateSendsNameRoleTtlAndPrintsTheTokenOnce) {
  CliRun r = Cli({"token", "create", "--name", "ci", "--role", "operator", "--ttl", "30d"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("export APOLLO_TOKEN=apollo-0123"));
  {
    std::lock_guard lock(fake_.mu);
    EXPECT_EQ(fake_.last_token_create.name(), "ci");
    EXPECT_EQ(fake_.last_token_create.role(), "operator");
    EXPECT_EQ(fake_.last_token_create.ttl_s(), 30 * 86400);
  }
  CliRun j = Cli({"-o", "json", "token", "create", "--name", "ci2", "--role", "viewer"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  nlohmann::json out = nlohmann::json::parse(j.out);
  EXPECT_EQ(out["token"], "apollo-0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_TRUE(out["expires_at"].is_null());

  CliRun bad_role = Cli({"token", "create", "--name", "x", "--role", "root"});
  EXPECT_EQ(bad_role.code, kExitUsage);
  EXPECT_THAT(bad_role.err, HasSubstr("--role"));
  CliRun bad_ttl = Cli({"token", "create", "--name", "x", "--role", "viewer", "--ttl", "soon"});
  EXPECT_EQ(bad_ttl.code, kExitUsage);
  EXPECT_EQ(bad_ttl.err,
            "apollo-cli: --ttl 'soon': give a duration of at least 1s (3600, 12h, 30d)\n");
  CliRun taken = Cli({"token", "create", "--name", "taken", "--role", "viewer"});
  EXPECT_EQ(taken.code, kExitFailure);
  EXPECT_EQ(taken.err, "apollo-cli: a token named taken exists\n");
}

TEST_F(CliCommandsTest, AuditListSendsTheFilters) {
  {
    std::lock_guard lock(fake_.mu);
    *fake_.audit.add_entries() = Entry(5, "otto", "task.submit", "t5", "ok");
  }
  CliRun r =
      Cli({"audit", "list", "--who", "otto", "--since", "2024-04-05T19:00:00Z", "--limit", "5"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("task.submit"));
  {
    std::lock_guard lock(fake_.mu);
    EXPECT_EQ(fake_.last_audit_list.who(), "otto");
    EXPECT_EQ(fake_.last_audit_list.since_us(), 1'712'343'600'000'000);
    EXPECT_EQ(fake_.last_audit_list.limit(), 5);
  }
  CliRun bad = Cli({"audit", "list", "--since", "yesterday"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("--since 'yesterday'"));
}

}  // namespace
}  // namespace apollo::cli::test_support
