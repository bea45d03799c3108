#pragma once

// A small certificate authority for one fleet, as `nomad tls ca create` /
// `nomad tls cert create` do it: one CA key pair in a directory, and
// certificates it signs for the orchestrator (server), for each agent
// (node: the node id bound as the URI SAN apollo-node://NODE_ID, see
// cert_identity.h) and for operators (client: apollo-cli).
//
// Keys are ECDSA P-256, signatures SHA-256, all made by OpenSSL (EVP/X509).
// Files: <dir>/ca.pem + <dir>/ca-key.pem; <dir>/<name>.pem +
// <dir>/<name>-key.pem (keys mode 0600; pem_files.h: never overwritten
// unless `force`, nothing half-written).
//
// Thread-safety: touches the file system only; `now` is passed in (the
// validity window starts 5 minutes before it, for clocks a little behind).

#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "tls/pem_files.h"

namespace apollo::tls {

inline constexpr int kDefaultCaDays = 5 * 365;
inline constexpr int kDefaultCertDays = 365;
inline constexpr int kMaxDays = 100 * 365;
inline constexpr std::string_view kCaName = "ca";  // ca.pem, ca-key.pem
// A server certificate's names when none are given: an orchestrator on this
// machine, dialled as localhost or 127.0.0.1.
inline std::vector<std::string> DefaultServerHosts() { return {"localhost", "127.0.0.1"}; }

enum class CertKind {
  kServer,  // the orchestrator: serverAuth, DNS/IP names
  kNode,    // an agent: clientAuth, URI apollo-node://NODE_ID
  kClient,  // an operator (apollo-cli): clientAuth, no node id
};

struct CertRequest {
  CertKind kind = CertKind::kClient;
  std::string name;                // file base name and CN; not "ca"
  std::string node_id;             // kNode only
  std::vector<std::string> hosts;  // kServer only; empty: DefaultServerHosts()
  int days = kDefaultCertDays;     // 1..kMaxDays
};

struct CreatedPair {
  PemPairPaths paths;
  std::string not_after;  // ISO 8601
  // The certificate would have outlived the CA: it ends with the CA instead.
  bool clamped_to_ca = false;
};

// Makes <dir>/ca.pem and <dir>/ca-key.pem (creating `dir`, mode 0700, if
// missing). InvalidArgument for bad `days`; AlreadyExists unless `force`.
Result<CreatedPair> CreateCa(const std::string& dir, int days, bool force, TimePoint now);

// Makes <dir>/<name>.pem and <dir>/<name>-key.pem signed by the CA in `dir`.
// InvalidArgument for a bad request (name, node id, host, days);
// NotFound when `dir` holds no CA; FailedPrecondition when the CA cannot
// vouch for a certificate now (expired, or its key does not match).
Result<CreatedPair> CreateCert(const std::string& dir, const CertRequest& req, bool force,
                               TimePoint now);

// Empty when `host` can be a server certificate's name: an IPv4/IPv6
// address, or a DNS name (letters, digits, '-', '.'; "*." first allowed).
std::string HostProblem(std::string_view host);

}  // namespace apollo::tls
