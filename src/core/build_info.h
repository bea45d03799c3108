#pragma once

// The commit a binary was built from, for --version and start-up lines. In
// its own library (apollo_build_info, generated at every build) so that a
// new commit relinks only the programs that show it.
//
// Thread-safety: constants.

#include <string>
#include <string_view>

namespace apollo {

// "859bee0c1a2b", "859bee0c1a2b-dirty" (built from a modified tree), or
// "unknown" (not built from a git checkout).
const char* GitCommit();

// `program`'s --version text: "<program> <release> (commit <id>, agent
// protocol <n>)".
std::string VersionLine(std::string_view program);

}  // namespace apollo
