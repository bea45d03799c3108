// ensure_file: makes params.path hold exactly params.content (and, if
// given, params.mode). Nothing is written when both already match, so a
// repeat is a no-op ({"changed": false}).
//
// Durability: the new content goes to a temp file in the same directory,
// which is fsynced, renamed over the path, and the directory fsynced, so a
// crash leaves either the old file or the new one, never a torn mix.
// The path is never followed if it is a symlink: the link itself is
// replaced by a regular file. An existing file's owner is kept (best
// effort); a new file gets mode 0644 unless params.mode says otherwise.

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/child_spawn.h"
#include "agent/handlers/params.h"

namespace apollo::agent {
namespace {

using nlohmann::json;

constexpr mode_t kDefaultMode = 0644;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

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

// True if the regular file at `path` (size already known) holds `content`.
bool SameContent(const std::string& path, const std::string& content) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return false;
  std::string buf(content.size() + 1, '\0');
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t r = read(fd.get(), buf.data() + got, buf.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got == content.size() && std::memcmp(buf.data(), content.data(), got) == 0;
}

Status FsyncDir(const std::string& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Status::Unavailable(Errno("open " + dir));
  if (fsync(fd.get()) != 0) return Status::Unavailable(Errno("fsync " + dir));
  return Status::Ok();
}

// Temp file + fsync + rename + fsync(dir). The temp file is removed on
// every failure path.
Status AtomicReplace(const std::string& path, const std::string& content, mode_t mode,
                     const struct stat* old) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string tmp = dir + (dir == "/" ? "" : "/") + "." + path.substr(slash + 1) +
                    ".apollo-tmp-XXXXXX";
  UniqueFd fd(mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd.valid()) return Status::Unavailable(Errno("cannot create temp file in " + dir));
  Status st = WriteAll(fd.get(), content);
  if (st.ok() && old != nullptr && fchown(fd.get(), old->st_uid, old->st_gid) != 0) {
    // Not root: the new file keeps our owner. Not worth failing over.
  }
  if (st.ok() && fchmod(fd.get(), mode) != 0) st = Status::Unavailable(Errno("fchmod"));
  if (st.ok() && fsync(fd.get()) != 0) st = Status::Unavailable(Errno("fsync"));
  fd.Reset();
  if (st.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    st = Status::Unavailable(Errno("rename to " + path));
  }
  if (!st.ok()) {
    unlink(tmp.c_str());
    return st;
  }
  return FsyncDir(dir);
}

class EnsureFileHandler final : public Handler {
 public:
  HandlerResult Run(const HandlerContext& ctx) override {
    Status st = CheckParamsObject("ensure_file", ctx.params);
    if (!st.ok()) return HandlerResult::Failed(st.message());
    auto path = RequiredString("ensure_file", ctx.params, "path");
    if (!path.ok()) return HandlerResult::Failed(path.status().message());
    auto content = RequiredString("ensure_file", ctx.params, "content");
    if (!content.ok()) return HandlerResult::Failed(content.status().message());
    auto mode = ParseMode(ctx.params);
    if (!mode.ok()) return HandlerResult::Failed(mode.status().message());
    if (path->empty() || (*path)[0] != '/' || path->back() == '/') {
      return HandlerResult::Failed("ensure_file: params.path must be an absolute file path");
    }
    Result<bool> changed = Ensure(*path, *content, *mode);
    if (!changed.ok()) {
      return HandlerResult::Failed("ensure_file: " + changed.status().message(),
                                   {{"path", *path}});
    }
    return HandlerResult::Succeeded({{"changed", *changed}, {"path", *path}});
  }

 private:
  static Result<bool> Ensure(const std::string& path, const std::string& content,
                             std::optional<mode_t> mode) {
    struct stat st;
    const bool exists = lstat(path.c_str(), &st) == 0;
    if (!exists && errno != ENOENT) return Status::Unavailable(Errno("stat " + path));
    if (exists && S_ISDIR(st.st_mode)) return Status::FailedPrecondition(path + " is a directory");
    if (exists && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      return Status::FailedPrecondition(path + " is not a regular file");
    }
    const bool regular = exists && S_ISREG(st.st_mode);
    const bool same_content = regular && static_cast<size_t>(st.st_size) == content.size() &&
                              SameContent(path, content);
    const bool same_mode = !mode || (regular && (st.st_mode & 07777) == *mode);
    if (same_content && same_mode) return false;
    if (same_content) {
      // chmod alone is atomic; no need to rewrite the content.
      if (chmod(path.c_str(), *mode) != 0) return Status::Unavailable(Errno("chmod " + path));
      return true;
    }
    const mode_t new_mode = mode.value_or(regular ? (st.st_mode & 07777) : kDefaultMode);
    APOLLO_RETURN_IF_ERROR(AtomicReplace(path, content, new_mode, regular ? &st : nullptr));
    return true;
  }
};

}  // namespace

std::unique_ptr<Handler> NewEnsureFileHandler() { return std::make_unique<EnsureFileHandler>(); }

}  // namespace apollo::agent
