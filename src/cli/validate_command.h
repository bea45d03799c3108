#pragma once

// `apollo-cli task validate --file F`: validates a task file offline, like
// `nomad job validate`. Prints every problem as "file:line:column: message"
// on stderr and exits 0 only for a valid file.

#include <ostream>
#include <string>

namespace apollo::cli {

struct ValidateOptions {
  std::string file;
  std::string output = "text";  // "text" or "json"
};

// Returns the process exit code: 0 valid, 1 invalid or unreadable.
int RunValidate(const ValidateOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace apollo::cli
