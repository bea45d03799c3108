#include "apollo_bench/split_fleet.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "apollo_bench/orchestrator_process.h"
#include "apollo_bench/scenario_env.h"

namespace apollo::bench {
namespace {

using Steady = std::chrono::steady_clock;

// How a reaped child ended, for messages.
std::string ExitDescription(int wstatus) {
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus)) return "was killed by signal " + std::to_string(WTERMSIG(wstatus));
  return "ended";
}

void Add(FleetCounts& sum, const FleetCounts& c) {
  sum.agents += c.agents;
  sum.connected += c.connected;
  sum.synced += c.synced;
  sum.reconciled += c.reconciled;
  sum.sessions += c.sessions;
  sum.threads += c.threads;
  sum.max_fds = std::max(sum.max_fds, c.max_fds);
  sum.processes += c.processes;
}

}  // namespace

Result<std::unique_ptr<FleetChild>> FleetChild::Spawn(const FleetOptions& slice, ChildPids* pids) {
  std::vector<std::string> args = FleetChildArgs(slice);
  args.insert(args.begin(), "apollo-bench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int in[2], out[2];  // its stdin, its stdout; close-on-exec in every other child
  if (pipe2(in, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("pipe: ") + strerror(errno));
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return Status::Unavailable(std::string("pipe: ") + strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child. Only async-signal-safe calls until exec: the parent has
    // other threads. Die with the parent (checking it did not die before).
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0) _exit(127);
    close_range(3, ~0U, 0);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  const int fork_errno = errno;
  close(in[0]);
  close(out[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    return Status::Unavailable(std::string("fork: ") + strerror(fork_errno));
  }
  if (pids) pids->Add(pid);
  std::string name = "fleet child (agents " + std::to_string(slice.first_index) + "-" +
                     std::to_string(slice.first_index + slice.agents - 1) + ", pid " +
                     std::to_string(pid) + ")";
  return std::unique_ptr<FleetChild>(new FleetChild(pid, in[1], out[0], std::move(name), pids));
}

FleetChild::~FleetChild() {
  if (to_child_ >= 0) close(to_child_);
  close(from_child_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    if (pids_) pids_->Remove(pid_);
  }
}

Status FleetChild::Send(const std::string& line) {
  if (to_child_ < 0) return Status::FailedPrecondition(name_ + ": already told to quit");
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(to_child_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Unavailable(name_ + ": cannot write to it: " + strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> FleetChild::ReadLine(Deadline deadline) {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Steady::now()).count();
    if (left <= 0) return Status::DeadlineExceeded(name_ + ": no answer in time");
    pollfd p{from_child_, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, INT_MAX)));
    if (rc < 0 && errno != EINTR) return Status::Unavailable(name_ + ": poll: " + strerror(errno));
    if (rc <= 0) continue;
    char chunk[4096];
    ssize_t n = read(from_child_, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Status::Unavailable(name_ + ": read: " + strerror(errno));
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    // EOF: it exited (or is exiting); say how, if it is reaped within 1 s.
    std::string how = "closed its output";
    auto reap_by = std::min(deadline, Steady::now() + std::chrono::seconds(1));
    int wstatus = 0;
    while (pid_ > 0 && Steady::now() < reap_by) {
      if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
        how = ExitDescription(wstatus);
        if (pids_) pids_->Remove(pid_);
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Status::Unavailable(name_ + " " + how);
  }
}

Result<Reply> FleetChild::ReadReply(Deadline deadline) {
  auto line = ReadLine(deadline);
  if (!line.ok()) return line.status();
  auto reply = ParseReply(*line);
  if (!reply.ok()) return reply.status().WithPrefix(name_);
  if (reply->verb == "error") return Status::Internal(name_ + ": " + reply->text);
  return reply;
}

void FleetChild::Quit() {
  if (to_child_ < 0) return;
  (void)Send(kQuit);
  close(to_child_);
  to_child_ = -1;
}

void FleetChild::Reap(Deadline deadline) {
  while (pid_ > 0 && Steady::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      if (pids_) pids_->Remove(pid_);
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  if (pids_) pids_->Remove(pid_);
  pid_ = -1;
}

Result<std::unique_ptr<SplitFleet>> SplitFleet::Start(const FleetOptions& options, size_t processes,
                                                      const agent::HandlerRegistry& registry,
                                                      const Clock& clock, Duration timeout,
                                                      ChildPids* pids) {
  std::unique_ptr<SplitFleet> f(new SplitFleet());
  f->agents_ = options.agents;
  f->timeout_ = timeout;
  processes = std::clamp<size_t>(processes, 1, std::max<size_t>(1, options.agents));
  std::vector<FleetOptions> slices(processes, options);
  size_t next = options.first_index;
  for (size_t k = 0; k < processes; ++k) {
    slices[k].first_index = next;
    slices[k].agents = options.agents / processes + (k < options.agents % processes ? 1 : 0);
    next += slices[k].agents;
  }
  // Children on failure: killed at once (~FleetChild), not asked to quit.
  auto fail = [&f](Status s) {
    f->children_.clear();
    return s;
  };
  // The children first: fork copies this process while it has few threads,
  // and they open their WALs while this process opens its own.
  for (size_t k = 1; k < processes; ++k) {
    auto child = FleetChild::Spawn(slices[k], pids);
    if (!child.ok()) return fail(child.status());
    f->children_.push_back(std::move(*child));
  }
  auto local = Fleet::Start(slices[0], registry, clock);
  if (!local.ok()) return fail(local.status().WithPrefix("this process's slice"));
  f->local_ = std::move(*local);
  auto deadline = Steady::now() + timeout;
  for (auto& child : f->children_) {
    auto reply = child->ReadReply(deadline);
    if (!reply.ok()) return fail(reply.status());
    if (reply->verb != "started") {
      return fail(Status::Internal(child->name() + ": said " + reply->verb));
    }
  }
  return f;
}

SplitFleet::~SplitFleet() {
  for (auto& child : children_) child->Quit();
  local_.reset();  // stops its agents while the children stop theirs
  auto deadline = Steady::now() + timeout_;
  for (auto& child : children_) child->Reap(deadline);
}

Result<uint64_t> SplitFleet::Mark() {
  for (auto& child : children_) APOLLO_RETURN_IF_ERROR(child->Send(kMark));
  uint64_t sum = local_->Mark();
  auto deadline = Steady::now() + timeout_;
  for (auto& child : children_) {
    auto reply = child->ReadReply(deadline);
    if (!reply.ok()) return reply.status();
    if (reply->verb != "marked" || !reply->values.count("sessions")) {
      return Status::Internal(child->name() + ": said '" + reply->verb + " " + reply->text +
                              "' to mark");
    }
    sum += static_cast<uint64_t>(reply->values.at("sessions"));
  }
  return sum;
}

Result<FleetCounts> SplitFleet::Counts() {
  // Every child counts while this process counts its own slice.
  for (auto& child : children_) APOLLO_RETURN_IF_ERROR(child->Send(kReport));
  FleetCounts sum = local_->Counts();
  sum.threads = ProcessThreads(getpid()).value_or(0);
  sum.max_fds = ProcessOpenFiles(getpid()).value_or(0);
  sum.processes = 1;
  auto deadline = Steady::now() + timeout_;
  for (auto& child : children_) {
    auto reply = child->ReadReply(deadline);
    if (!reply.ok()) return reply.status();
    auto counts = CountsFromReply(*reply);
    if (!counts.ok()) return counts.status().WithPrefix(child->name());
    Add(sum, *counts);
  }
  return sum;
}

}  // namespace apollo::bench
