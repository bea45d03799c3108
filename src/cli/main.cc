// apollo-cli: the operator's tool.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/validate_command.h"
#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"apollo-cli: operate an Apollo-11 fleet"};
  app.set_version_flag("--version", std::string("apollo-cli ") + apollo::kVersion);
  app.require_subcommand(1);

  CLI::App* task = app.add_subcommand("task", "submit, inspect and validate tasks");
  task->require_subcommand(1);

  apollo::cli::ValidateOptions validate;
  CLI::App* v = task->add_subcommand("validate", "check a task file offline (no server needed)");
  v->add_option("--file,-f", validate.file, "task file (YAML)")->required();
  v->add_option("--output,-o", validate.output, "text or json")
      ->check(CLI::IsMember({"text", "json"}));

  int code = 0;
  v->callback([&] { code = apollo::cli::RunValidate(validate, std::cout, std::cerr); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help on --help (exit 0) and a one-line reason otherwise.
    return app.exit(e);
  }
  return code;
}
