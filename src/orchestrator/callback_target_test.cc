// Which callback targets the center refuses (no DNS needed: literals, and
// "localhost" from /etc/hosts), and what a failure's history row says.
#include "orchestrator/callback_target.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace apollo::orchestrator {
namespace {

using ::testing::HasSubstr;

bool Internal(const char* text) {
  sockaddr_storage ss{};
  if (inet_pton(AF_INET, text, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr) == 1) {
    ss.ss_family = AF_INET;
  } else if (inet_pton(AF_INET6, text, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr) == 1) {
    ss.ss_family = AF_INET6;
  } else {
    ADD_FAILURE() << text;
  }
  return IsInternalAddress(reinterpret_cast<const sockaddr*>(&ss));
}

TEST(CallbackTargetTest, InternalAddresses) {
  for (const char* a :
       {"127.0.0.1", "127.3.4.5", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
        "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1",
        "::", "fe80::1", "fc00::1", "fd12::3", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"}) {
    EXPECT_TRUE(Internal(a)) << a;
  }
  for (const char* a : {"8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "100.128.0.1",
                        "2001:4860:4860::8888", "::ffff:8.8.8.8"}) {
    EXPECT_FALSE(Internal(a)) << a;
  }
}

TEST(CallbackTargetTest, InternalHostsAreRefusedUnlessAllowed) {
  for (const char* url : {"http://127.0.0.1:8080/hook", "http://169.254.169.254/latest/meta-data",
                          "https://[::1]/x", "http://10.0.0.5/x", "http://localhost:9/x"}) {
    auto t = CheckCallbackTarget(url, {});
    ASSERT_FALSE(t.ok()) << url;
    EXPECT_EQ(t.status().code(), StatusCode::kPermissionDenied) << url;
    EXPECT_THAT(t.status().message(), HasSubstr("callbacks.allowed_hosts")) << url;
  }
  auto allowed = CheckCallbackTarget("http://127.0.0.1:8080/hook", {"127.0.0.1"});
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ(allowed->port, 8080);
  EXPECT_EQ(allowed->pin, "");
  EXPECT_TRUE(CheckCallbackTarget("http://[::1]:9/x", {"::1"}).ok());
  EXPECT_TRUE(CheckCallbackTarget("http://LocalHost:9/x", {"localhost"}).ok());
}

TEST(CallbackTargetTest, APublicAddressIsPinned) {
  auto t = CheckCallbackTarget("https://93.184.216.34/hook", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->port, 443);
  EXPECT_EQ(t->pin, "93.184.216.34:443:93.184.216.34");
}

TEST(CallbackTargetTest, OnlyHttpUrls) {
  EXPECT_EQ(CheckCallbackTarget("ftp://example.com/x", {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckCallbackTarget("not a url", {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(CallbackTargetTest, FailuresAreReportedByClassOnly) {
  EXPECT_EQ(FailureClass(Status::Unavailable("HTTP 503")), "HTTP 5xx");
  EXPECT_EQ(FailureClass(Status::FailedPrecondition("HTTP 404")), "HTTP 4xx");
  EXPECT_EQ(FailureClass(Status::Unavailable("Timeout was reached")), "timed out");
  EXPECT_EQ(FailureClass(Status::Unavailable("Couldn't connect to server")), "connection failed");
}

}  // namespace
}  // namespace apollo::orchestrator
