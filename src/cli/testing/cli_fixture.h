#pragma once

// The fixture of apollo-cli's end-to-end tests: the real command line
// (RunCli), in-process, against a FakeOrchestrator served on 127.0.0.1:0.
// Each test checks exit code, stdout and stderr as an operator sees them.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <gmock/gmock.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "apollo/v1/api.grpc.pb.h"
#include "cli/app.h"
#include "cli/testing/fake_orchestrator.h"

namespace apollo::cli::test_support {

inline constexpr int64_t kT0 = 1'712'345'678'000'000;

inline v1::Task MakeTask(const std::string& id, const std::string& status,
                         const std::vector<std::pair<std::string, std::string>>& nodes) {
  v1::Task t;
  t.set_task_id(id);
  t.set_intent("collect_metrics");
  t.set_status(status);
  t.set_created_at_us(kT0);
  for (const auto& [node, st] : nodes) {
    v1::NodeTask* n = t.add_nodes();
    n->set_node_id(node);
    n->set_status(st);
    n->set_attempt(1);
    n->set_updated_at_us(kT0 + 1'000'000);
  }
  return t;
}

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

inline constexpr char kValidTask[] = R"(task_id: collect-1
intent: collect_metrics
target_selector:
  type: label
  key: role
  value: worker
timeout: 120
retry_policy:
  max_retries: 3
  initial_interval: 5
  max_interval: 60
  backoff: exponential
)";

class CliCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    b.RegisterService(&fake_);
    server_ = b.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr);
    ASSERT_NE(port_, 0);
    addr_ = "127.0.0.1:" + std::to_string(port_);
  }
  void TearDown() override { server_->Shutdown(); }

  // Runs apollo-cli with `args`, pointed at the fake unless `server` is set.
  CliRun Cli(std::vector<std::string> args, const CliEnv& env = {},
             const std::string& server = "") {
    std::vector<std::string> full = {"apollo-cli"};
    if (!server.empty() || !env.apollo_server) {
      full.push_back("--server");
      full.push_back(server.empty() ? addr_ : server);
    }
    full.insert(full.end(), args.begin(), args.end());
    std::ostringstream out, err;
    CliRun r;
    r.code = RunCli(full, env, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  void AddTask(const v1::Task& t) {
    std::lock_guard lock(fake_.mu);
    fake_.tasks[t.task_id()] = t;
  }

  FakeOrchestrator fake_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string addr_;
};

// An address that refuses connections: a port bound but never listened on,
// held for the object's lifetime so no one else can take it.
class DeadAddress {
 public:
  DeadAddress() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "cannot reserve a loopback port";
    }
    addr_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  }
  ~DeadAddress() {
    if (fd_ >= 0) ::close(fd_);
  }
  DeadAddress(const DeadAddress&) = delete;
  DeadAddress& operator=(const DeadAddress&) = delete;
  const std::string& str() const { return addr_; }

 private:
  int fd_ = -1;
  std::string addr_;
};

inline void ExpectOneErrorLine(const CliRun& r) {
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, ::testing::StartsWith("apollo-cli: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace apollo::cli::test_support
