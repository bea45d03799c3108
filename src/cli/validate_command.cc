#include "cli/validate_command.h"

#include <nlohmann/json.hpp>

#include "cli/read_file.h"
#include "core/task_spec.h"

namespace apollo::cli {

int RunValidate(const ValidateOptions& opts, std::ostream& out, std::ostream& err) {
  ParseLimits limits;
  // One byte over the limit is enough for the parser to say "too large".
  auto content = ReadSmallFile(opts.file, limits.max_file_bytes);
  if (!content.ok()) {
    err << "apollo-cli: " << content.status().message() << "\n";
    return 1;
  }
  ParsedTasks parsed = ParseTaskFile(*content, opts.file, limits);
  if (opts.output == "json") {
    nlohmann::json j = {{"file", opts.file}, {"valid", parsed.ok()}};
    j["tasks"] = nlohmann::json::array();
    for (const auto& t : parsed.tasks) {
      j["tasks"].push_back(t.task_id_generated ? nlohmann::json(nullptr) : nlohmann::json(t.task_id));
    }
    j["errors"] = nlohmann::json::array();
    for (const auto& d : parsed.errors) {
      j["errors"].push_back({{"line", d.line}, {"column", d.column}, {"message", d.message}});
    }
    out << j.dump(2) << "\n";
    return parsed.ok() ? 0 : 1;
  }
  for (const auto& d : parsed.errors) err << d.ToString() << "\n";
  if (!parsed.ok()) {
    err << opts.file << ": " << parsed.errors.size()
        << (parsed.errors.size() == 1 ? " problem" : " problems") << "; the file is not valid\n";
    return 1;
  }
  out << opts.file << ": valid, " << parsed.tasks.size()
      << (parsed.tasks.size() == 1 ? " task" : " tasks");
  std::string sep = ": ";
  for (const auto& t : parsed.tasks) {
    out << sep << (t.task_id_generated ? "<generated id>" : t.task_id);
    sep = ", ";
  }
  out << "\n";
  return 0;
}

}  // namespace apollo::cli
