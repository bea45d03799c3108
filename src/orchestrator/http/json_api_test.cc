#include "orchestrator/http/json_api.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "orchestrator/http/openapi.h"

namespace apollo::orchestrator::http {
namespace {

TEST(JsonApiTest, QueryParametersFillTheRequestByFieldName) {
  apollo::v1::ListTasksRequest req;
  std::multimap<std::string, std::string> q = {
      {"status", "RUNNING"}, {"limit", "5"}, {"metadata.team", "web"}, {"metadata.env", "prod"}};
  ASSERT_TRUE(FillFromQuery(q, &req).ok());
  EXPECT_EQ(req.status(), "RUNNING");
  EXPECT_EQ(req.limit(), 5);
  EXPECT_EQ(req.metadata().at("team"), "web");
  EXPECT_EQ(req.metadata().at("env"), "prod");
}

TEST(JsonApiTest, ABadQueryParameterSaysWhichAndWhy) {
  apollo::v1::ListTasksRequest req;
  Status s = FillFromQuery({{"limt", "5"}}, &req);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown parameter 'limt'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("limit"), std::string::npos) << s.message();
  s = FillFromQuery({{"limit", "five"}}, &req);
  EXPECT_NE(s.message().find("parameter 'limit': expected a 32-bit integer"), std::string::npos)
      << s.message();
  apollo::v1::SubmitTasksRequest submit;
  s = FillFromQuery({{"dry_run", "maybe"}}, &submit);
  EXPECT_NE(s.message().find("expected true or false"), std::string::npos) << s.message();
}

TEST(JsonApiTest, RoutesMatchWithTheirPathParameters) {
  std::map<std::string, std::string> params;
  bool path_matched = false;
  const Route* r = JsonApi::Match("GET", "/api/v1/tasks/t-1/events", &params, &path_matched);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->rpc, "TaskEvents");
  EXPECT_EQ(params.at("task_id"), "t-1");
  r = JsonApi::Match("POST", "/api/v1/dead-letters/replay", &params, &path_matched);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->rpc, "ReplayDeadLetters");
  EXPECT_EQ(JsonApi::Match("DELETE", "/api/v1/tasks/t-1", &params, &path_matched), nullptr);
  EXPECT_TRUE(path_matched);  // -> 405, not 404
  EXPECT_EQ(JsonApi::Match("GET", "/api/v1/taskz", &params, &path_matched), nullptr);
  EXPECT_FALSE(path_matched);
  EXPECT_EQ(JsonApi::Match("GET", "/api/v1/tasks/", &params, &path_matched), nullptr);
}

TEST(JsonApiTest, ErrorsAreJsonWithTheGrpcCodeAndAnHttpStatus) {
  ApiResponse r = ErrorResponse(StatusCode::kNotFound, "no task 'x'");
  EXPECT_EQ(r.status, 404);
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["error"]["code"], "NOT_FOUND");
  EXPECT_EQ(j["error"]["message"], "no task 'x'");
  EXPECT_EQ(HttpStatusOf(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(StatusCode::kUnavailable), 503);
  // Bytes that are not UTF-8 (a task file's) do not throw.
  EXPECT_NO_THROW(ErrorResponse(StatusCode::kInvalidArgument, "bad \xff byte"));
}

TEST(JsonApiTest, TheOpenApiDocumentHasEveryRouteAndEverySchemaItNames) {
  nlohmann::json doc = OpenApiDocument();
  EXPECT_EQ(doc["openapi"], "3.0.3");
  for (const Route& r : JsonApiRoutes()) {
    std::string m = r.method == "GET" ? "get" : "post";
    ASSERT_TRUE(doc["paths"].contains(r.path)) << r.path;
    EXPECT_EQ(doc["paths"][r.path][m]["operationId"], r.rpc) << r.path;
  }
  // Every $ref resolves.
  std::set<std::string> refs;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "$ref") refs.insert(it.value().get<std::string>());
        walk(it.value());
      }
    } else if (j.is_array()) {
      for (const auto& e : j) walk(e);
    }
  };
  walk(doc);
  ASSERT_FALSE(refs.empty());
  for (const std::string& ref : refs) {
    const std::string name = ref.substr(ref.rfind('/') + 1);
    EXPECT_TRUE(doc["components"]["schemas"].contains(name)) << ref;
  }
  // 64-bit integers are strings in protobuf's JSON mapping.
  EXPECT_EQ(doc["components"]["schemas"]["Task"]["properties"]["created_at_us"]["type"], "string");
}

}  // namespace
}  // namespace apollo::orchestrator::http
