#include "tls/pem_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace apollo::tls {
namespace {

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status Errno(const std::string& what, const std::string& path, int e) {
  std::string m = "cannot " + what + " " + path + ": " + std::strerror(e);
  return e == EACCES || e == EPERM || e == EROFS ? Status::PermissionDenied(m)
                                                 : Status::Internal(m);
}

// A temporary file next to `final_path` holding `text` with `mode`,
// fsynced. Its name is returned in *tmp (empty on failure).
Status WriteTemp(const std::string& final_path, const std::string& text, mode_t mode,
                 std::string* tmp) {
  std::string name = final_path + ".tmp-XXXXXX";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());  // created 0600: the key is never readable by others
  if (fd < 0) return Errno("create a file in", DirOf(final_path), errno);
  *tmp = buf.data();
  Status st;
  size_t done = 0;
  while (st.ok() && done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = Errno("write", *tmp, errno);
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (st.ok() && ::fchmod(fd, mode) != 0) st = Errno("chmod", *tmp, errno);
  if (st.ok() && ::fsync(fd) != 0) st = Errno("fsync", *tmp, errno);
  if (::close(fd) != 0 && st.ok()) st = Errno("close", *tmp, errno);
  if (!st.ok()) {
    ::unlink(tmp->c_str());
    tmp->clear();
  }
  return st;
}

// Puts `tmp` at `path`: replacing (rename) or only if absent (link).
Status Place(const std::string& tmp, const std::string& path, bool force) {
  if (force) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) return Errno("write", path, errno);
    return Status::Ok();
  }
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    if (e == EEXIST) {
      return Status::AlreadyExists(path + " already exists; pass --force to replace it");
    }
    return Errno("write", path, e);
  }
  ::unlink(tmp.c_str());
  return Status::Ok();
}

}  // namespace

PemPairPaths PemPairFor(const std::string& dir, const std::string& name) {
  std::string base = dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
  return PemPairPaths{base + ".pem", base + "-key.pem"};
}

Status WritePemPair(const PemPairPaths& paths, const std::string& cert_pem,
                    const std::string& key_pem, bool force) {
  if (!force) {
    for (const std::string* p : {&paths.cert, &paths.key}) {
      struct stat st {};
      if (::lstat(p->c_str(), &st) == 0) {
        return Status::AlreadyExists(*p + " already exists; pass --force to replace it");
      }
    }
  }
  std::string cert_tmp, key_tmp;
  Status st = WriteTemp(paths.key, key_pem, 0600, &key_tmp);
  if (st.ok()) st = WriteTemp(paths.cert, cert_pem, 0644, &cert_tmp);
  if (st.ok()) st = Place(key_tmp, paths.key, force);
  if (st.ok()) {
    key_tmp.clear();  // in place
    st = Place(cert_tmp, paths.cert, force);
    // Without the certificate the new key is useless: take it back, so the
    // directory is as before (with --force the old key is gone either way).
    if (!st.ok() && !force) ::unlink(paths.key.c_str());
    if (st.ok()) cert_tmp.clear();
  }
  if (!key_tmp.empty()) ::unlink(key_tmp.c_str());
  if (!cert_tmp.empty()) ::unlink(cert_tmp.c_str());
  if (!st.ok()) return st;
  // The new names survive a crash only once the directory is synced.
  int dfd = ::open(DirOf(paths.cert).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace apollo::tls
