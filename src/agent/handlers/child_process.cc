#include "agent/handlers/child_process.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agent/handlers/child_spawn.h"
#include "agent/handlers/tail_buffer.h"

namespace apollo::agent {
namespace {

using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Longest single poll() sleep: bounds how late a deadline on an injected
// clock is noticed.
constexpr milliseconds kTick{100};
// Poll period without a pidfd, and while waiting for a group to empty.
constexpr milliseconds kShortTick{20};
// How long a group may take to disappear after SIGKILL before we report it.
constexpr milliseconds kAfterKillWait{5000};
// After the child is reaped, how long we keep reading pipes that a process
// outside the group (it called setsid) may still hold open.
constexpr milliseconds kDrainAfterExit{250};
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kMaxReadsPerPoll = 16;

int ToPollMs(Duration d) {
  auto ms = std::chrono::ceil<milliseconds>(std::max(d, Duration(0))).count();
  return static_cast<int>(std::min<int64_t>(ms, 60'000));
}

class Supervisor {
 public:
  Supervisor(const ChildSpec& spec, SpawnedChild child, const StopCondition& stop,
             const ChildCallbacks& callbacks)
      : spec_(spec), child_(std::move(child)), stop_(stop),
        out_tail_(spec.tail_bytes), err_tail_(spec.tail_bytes),
        lines_(spec.max_line_bytes, callbacks.on_stdout_line),
        hiding_(out_tail_, callbacks.hidden_prefix, spec.max_line_bytes, callbacks.hide_line),
        hide_lines_(!callbacks.hidden_prefix.empty() && callbacks.hide_line) {}

  ChildOutcome Run();

 private:
  void WaitForLeader();
  void StopGroupForLeftovers();
  void Reap();
  void DrainPipes();
  void PollOnce(Duration timeout, bool watch_exit);
  void WriteStdin();
  void ReadFrom(UniqueFd& fd, TailBuffer& tail, bool is_stdout);
  bool LeaderExited() const;
  void SendTerm();
  void EnforceGrace();
  Duration UntilKill() const;

  const ChildSpec& spec_;
  SpawnedChild child_;
  const StopCondition& stop_;
  TailBuffer out_tail_, err_tail_;
  LineSplitter lines_;
  HidingTail hiding_;  // feeds out_tail_ when hide_lines_
  const bool hide_lines_;
  size_t stdin_written_ = 0;
  bool term_sent_ = false;
  Steady::time_point kill_at_;
  Steady::time_point kill_sent_at_;
  ChildOutcome outcome_;
};

ChildOutcome Supervisor::Run() {
  outcome_.pid = child_.pid;
  if (spec_.stdin_data.empty()) child_.stdin_w.Reset();
  WaitForLeader();
  Reap();
  StopGroupForLeftovers();
  DrainPipes();
  lines_.Finish();
  if (hide_lines_) hiding_.Finish();
  outcome_.stdout_tail = out_tail_.Tail();
  outcome_.stderr_tail = err_tail_.Tail();
  outcome_.stdout_truncated = out_tail_.truncated();
  outcome_.stderr_truncated = err_tail_.truncated();
  return outcome_;
}

// Runs until the leader exits. Bounded by the child's own lifetime and,
// once stopped, by the grace period plus SIGKILL.
void Supervisor::WaitForLeader() {
  const Duration cap = child_.pidfd.valid() ? Duration(kTick) : Duration(kShortTick);
  while (!LeaderExited()) {
    if (!term_sent_) {
      StopReason reason = stop_.Check();
      if (reason != StopReason::kNone) {
        outcome_.stopped = reason;
        SendTerm();
      }
    }
    EnforceGrace();
    if (outcome_.killed && Steady::now() - kill_sent_at_ > kAfterKillWait) {
      outcome_.group_left_behind = true;  // stuck in the kernel; stop waiting
      return;
    }
    Duration wait = term_sent_ ? std::min(cap, UntilKill()) : stop_.NextWait(cap);
    PollOnce(wait, /*watch_exit=*/true);
  }
}

// Whatever the child left running in its group is stopped like the child
// itself: SIGTERM, grace, SIGKILL. Signalling the group after reaping its
// leader is safe: Linux keeps a pid number reserved while any process still
// uses it as its group id, so while GroupHasLiveMembers() sees members the
// pgid cannot have been reused. In the common case (no leftovers) this is a
// single kill(-pgid, 0).
void Supervisor::StopGroupForLeftovers() {
  if (outcome_.group_left_behind) return;
  while (GroupHasLiveMembers(child_.pid)) {
    if (!term_sent_) SendTerm();
    EnforceGrace();
    if (outcome_.killed && Steady::now() - kill_sent_at_ > kAfterKillWait) {
      outcome_.group_left_behind = true;
      return;
    }
    PollOnce(std::min<Duration>(kShortTick, UntilKill()), /*watch_exit=*/false);
  }
}

void Supervisor::Reap() {
  if (outcome_.group_left_behind && !LeaderExited()) return;  // cannot block here
  int status = 0;
  pid_t r;
  do {
    r = waitpid(child_.pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r != child_.pid) return;
  if (WIFEXITED(status)) {
    outcome_.exited = true;
    outcome_.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome_.term_signal = WTERMSIG(status);
  }
}

void Supervisor::DrainPipes() {
  child_.stdin_w.Reset();
  const auto until = Steady::now() + kDrainAfterExit;
  while ((child_.stdout_r.valid() || child_.stderr_r.valid()) && Steady::now() < until) {
    PollOnce(std::chrono::duration_cast<Duration>(until - Steady::now()), false);
  }
}

bool Supervisor::LeaderExited() const {
  siginfo_t info = {};
  int r;
  do {
    r = waitid(P_PID, static_cast<id_t>(child_.pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  // ECHILD would mean someone else reaped it: treat as exited.
  return (r == 0 && info.si_pid == child_.pid) || (r < 0 && errno == ECHILD);
}

void Supervisor::SendTerm() {
  term_sent_ = true;
  kill(-child_.pid, SIGTERM);
  kill_at_ = Steady::now() + spec_.kill_grace;
}

void Supervisor::EnforceGrace() {
  if (!term_sent_ || outcome_.killed || Steady::now() < kill_at_) return;
  kill(-child_.pid, SIGKILL);
  outcome_.killed = true;
  kill_sent_at_ = Steady::now();
}

Duration Supervisor::UntilKill() const {
  if (outcome_.killed) return kShortTick;
  return std::chrono::duration_cast<Duration>(kill_at_ - Steady::now());
}

void Supervisor::PollOnce(Duration timeout, bool watch_exit) {
  pollfd fds[5];
  UniqueFd* owners[5] = {};
  nfds_t n = 0;
  auto add = [&](int fd, short events, UniqueFd* owner) {
    fds[n] = {fd, events, 0};
    owners[n++] = owner;
  };
  if (child_.stdin_w.valid()) add(child_.stdin_w.get(), POLLOUT, &child_.stdin_w);
  if (child_.stdout_r.valid()) add(child_.stdout_r.get(), POLLIN, &child_.stdout_r);
  if (child_.stderr_r.valid()) add(child_.stderr_r.get(), POLLIN, &child_.stderr_r);
  if (watch_exit && child_.pidfd.valid()) add(child_.pidfd.get(), POLLIN, nullptr);
  // Once the token has tripped its fd stays readable; watch it only before.
  int token_fd = stop_.token().wait_fd();
  if (!term_sent_ && token_fd >= 0) add(token_fd, POLLIN, nullptr);

  if (poll(fds, n, ToPollMs(timeout)) <= 0) return;  // timeout or EINTR
  for (nfds_t i = 0; i < n; ++i) {
    if (fds[i].revents == 0 || owners[i] == nullptr) continue;
    if (owners[i] == &child_.stdin_w) {
      WriteStdin();
    } else if (owners[i] == &child_.stdout_r) {
      ReadFrom(child_.stdout_r, out_tail_, true);
    } else {
      ReadFrom(child_.stderr_r, err_tail_, false);
    }
  }
}

// Writes what the pipe takes now. SIGPIPE is blocked on this thread around
// the write (and a resulting pending one consumed), so a child that closes
// its stdin early gives EPIPE here instead of killing the agent.
void Supervisor::WriteStdin() {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  const std::string& data = spec_.stdin_data;
  ssize_t w;
  do {
    w = write(child_.stdin_w.get(), data.data() + stdin_written_, data.size() - stdin_written_);
  } while (w < 0 && errno == EINTR);
  int err = errno;
  if (w < 0 && err == EPIPE) {
    timespec zero = {0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  if (w > 0) stdin_written_ += static_cast<size_t>(w);
  bool done = stdin_written_ >= data.size();
  if (done || (w < 0 && err != EAGAIN)) child_.stdin_w.Reset();
}

void Supervisor::ReadFrom(UniqueFd& fd, TailBuffer& tail, bool is_stdout) {
  char buf[kReadChunk];
  for (int i = 0; i < kMaxReadsPerPoll; ++i) {
    ssize_t r = read(fd.get(), buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return;
    if (r <= 0) {  // EOF or a real error: this stream is done
      fd.Reset();
      return;
    }
    std::string_view chunk(buf, static_cast<size_t>(r));
    if (is_stdout && hide_lines_) {
      hiding_.Feed(chunk);
    } else {
      tail.Append(chunk);
    }
    if (is_stdout) lines_.Feed(chunk);
  }
}

// The process group field of /proc/<pid>/stat, and whether it is a zombie.
bool ReadStat(const std::string& path, pid_t* pgrp, char* state) {
  std::ifstream in(path);
  std::string text;
  if (!std::getline(in, text)) return false;
  size_t close_paren = text.rfind(')');  // comm may contain spaces and ')'
  if (close_paren == std::string::npos) return false;
  std::istringstream rest(text.substr(close_paren + 1));
  pid_t ppid = 0;
  rest >> *state >> ppid >> *pgrp;
  return static_cast<bool>(rest);
}

}  // namespace

bool GroupHasLiveMembers(pid_t pgid, const std::string& proc_root) {
  if (kill(-pgid, 0) != 0 && errno == ESRCH) return false;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) return true;  // cannot tell: assume alive
  bool live = false;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    pid_t pgrp = 0;
    char state = '?';
    if (!ReadStat(proc_root + "/" + e->d_name + "/stat", &pgrp, &state)) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') {
      live = true;
      break;
    }
  }
  closedir(dir);
  return live;
}

Result<ChildOutcome> RunChild(const ChildSpec& spec, const StopCondition& stop,
                              const ChildCallbacks& callbacks) {
  Result<SpawnedChild> child = SpawnChild(spec);
  if (!child.ok()) return child.status();
  if (callbacks.on_started) callbacks.on_started(child->pid);
  Supervisor supervisor(spec, std::move(child).value(), stop, callbacks);
  return supervisor.Run();
}

}  // namespace apollo::agent
