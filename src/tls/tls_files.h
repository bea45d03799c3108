#pragma once

// A daemon's TLS files, read and checked before they are handed to gRPC, so
// a wrong path or a mismatched key is one clear line at start-up instead of
// an anonymous handshake failure later.
//
// Thread-safety: LoadTlsMaterial reads files; otherwise values.

#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "tls/tls_paths.h"

namespace apollo::tls {

// The PEM texts gRPC's SSL credentials take, plus what was learnt checking them.
struct TlsMaterial {
  std::string cert_pem;   // this process's certificate (then any intermediates)
  std::string key_pem;    // its private key
  std::string ca_pem;     // the CA certificate(s): peers must chain to one
  std::string node_id;    // the certificate's apollo-node:// id; empty if none
  std::string not_after;  // the certificate's expiry, ISO 8601
  // Not fatal, worth a log line (e.g. a key file other users can read).
  std::vector<std::string> warnings;
};

// How the three settings are called in messages: the flags by default; a
// daemon reading its config file may say "--tls-cert / tls.cert".
struct TlsSettingNames {
  std::string cert = "--tls-cert";
  std::string key = "--tls-key";
  std::string ca = "--tls-ca";
};

// Reads `paths` (all three set) and checks that the certificate and the CA
// parse, that the key belongs to the certificate, and that the certificate
// chains to the CA and is valid at `now`. Errors name the setting and the
// path, one line: NotFound / PermissionDenied for a file that cannot be
// read, InvalidArgument for bad contents, FailedPrecondition for a
// certificate the CA does not vouch for (wrong CA, expired, not yet valid).
Result<TlsMaterial> LoadTlsMaterial(const TlsPaths& paths, TimePoint now,
                                    const TlsSettingNames& names = {});

}  // namespace apollo::tls
