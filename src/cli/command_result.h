#pragma once

// How every apollo-cli command ends: exit code 0 on success; otherwise
// non-zero and exactly one line "apollo-cli: <reason>" on stderr.

#include <ostream>

#include "core/status.h"

namespace apollo::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the request failed, or the task did
inline constexpr int kExitUsage = 2;    // bad flags

// Prints `s` (not OK) as the one error line and returns kExitFailure.
inline int ReportError(const Status& s, std::ostream& err) {
  err << "apollo-cli: " << s.message() << "\n";
  return kExitFailure;
}

}  // namespace apollo::cli
