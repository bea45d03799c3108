#pragma once

// Options every apollo-cli command takes, resolved once by the CLI11 wiring
// (cli/app.cc) and passed by const reference to each command.

#include <string>

namespace apollo::cli {

inline constexpr const char* kDefaultServer = "127.0.0.1:7011";
inline constexpr double kDefaultTimeoutSeconds = 10;

struct GlobalOptions {
  // host:port of the orchestrator's operator API. Precedence: --server, then
  // $APOLLO_SERVER, then kDefaultServer.
  std::string server = kDefaultServer;
  std::string output = "text";                // "text" or "json"
  double timeout_s = kDefaultTimeoutSeconds;  // deadline of each unary RPC
  // Mutual TLS (all three, or none: the orchestrator requires a client
  // certificate once it has TLS). Precedence: the flag, then
  // $APOLLO_TLS_CA / $APOLLO_TLS_CERT / $APOLLO_TLS_KEY.
  std::string tls_ca;    // --tls-ca: the CA that signed the orchestrator's certificate
  std::string tls_cert;  // --tls-cert: this operator's certificate
  std::string tls_key;   // --tls-key: its private key
  // The operator token (--token, then $APOLLO_TOKEN); empty: none.
  std::string token;

  bool json() const { return output == "json"; }
};

}  // namespace apollo::cli
