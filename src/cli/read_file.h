#pragma once

// Reading a small input file for the CLI, bounded so a huge or endless file
// (/dev/zero) cannot exhaust memory.

#include <cstddef>
#include <string>

#include "core/status.h"

namespace apollo::cli {

// The file's bytes, or NotFound/PermissionDenied/InvalidArgument with a
// message naming the path. Reads at most `limit` + 1 bytes, so the caller can
// tell a file over its limit.
Result<std::string> ReadSmallFile(const std::string& path, size_t limit);

}  // namespace apollo::cli
