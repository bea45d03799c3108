#include "agent/handlers/cancel_token.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

int OpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

TEST(CancelTokenTest, FirstReasonWins) {
  CancelToken token;
  EXPECT_FALSE(token.stopped());
  EXPECT_TRUE(token.Cancel());
  EXPECT_FALSE(token.Timeout());
  EXPECT_EQ(token.reason(), StopReason::kCancelled);
  EXPECT_TRUE(token.WaitFor(0ms));
}

TEST(CancelTokenTest, WaitFdTurnsReadableWhenTheTokenTrips) {
  CancelToken token;
  int fd = token.wait_fd();
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(Readable(fd));
  EXPECT_TRUE(token.Timeout());
  EXPECT_TRUE(Readable(fd));
  EXPECT_TRUE(Readable(fd)) << "stays readable for every later poll";
  EXPECT_EQ(token.wait_fd(), fd) << "one fd for the token's life";
}

TEST(CancelTokenTest, WaitFdAskedAfterTheTripIsReadableAtOnce) {
  CancelToken token;
  token.Cancel();
  int fd = token.wait_fd();
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(Readable(fd));
}

// The executor makes a token for every run; a handler that never polls
// (all but the child-process ones) must not cost a file descriptor.
TEST(CancelTokenTest, OnlyATokenAskedForItsFdHoldsOne) {
  const int before = OpenFds();
  ASSERT_GT(before, 0);
  std::vector<std::unique_ptr<CancelToken>> tokens;
  for (int i = 0; i < 64; ++i) tokens.push_back(std::make_unique<CancelToken>());
  for (auto& t : tokens) t->Cancel();
  EXPECT_EQ(OpenFds(), before);
  for (int i = 0; i < 16; ++i) ASSERT_GE(tokens[i]->wait_fd(), 0);
  EXPECT_EQ(OpenFds(), before + 16);
  tokens.clear();
  EXPECT_EQ(OpenFds(), before) << "the token closes its fd";
}

// A trip racing the first wait_fd(): whichever comes first, the fd ends up
// readable.
TEST(CancelTokenTest, ATripRacingTheFirstWaitFdIsNeverLost) {
  for (int i = 0; i < 500; ++i) {
    CancelToken token;
    std::atomic<bool> go{false};
    std::thread tripper([&] {
      while (!go.load()) {
      }
      token.Cancel();
    });
    go.store(true);
    if (i % 2 == 1) std::this_thread::yield();  // let the trip win some rounds
    int fd = token.wait_fd();
    tripper.join();
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(Readable(fd)) << "round " << i;
  }
}

}  // namespace
}  // namespace apollo::agent
