#include "agent/handlers/child_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <vector>

extern char** environ;

namespace apollo::agent {
namespace {

constexpr int kStageChdir = 1;
constexpr int kStageExec = 2;
constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

struct ExecReport {
  int stage;
  int err;
};

std::string ErrnoText(int err) { return std::strerror(err); }

// pipe2(O_CLOEXEC) with both ends moved to fds >= 3, so the child's dup2
// onto 0/1/2 can never clobber one of them.
Status MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Internal("pipe2: " + ErrnoText(errno));
  for (int& fd : fds) {
    if (fd < 3) {
      int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
      close(fd);
      fd = moved;
    }
  }
  read_end = UniqueFd(fds[0]);
  write_end = UniqueFd(fds[1]);
  if (!read_end.valid() || !write_end.valid()) return Status::Internal("pipe fd move failed");
  return Status::Ok();
}

void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

std::map<std::string, std::string> MergedEnv(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (const auto& [k, v] : extra) env[k] = v;
  return env;
}

void CloseFrom(unsigned first, unsigned last, int max_fd) {
  if (first > last) return;
  if (syscall(SYS_close_range, first, last, 0) == 0) return;
  for (unsigned fd = first; fd <= last && fd < static_cast<unsigned>(max_fd); ++fd) {
    close(static_cast<int>(fd));
  }
}

// In the forked child: only async-signal-safe calls until execve.
[[noreturn]] void ChildExec(int in_r, int out_w, int err_w, int report_fd, const char* cwd,
                            const char* exe, char* const argv[], char* const envp[],
                            int max_fd) {
  setpgid(0, 0);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(in_r, 0);
  dup2(out_w, 1);
  dup2(err_w, 2);
  // report_fd >= 3 (MakePipe), so both ranges are well formed.
  CloseFrom(3, static_cast<unsigned>(report_fd) - 1, max_fd);
  CloseFrom(static_cast<unsigned>(report_fd) + 1, ~0U, max_fd);
  ExecReport report{kStageChdir, 0};
  if (cwd != nullptr && chdir(cwd) != 0) {
    report.err = errno;
  } else {
    execve(exe, argv, envp);
    report = {kStageExec, errno};
  }
  ssize_t n = write(report_fd, &report, sizeof(report));
  (void)n;
  _exit(127);
}

// Reads the child's pre-exec report; EOF means execve succeeded.
Status ReadExecReport(int fd, pid_t pid, const ChildSpec& spec, const std::string& exe) {
  ExecReport report{};
  ssize_t n;
  do {
    n = read(fd, &report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(report))) return Status::Ok();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (report.stage == kStageChdir) {
    return Status::FailedPrecondition("cannot chdir to " + spec.cwd + ": " + ErrnoText(report.err));
  }
  if (report.err == EACCES) return Status::PermissionDenied(exe + ": " + ErrnoText(report.err));
  if (report.err == ENOENT) return Status::NotFound(exe + ": " + ErrnoText(report.err));
  return Status::FailedPrecondition("cannot execute " + exe + ": " + ErrnoText(report.err));
}

}  // namespace

void UniqueFd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Result<std::string> ResolveExecutable(const std::string& name, const std::string& path_env) {
  auto check = [](const std::string& p) -> Status {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return Status::NotFound(p + ": " + ErrnoText(errno));
    if (!S_ISREG(st.st_mode) || access(p.c_str(), X_OK) != 0) {
      return Status::PermissionDenied(p + ": not an executable file");
    }
    return Status::Ok();
  };
  if (name.empty()) return Status::InvalidArgument("empty program name");
  if (name.find('/') != std::string::npos) {
    Status st = check(name);
    if (!st.ok()) return st;
    return name;
  }
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string::npos) end = path_env.size();
    std::string dir = path_env.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (check(candidate).ok()) return candidate;
    start = end + 1;
  }
  return Status::NotFound(name + ": command not found");
}

namespace {

// The program and its "argv..., k=v..." strings, resolved before fork.
struct ExecArgs {
  std::string exe;
  std::vector<std::string> strings;  // argv strings, then "k=v" strings
  size_t argc = 0;
};

Result<ExecArgs> BuildExecArgs(const ChildSpec& spec) {
  std::map<std::string, std::string> env =
      spec.inherit_env ? MergedEnv(spec.env_overrides) : spec.env_overrides;
  auto path_it = env.find("PATH");
  Result<std::string> exe = ResolveExecutable(
      spec.executable.empty() ? spec.argv[0] : spec.executable,
      path_it != env.end() ? path_it->second : kDefaultPath);
  if (!exe.ok()) return exe.status();
  ExecArgs args{*exe, spec.argv, spec.argv.size()};
  for (const auto& [k, v] : env) args.strings.push_back(k + "=" + v);
  return args;
}

}  // namespace

Result<SpawnedChild> SpawnChild(const ChildSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("empty argv");
  Result<ExecArgs> args = BuildExecArgs(spec);
  if (!args.ok()) return args.status();
  // Everything the child needs is built before fork: after fork, in a
  // multi-threaded parent, the child may not allocate.
  std::vector<char*> argv, envp;
  for (size_t i = 0; i < args->strings.size(); ++i) {
    (i < args->argc ? argv : envp).push_back(args->strings[i].data());
  }
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  long open_max = sysconf(_SC_OPEN_MAX);
  int max_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;

  SpawnedChild child;
  UniqueFd in_r, out_w, err_w, report_r, report_w;
  APOLLO_RETURN_IF_ERROR(MakePipe(in_r, child.stdin_w));
  APOLLO_RETURN_IF_ERROR(MakePipe(child.stdout_r, out_w));
  APOLLO_RETURN_IF_ERROR(MakePipe(child.stderr_r, err_w));
  APOLLO_RETURN_IF_ERROR(MakePipe(report_r, report_w));

  pid_t pid = fork();
  if (pid < 0) return Status::Internal("fork: " + ErrnoText(errno));
  if (pid == 0) {
    ChildExec(in_r.get(), out_w.get(), err_w.get(), report_w.get(), cwd, args->exe.c_str(),
              argv.data(), envp.data(), max_fd);
  }
  // Also set the group from the parent, so it exists before we might kill
  // it (EACCES once the child has exec'd is harmless: it did it itself).
  setpgid(pid, pid);
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();
  report_w.Reset();
  APOLLO_RETURN_IF_ERROR(ReadExecReport(report_r.get(), pid, spec, args->exe));

  child.pid = pid;
  child.pidfd = UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  SetNonBlocking(child.stdin_w.get());
  SetNonBlocking(child.stdout_r.get());
  SetNonBlocking(child.stderr_r.get());
  return child;
}

}  // namespace apollo::agent
