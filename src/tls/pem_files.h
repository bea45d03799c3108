#pragma once

// Writing a certificate and its key as two files, the way `apollo-cli tls`
// does: <dir>/<name>.pem (mode 0644) and <dir>/<name>-key.pem (mode 0600).
//
// Nothing half-done: both are written to temporary files first (fsynced),
// then put in place; an existing file is never replaced unless `force`
// (without it the final step is link(2), which fails if the name exists, so
// a file that appears meanwhile is not clobbered either). On failure no
// new file is left behind.
//
// Thread-safety: touches the file system only.

#include <string>

#include "core/status.h"

namespace apollo::tls {

struct PemPairPaths {
  std::string cert;  // <dir>/<name>.pem
  std::string key;   // <dir>/<name>-key.pem
};

PemPairPaths PemPairFor(const std::string& dir, const std::string& name);

// AlreadyExists naming the first existing file (and --force) unless `force`;
// PermissionDenied / Internal for a file system failure, naming the path.
Status WritePemPair(const PemPairPaths& paths, const std::string& cert_pem,
                    const std::string& key_pem, bool force);

}  // namespace apollo::tls
