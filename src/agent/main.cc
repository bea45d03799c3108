// edge-agent: not yet implemented beyond --help and --version (issue 5 makes it
// real). Exits non-zero when asked to run, so nothing mistakes it for a
// working daemon.
#include <iostream>

#include <CLI/CLI.hpp>

#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"Apollo-11 edge-agent"};
  std::string config;
  app.add_option("--config", config, "configuration file (YAML)");
  app.set_version_flag("--version", std::string("edge-agent ") + apollo::kVersion);
  CLI11_PARSE(app, argc, argv);
  std::cerr << "edge-agent: not implemented yet in this build; only --help and --version work\n";
  return 2;
}
