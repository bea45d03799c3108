#pragma once

// `apollo-cli store backup --out FILE`: the orchestrator's online backup of
// its store (RPC BackupStore, admin), written to FILE atomically: a
// temporary name beside it, fsync, rename; an existing FILE is refused.
// A PostgreSQL store: the server's answer says how to use pg_dump.
//
// `apollo-cli store restore --from FILE --store sqlite://PATH [--force]`:
// offline, on the orchestrator's machine with the orchestrator stopped: the
// backup is checked (a SQLite store of a schema this build reads), then put
// in place of PATH atomically (store/sqlite/backup.h). An existing store is
// replaced only with --force.
//
// docs/operations.md#backup-and-restore. Thread-safety: one call at a time.

#include <ostream>
#include <string>

#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct StoreCommandOptions {
  std::string out;        // backup --out
  std::string from;       // restore --from
  std::string store_url;  // restore --store
  bool force = false;     // restore --force
};

// Return the exit code; on failure one line "apollo-cli: <reason>" on `err`.
int RunStoreBackup(const GlobalOptions& global, const StoreCommandOptions& opts,
                   OrchestratorClient& client, std::ostream& out, std::ostream& err);
int RunStoreRestore(const GlobalOptions& global, const StoreCommandOptions& opts, std::ostream& out,
                    std::ostream& err);

}  // namespace apollo::cli
