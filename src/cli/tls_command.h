#pragma once

// `apollo-cli tls ca create` and `apollo-cli tls cert create`: the fleet's
// certificates, made offline (no server), as `nomad tls ca create` /
// `nomad tls cert create` do (tls/cert_authority.h has the details):
//
//   tls ca create   --dir D [--days N] [--force]          D/ca.pem, D/ca-key.pem
//   tls cert create --dir D --server [--host H ...]       D/server.pem, D/server-key.pem
//   tls cert create --dir D --node NODE_ID                D/NODE_ID.pem, D/NODE_ID-key.pem
//   tls cert create --dir D --client --name N             D/N.pem, D/N-key.pem
//
// --name renames the files (server and node certificates too); --days sets
// the validity (CA 5 years, certificates 1 year by default). Keys are mode
// 0600; existing files are kept unless --force.

#include <ostream>
#include <string>
#include <vector>

#include "core/clock.h"

namespace apollo::cli {

struct TlsOptions {
  std::string dir;
  int days = 0;  // 0: the default for what is made
  bool force = false;
  // tls cert create: exactly one of the three kinds.
  bool server = false;
  std::string node;  // --node NODE_ID
  bool client = false;
  std::string name;                // file base name; required with --client
  std::vector<std::string> hosts;  // --host, with --server only
  std::string output = "text";     // "text" or "json"
};

// Return the process exit code: 0 made, 1 refused (files exist, no CA,
// file system), 2 bad flags. `now` starts the validity window.
int RunTlsCaCreate(const TlsOptions& opts, TimePoint now, std::ostream& out, std::ostream& err);
int RunTlsCertCreate(const TlsOptions& opts, TimePoint now, std::ostream& out, std::ostream& err);

}  // namespace apollo::cli
