#pragma once

// A throwaway PostgreSQL 15 server for tests, benchmarks and chaos runs:
// initdb in a fresh temp dir (as the `postgres` user when running as root,
// since initdb refuses root), started on a free loopback port with its socket
// in that dir, trust authentication for user `apollo`. Stopped and removed by
// the destructor.
//
// Binaries come from $APOLLO_PG_BIN, else /usr/lib/postgresql/15/bin.
// Every wait is bounded (pg_ctl -w -t). Start() failing is an error, never a
// reason to skip: callers should fail their test with its message.
//
// Thread-safety: not thread-safe; one owner.

#include <memory>
#include <string>

#include "core/status.h"

namespace apollo::store::testing {

class PgServer {
 public:
  struct Options {
    // False (tests): fsync=off and friends, for speed; a server crash could
    // lose data, a client crash cannot. True (benchmarks): stock settings.
    bool durable = false;
    int start_timeout_s = 60;
  };

  static Result<std::unique_ptr<PgServer>> Start(const Options& options);
  static Result<std::unique_ptr<PgServer>> Start() { return Start(Options{}); }
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // Stops the server (fast shutdown: open sessions are cut off).
  Status Stop();
  // Starts it again on the same port and data dir.
  Status Restart();

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // postgresql://apollo@127.0.0.1:<port>/<db>
  std::string Url(const std::string& db) const;
  // Creates database `name`; returns its URL.
  Result<std::string> CreateDatabase(const std::string& name);
  // Creates a database with a fresh name (db1, db2, ...); returns its URL.
  Result<std::string> NewDatabase();

 private:
  PgServer(std::string dir, Options options) : dir_(std::move(dir)), options_(options) {}
  Status InitDb();
  Status StartOn(int port);
  std::string LogTail() const;

  std::string dir_;
  Options options_;
  int port_ = 0;
  bool running_ = false;
  int next_db_ = 0;
};

}  // namespace apollo::store::testing
