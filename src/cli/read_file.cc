#include "cli/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace apollo::cli {

Result<std::string> ReadSmallFile(const std::string& path, size_t limit) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    int e = errno;
    std::string m = "cannot read " + path + ": " + std::strerror(e);
    return e == ENOENT ? Status::NotFound(m) : Status::PermissionDenied(m);
  }
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::PermissionDenied("cannot read " + path + ": " + std::strerror(errno));
  std::string data(limit + 1, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  return data;
}

}  // namespace apollo::cli
