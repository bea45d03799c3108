#pragma once

// Read-only inspection of a WAL directory (`edge-agent --dump-wal DIR`):
// prints every intact EVENT record as one JSON line, in file order, and
// every damaged range as a line on stderr. Never writes: safe to run on the
// WAL of a stopped agent for audits and tests.

#include <ostream>
#include <string>

namespace apollo::agent {

// Returns the process exit code: 0, or 1 if the directory cannot be read.
int DumpWal(const std::string& dir, std::ostream& out, std::ostream& err);

}  // namespace apollo::agent
