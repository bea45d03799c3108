#pragma once

// Where a daemon's TLS files are: its certificate, its private key and the
// CA that signs every certificate of the fleet. Paths only (config values);
// tls/tls_files.h reads and checks them. Header-only, so the config loaders
// need no OpenSSL.
//
// Thread-safety: a value.

#include <string>
#include <string_view>
#include <vector>

namespace apollo::tls {

struct TlsPaths {
  std::string cert;  // PEM: this process's certificate (then any intermediates)
  std::string key;   // PEM: its private key (mode 0600)
  std::string ca;    // PEM: the CA certificate(s) peers must be signed by

  // TLS is on only with all three; some but not all is a configuration error.
  bool any() const { return !cert.empty() || !key.empty() || !ca.empty(); }
  bool complete() const { return !cert.empty() && !key.empty() && !ca.empty(); }
  // "cert", "key", "ca": the ones not set, in that order.
  std::vector<std::string_view> Missing() const {
    std::vector<std::string_view> out;
    if (cert.empty()) out.push_back("cert");
    if (key.empty()) out.push_back("key");
    if (ca.empty()) out.push_back("ca");
    return out;
  }

  friend bool operator==(const TlsPaths&, const TlsPaths&) = default;
};

}  // namespace apollo::tls
