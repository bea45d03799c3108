#include "orchestrator/http/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>

#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator::http {
namespace {

// A server on 127.0.0.1:0 with stand-in backends (no gRPC behind the API:
// the e2e test http_api_test.sh covers the API against a real orchestrator).
class HttpServerTest : public ::testing::Test {
 protected:
  void Start(bool acl) {
    access_ = std::make_unique<AccessControl>(*temp_.store(), clock_, acl);
    HttpServerOptions o;
    o.listen = {"127.0.0.1", 0};
    o.threads = 2;
    HttpBackends b;
    b.access = access_.get();
    b.metrics = [this] { return "apollo_up " + std::to_string(++scrapes_) + "\n"; };
    b.ready = [this] { return ready_; };
    server_ = std::make_unique<HttpServer>(o, b);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  static nlohmann::json Json(const httplib::Result& r) {
    return nlohmann::json::parse(r->body, nullptr, false);
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  std::unique_ptr<AccessControl> access_;
  std::atomic<int> scrapes_{0};
  Status ready_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpServerTest, HealthAndReadiness) {
  Start(false);
  auto r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok\n");
  r = client_->Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Json(r)["ready"], true);
  ready_ = Status::Unavailable("store: database is locked");
  r = client_->Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(Json(r)["ready"], false);
  EXPECT_EQ(Json(r)["reason"], "store: database is locked");
}

TEST_F(HttpServerTest, EveryErrorIsJson) {
  Start(false);
  for (const char* path : {"/nowhere", "/api/v1/tasks"}) {  // no API behind this server
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_GE(r->status, 400) << path;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << path;
    auto j = Json(r);
    EXPECT_TRUE(j["error"]["code"].is_string()) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string()) << r->body;
  }
  auto r = client_->Get("/nowhere");
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(Json(r)["error"]["message"].get<std::string>().find("no route GET /nowhere"),
            std::string::npos);
}

TEST_F(HttpServerTest, MetricsNeedAViewerTokenWhenTokensAreOn) {
  Start(true);
  auto r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Json(r)["error"]["code"], "UNAUTHENTICATED");
  EXPECT_EQ(scrapes_.load(), 0);  // refused before scraping
  store::TokenRow t;
  t.name = "vera";
  t.role = "viewer";
  t.hash = TokenHash("apollo-viewer");
  t.created_at = clock_.Now();
  ASSERT_TRUE(temp_.store()->CreateToken(t, false).ok());
  r = client_->Get("/metrics", {{"Authorization", "Bearer apollo-viewer"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "apollo_up 1\n");
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  r = client_->Get("/healthz");  // no token needed
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, ABusyAddressIsUnavailableAndStopIsIdempotent) {
  Start(false);
  HttpServerOptions o;
  o.listen = {"127.0.0.1", static_cast<uint16_t>(server_->port())};
  HttpServer second(o, {});
  Status s = second.Start();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("cannot listen on 127.0.0.1:"), std::string::npos) << s.message();
  server_->Stop();
  server_->Stop();
  EXPECT_FALSE(client_->Get("/healthz"));  // no longer served
}

TEST_F(HttpServerTest, ABadCertificateIsRefusedAtStart) {
  HttpServerOptions o;
  o.listen = {"127.0.0.1", 0};
  o.tls_cert = "/nonexistent/cert.pem";
  o.tls_key = "/nonexistent/key.pem";
  HttpServer s(o, {});
  Status st = s.Start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("/nonexistent/cert.pem"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace apollo::orchestrator::http
