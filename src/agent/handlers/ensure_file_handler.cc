// ensure_file: makes params.path hold exactly params.content (and, if
// given, params.mode). Nothing is written when both already match, so a
// repeat is a no-op ({"changed": false}).
//
// Policy (EnsureFilePolicy), checked before anything is touched; each
// refusal is a permanent FAILED:
//  - the path must lie below one of allowed_dirs (none by default), compared
//    component by component, and may not contain "." or ".." components;
//  - a mode with setuid, setgid or sticky bits is refused unless
//    allow_special_modes; a replaced file does not keep such bits either;
//  - no symlink is ever followed: every directory of the path is opened
//    from "/" one component at a time (openat with O_NOFOLLOW|O_DIRECTORY),
//    so a symlinked directory anywhere in the path, or a symlink as the file
//    itself, is refused. Everything after works on descriptors (openat,
//    fchmod, fchown, renameat on the final directory's fd), so swapping a
//    path component for a symlink meanwhile cannot redirect the write.
//
// Durability: the new content goes to a temp file in the same directory,
// which is fsynced, renamed over the path, and the directory fsynced, so a
// crash leaves either the old file or the new one, never a torn mix.
// An existing file's owner is kept (best effort); a new file gets mode 0644
// unless params.mode says otherwise.

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/child_spawn.h"
#include "agent/handlers/params.h"

namespace apollo::agent {
namespace {

using nlohmann::json;
using Components = std::vector<std::string>;

constexpr mode_t kDefaultMode = 0644;
constexpr mode_t kSpecialBits = S_ISUID | S_ISGID | S_ISVTX;
constexpr int kTempNameTries = 16;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string Octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode));
  return buf;
}

Result<std::optional<mode_t>> ParseMode(const json& params) {
  auto it = params.is_object() ? params.find("mode") : params.end();
  if (!params.is_object() || it == params.end() || it->is_null()) return std::optional<mode_t>();
  const Status bad = Status::InvalidArgument(
      "ensure_file: params.mode must be an octal string like \"0644\" or an integer <= 07777");
  if (it->is_number_integer()) {
    int64_t v = it->get<int64_t>();
    if (v < 0 || v > 07777) return bad;
    return std::optional<mode_t>(static_cast<mode_t>(v));
  }
  if (!it->is_string()) return bad;
  std::string s = it->get<std::string>();
  if (s.empty() || s.size() > 5 || s.find_first_not_of("01234567") != std::string::npos) return bad;
  unsigned long v = std::stoul(s, nullptr, 8);
  if (v > 07777) return bad;
  return std::optional<mode_t>(static_cast<mode_t>(v));
}

// "/a//b/c" -> {a, b, c}; nullopt if a component is "." or "..".
std::optional<Components> SplitAbsolute(const std::string& path) {
  Components out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "." || part == "..") return std::nullopt;
    if (!part.empty()) out.push_back(std::move(part));
    start = end + 1;
  }
  return out;
}

std::string JoinComponents(const Components& c, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += "/" + c[i];
  return out.empty() ? "/" : out;
}

Status WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = write(fd, data.data() + off, data.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Status::Unavailable(Errno("write"));
    off += static_cast<size_t>(w);
  }
  return Status::Ok();
}

// True if the open regular file `fd` (size already known) holds `content`.
bool SameContent(int fd, const std::string& content) {
  std::string buf(content.size() + 1, '\0');
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t r = pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got == content.size() && std::memcmp(buf.data(), content.data(), got) == 0;
}

// Why `name` in `dir_fd` could not be opened as a directory.
Status DirOpenError(int dir_fd, const std::string& name, const std::string& shown, int err) {
  struct stat st;
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    return Status::PermissionDenied(shown + " is a symbolic link; ensure_file never follows "
                                    "symlinks (write to the real directory)");
  }
  if (err == ENOENT) return Status::FailedPrecondition("directory " + shown + " does not exist");
  if (err == ENOTDIR) return Status::FailedPrecondition(shown + " is not a directory");
  errno = err;
  return Status::Unavailable(Errno("cannot open " + shown));
}

