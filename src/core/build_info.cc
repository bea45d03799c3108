#include "core/build_info.h"

#include "core/version.h"

namespace apollo {
namespace {

// Written by cmake/GitCommit.cmake at every build.
constexpr const char* kCommit =
#include "apollo_git_commit.inc"
    ;

}  // namespace

const char* GitCommit() { return kCommit; }

std::string VersionLine(std::string_view program) {
  return std::string(program) + " " + kVersion + " (commit " + kCommit + ", agent protocol " +
         std::to_string(kProtocolVersion) + ")";
}

}  // namespace apollo
