#pragma once

// apollo-cli's command line: the CLI11 wiring of every command and of the
// global options (--server, -o/--output, --timeout, --tls-*, --token), run in-process
// so the tests drive the whole tool against a fake server.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace apollo::cli {

// What apollo-cli reads from its environment, read by main() and passed in
// (no getenv below main).
struct CliEnv {
  std::optional<std::string> apollo_server;  // $APOLLO_SERVER
  std::optional<std::string> apollo_tls_ca = std::nullopt;    // $APOLLO_TLS_CA
  std::optional<std::string> apollo_tls_cert = std::nullopt;  // $APOLLO_TLS_CERT
  std::optional<std::string> apollo_tls_key = std::nullopt;   // $APOLLO_TLS_KEY
  std::optional<std::string> apollo_token = std::nullopt;     // $APOLLO_TOKEN
};

// Parses `args` (args[0] is the program name), runs the chosen command and
// returns the process exit code. Never throws: a bad flag is one line
// "apollo-cli: <CLI11's reason>" on `err` and kExitUsage; --help and
// --version print on `out` and return 0.
int RunCli(const std::vector<std::string>& args, const CliEnv& env, std::ostream& out,
           std::ostream& err);

}  // namespace apollo::cli
