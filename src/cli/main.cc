// apollo-cli: the operator's tool. Reads the environment, then hands over to
// RunCli (cli/app.h), which never throws.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <grpc/support/log.h>

#include "cli/app.h"

namespace {

// gRPC's own log lines would break the one-line error contract on stderr;
// every failure the CLI cares about comes back as a call's Status instead.
void DropGrpcLog(gpr_log_func_args*) {}

}  // namespace

int main(int argc, char** argv) {
  gpr_set_log_function(DropGrpcLog);
  apollo::cli::CliEnv env;
  if (const char* s = std::getenv("APOLLO_SERVER")) env.apollo_server = s;
  if (const char* s = std::getenv("APOLLO_TLS_CA")) env.apollo_tls_ca = s;
  if (const char* s = std::getenv("APOLLO_TLS_CERT")) env.apollo_tls_cert = s;
  if (const char* s = std::getenv("APOLLO_TLS_KEY")) env.apollo_tls_key = s;
  if (const char* s = std::getenv("APOLLO_TOKEN")) env.apollo_token = s;
  std::vector<std::string> args(argv, argv + argc);
  return apollo::cli::RunCli(args, env, std::cout, std::cerr);
}