// Opens the directory made of the first `n` components, walking from "/"
// one component at a time and never following a symlink. Directories on
// the way are opened O_PATH (search permission is enough); the last one
// for reading, so it can be fsynced. PermissionDenied for a symlink.
Result<UniqueFd> OpenDirNoFollow(const Components& c, size_t n) {
  UniqueFd fd(open("/", (n == 0 ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Status::Unavailable(Errno("cannot open /"));
  for (size_t i = 0; i < n; ++i) {
    const int flags = (i + 1 == n ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    UniqueFd next(openat(fd.get(), c[i].c_str(), flags));
    struct stat st;
    if (!next.valid()) return DirOpenError(fd.get(), c[i], JoinComponents(c, i + 1), errno);
    if (fstat(next.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return DirOpenError(fd.get(), c[i], JoinComponents(c, i + 1), ENOTDIR);
    }
    fd = std::move(next);
  }
  return fd;
}

// The regular file `name` in `dir_fd`, opened for reading with its stat in
// *st; an invalid fd if there is none. PermissionDenied for a symlink.
Result<UniqueFd> OpenExisting(int dir_fd, const std::string& name, const std::string& shown,
                              struct stat* st) {
  const Status symlink = Status::PermissionDenied(
      shown + " is a symbolic link; ensure_file neither follows nor replaces symlinks");
  if (fstatat(dir_fd, name.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return UniqueFd();
    return Status::Unavailable(Errno("stat " + shown));
  }
  if (S_ISLNK(st->st_mode)) return symlink;
  if (S_ISDIR(st->st_mode)) return Status::FailedPrecondition(shown + " is a directory");
  // O_NOFOLLOW and fstat again: it may have been swapped since. O_NONBLOCK:
  // should it have become a FIFO, do not hang.
  UniqueFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid() && errno == ELOOP) return symlink;
  if (!fd.valid()) return Status::Unavailable(Errno("open " + shown));
  if (fstat(fd.get(), st) != 0) return Status::Unavailable(Errno("stat " + shown));
  if (!S_ISREG(st->st_mode)) return Status::FailedPrecondition(shown + " is not a regular file");
  return fd;
}

std::string TempName(const std::string& name) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[8] = {};
  if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
    // O_EXCL still keeps a clash safe; only the name is less random.
    for (size_t i = 0; i < sizeof(bytes); ++i) {
      bytes[i] ^= static_cast<unsigned char>(getpid() >> i);
    }
  }
  std::string out = "." + name + ".apollo-tmp-";
  for (unsigned char b : bytes) out += kAlphabet[b % (sizeof(kAlphabet) - 1)];
  return out;
}

// Temp file + fsync + renameat + fsync(dir), all relative to `dir_fd`. The
// temp file is removed on every failure path.
Status AtomicReplace(int dir_fd, const std::string& shown_dir, const std::string& name,
                     const std::string& content, mode_t mode, const struct stat* old) {
  std::string tmp;
  UniqueFd fd;
  for (int i = 0; i < kTempNameTries && !fd.valid(); ++i) {
    tmp = TempName(name);
    fd = UniqueFd(openat(dir_fd, tmp.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid() && errno != EEXIST) break;
  }
  if (!fd.valid()) return Status::Unavailable(Errno("cannot create temp file in " + shown_dir));
  Status st = WriteAll(fd.get(), content);
  if (st.ok() && old != nullptr && fchown(fd.get(), old->st_uid, old->st_gid) != 0) {
    // Not root: the new file keeps our owner. Not worth failing over.
  }
  // After fchown, which may clear setuid/setgid bits.
  if (st.ok() && fchmod(fd.get(), mode) != 0) st = Status::Unavailable(Errno("fchmod"));
  if (st.ok() && fsync(fd.get()) != 0) st = Status::Unavailable(Errno("fsync"));
  fd.Reset();
  if (st.ok() && renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    st = Status::Unavailable(Errno("rename to " + name + " in " + shown_dir));
  }
  if (!st.ok()) {
    unlinkat(dir_fd, tmp.c_str(), 0);
    return st;
  }
  if (fsync(dir_fd) != 0) return Status::Unavailable(Errno("fsync " + shown_dir));
  return Status::Ok();
}

class EnsureFileHandler final : public Handler {
 public:
  explicit EnsureFileHandler(EnsureFilePolicy policy) : policy_(std::move(policy)) {}

  HandlerResult Run(const HandlerContext& ctx) override {
    Status st = CheckParamsObject("ensure_file", ctx.params);
    if (!st.ok()) return HandlerResult::Refused(st.message());
    auto path = RequiredString("ensure_file", ctx.params, "path");
    if (!path.ok()) return HandlerResult::Refused(path.status().message());
    auto content = RequiredString("ensure_file", ctx.params, "content");
    if (!content.ok()) return HandlerResult::Refused(content.status().message());
    auto mode = ParseMode(ctx.params);
    if (!mode.ok()) return HandlerResult::Refused(mode.status().message());
    if (path->empty() || (*path)[0] != '/' || path->back() == '/' ||
        path->find('\0') != std::string::npos) {
      return HandlerResult::Refused("ensure_file: params.path must be an absolute file path");
    }
    std::optional<Components> parts = SplitAbsolute(*path);
    if (!parts || parts->empty()) {
      return HandlerResult::Refused(
          "ensure_file: params.path must not contain '.' or '..' components");
    }
    const json detail = {{"path", *path}};
    if (Status allowed = CheckPolicy(*path, *parts, *mode); !allowed.ok()) {
      return HandlerResult::Refused("ensure_file: " + allowed.message(), detail);
    }
    Result<bool> changed = Ensure(*parts, *content, *mode);
    if (!changed.ok()) {
      std::string error = "ensure_file: " + changed.status().message();
      if (changed.status().code() == StatusCode::kPermissionDenied) {
        return HandlerResult::Refused(std::move(error), detail);
      }
      return HandlerResult::Failed(std::move(error), detail);
    }
    return HandlerResult::Succeeded({{"changed", *changed}, {"path", *path}});
  }

 private:
  Status CheckPolicy(const std::string& path, const Components& parts,
                     std::optional<mode_t> mode) const {
    if (mode && (*mode & kSpecialBits) != 0 && !policy_.allow_special_modes) {
      return Status::PermissionDenied(
          "mode " + Octal(*mode) + " sets setuid, setgid or sticky bits, which this node "
          "does not allow (set ensure_file.allow_special_modes: true in the agent config)");
    }
    if (policy_.allowed_dirs.empty()) {
      return Status::PermissionDenied(
          "this node allows ensure_file in no directory; to write " + path +
          ", list its directory (or a parent) under ensure_file.allowed_dirs in the agent "
          "config");
    }
    std::string listed;
    for (const std::string& dir : policy_.allowed_dirs) {
      std::optional<Components> d = SplitAbsolute(dir);
      if (d && d->size() < parts.size() && std::equal(d->begin(), d->end(), parts.begin())) {
        return Status::Ok();
      }
      listed += (listed.empty() ? "" : ", ") + dir;
    }
    return Status::PermissionDenied(path + " is outside this node's allowed_dirs (" + listed +
                                    ")");
  }

  Result<bool> Ensure(const Components& parts, const std::string& content,
                      std::optional<mode_t> mode) const {
    const size_t n_dirs = parts.size() - 1;
    const std::string& name = parts.back();
    const std::string shown = JoinComponents(parts, parts.size());
    const std::string shown_dir = JoinComponents(parts, n_dirs);
    Result<UniqueFd> dir = OpenDirNoFollow(parts, n_dirs);
    if (!dir.ok()) return dir.status();
    struct stat st = {};
    Result<UniqueFd> file = OpenExisting(dir->get(), name, shown, &st);
    if (!file.ok()) return file.status();
    const bool exists = file->valid();
    const bool same_content = exists && static_cast<size_t>(st.st_size) == content.size() &&
                              SameContent(file->get(), content);
    const bool same_mode = !mode || (exists && (st.st_mode & 07777) == *mode);
    if (same_content && same_mode) return false;
    if (same_content) {
      // fchmod alone is atomic; no need to rewrite the content.
      if (fchmod(file->get(), *mode) != 0) return Status::Unavailable(Errno("chmod " + shown));
      return true;
    }
    mode_t new_mode = mode.value_or(exists ? (st.st_mode & 07777) : kDefaultMode);
    // New content must not inherit setuid/setgid from the file it replaces.
    if (!mode && !policy_.allow_special_modes) new_mode &= ~kSpecialBits;
    APOLLO_RETURN_IF_ERROR(
        AtomicReplace(dir->get(), shown_dir, name, content, new_mode, exists ? &st : nullptr));
    return true;
  }

  EnsureFilePolicy policy_;
};

}  // namespace

std::unique_ptr<Handler> NewEnsureFileHandler(EnsureFilePolicy policy) {
  return std::make_unique<EnsureFileHandler>(std::move(policy));
}

}  // namespace apollo::agent
