#include "bus/testing/nats_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace apollo::bus::testing {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

bool LogSaysReady(const std::string& log, size_t starts) {
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t n = 0;
  for (size_t pos = text.find("Server is ready"); pos != std::string::npos;
       pos = text.find("Server is ready", pos + 1)) {
    ++n;
  }
  return n >= starts;
}

}  // namespace

Status NatsServer::Start() {
  if (pid_ > 0) return Status::Ok();
  if (access("/usr/sbin/nats-server", X_OK) != 0 && access("/usr/bin/nats-server", X_OK) != 0) {
    return Status::FailedPrecondition("nats-server not installed (apt-get install nats-server)");
  }
  if (port_ == 0) port_ = FreePort();
  if (port_ == 0) return Status::Unavailable("no free port");
  std::string log = dir_ + "/nats.log";
  size_t starts_before = 0;
  {
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) starts_before += line.find("Server is ready") != std::string::npos;
  }
  std::string port = std::to_string(port_);
  std::string sd = dir_ + "/js";
  pid_t pid = fork();
  if (pid < 0) return Status::Internal("fork failed");
  if (pid == 0) {
    execlp("nats-server", "nats-server", "-js", "-sd", sd.c_str(), "-a", "127.0.0.1", "-p",
           port.c_str(), "-l", log.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::Unavailable("nats-server exited at start; see " + log);
    }
    if (LogSaysReady(log, starts_before + 1)) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
  return Status::DeadlineExceeded("nats-server not ready within 10 s; see " + log);
}

void NatsServer::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
}

}  // namespace apollo::bus::testing
