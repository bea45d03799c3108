#include "apollo_bench/orchestrator_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace apollo::bench {
namespace {

using Steady = std::chrono::steady_clock;

bool CanConnect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// The port in the last "listening on 127.0.0.1:PORT" line written after
// byte `from` of the log, or 0.
int FindPort(const std::string& log_path, std::streamoff from) {
  std::ifstream in(log_path);
  in.seekg(from);
  std::stringstream ss;
  ss << in.rdbuf();
  static const std::regex kListening("listening on 127\\.0\\.0\\.1:([0-9]+)");
  int port = 0;
  std::string text = ss.str();
  for (std::sregex_iterator it(text.begin(), text.end(), kListening), end; it != end; ++it) {
    port = std::stoi((*it)[1]);
  }
  return port;
}

std::streamoff FileSize(const std::string& path) {
  std::ifstream in(path, std::ios::ate);
  return in ? static_cast<std::streamoff>(in.tellg()) : 0;
}

std::optional<std::string> StatusField(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 1);
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<OrchestratorProcess>> OrchestratorProcess::Start(
    const OrchestratorSpec& spec, Duration timeout) {
  std::unique_ptr<OrchestratorProcess> p(new OrchestratorProcess(spec));
  APOLLO_RETURN_IF_ERROR(p->Launch(0, timeout));
  return p;
}

OrchestratorProcess::~OrchestratorProcess() { Kill(); }

Status OrchestratorProcess::Launch(int port, Duration timeout) {
  std::streamoff log_start = FileSize(spec_.log_path);
  std::vector<std::string> args = {spec_.binary, "--listen", "127.0.0.1:" + std::to_string(port),
                                   "--store", spec_.store_url};
  args.insert(args.end(), spec_.extra_args.begin(), spec_.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // posix_spawn, not fork: this process runs thousands of threads.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec_.log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (spec_.own_session) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, spec_.binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::Unavailable("cannot start " + spec_.binary + ": " + strerror(rc));
  pid_ = pid;

  auto deadline = Steady::now() + timeout;
  while (Steady::now() < deadline) {
    int found = FindPort(spec_.log_path, log_start);
    if (found != 0 && CanConnect(found)) {
      port_ = found;
      return Status::Ok();
    }
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::Unavailable("the orchestrator exited at start; see " + spec_.log_path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
  return Status::DeadlineExceeded("the orchestrator did not start listening; see " +
                                  spec_.log_path);
}

void OrchestratorProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void OrchestratorProcess::Terminate(Duration timeout) {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  auto deadline = Steady::now() + timeout;
  while (Steady::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
}

Status OrchestratorProcess::Restart(Duration timeout) {
  Kill();
  return Launch(port_, timeout);
}

std::optional<double> ProcessRssMb(pid_t pid) {
  auto v = StatusField(pid, "VmRSS");  // "   12345 kB"
  if (!v) return std::nullopt;
  return std::stod(*v) / 1024.0;
}

std::optional<int> ProcessThreads(pid_t pid) {
  auto v = StatusField(pid, "Threads");
  if (!v) return std::nullopt;
  return std::stoi(*v);
}

std::optional<int64_t> ProcessMaxOpenFiles(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  std::string line;
  while (std::getline(in, line)) {
    // "Max open files            20000                20000                files"
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(sizeof("Max open files") - 1));
    std::string soft;
    if (!(fields >> soft)) return std::nullopt;
    if (soft == "unlimited") return -1;
    return std::stoll(soft);
  }
  return std::nullopt;
}

std::optional<int64_t> ProcessOpenFiles(pid_t pid) {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec);
  if (ec) return std::nullopt;
  int64_t n = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return std::nullopt;
    ++n;
  }
  return n;
}

std::optional<double> ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // Fields after the ")" that closes the command name: state is field 3,
  // utime field 14, stime field 15.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace apollo::bench
