#pragma once

// libpqxx plumbing shared by the PostgreSQL store: one connection with its
// prepared statements, array literals for set-based statements, and the one
// place where pqxx exceptions become Status values.
//
// Error mapping (see ToStatus):
//   broken connection, cannot connect      -> kUnavailable (retry the call)
//   commit outcome unknown (in doubt)      -> kUnavailable
//   serialization failure, deadlock        -> kAborted (callers retry inside)
//   unique violation                       -> kAborted (a concurrent writer won)
//   anything else                          -> kInternal with the server's text
//
// Thread-safety: a PgConn is used by one thread at a time.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/status.h"

namespace apollo::store::postgres {

// The connection string libpq gets: `url` plus, unless it sets them, a
// connect timeout and TCP timeouts, so a dead or partitioned server fails a
// call in seconds rather than hanging it.
std::string ConnectionString(std::string_view url);

// Any exception thrown by pqxx (or std) turned into a Status, with `what`
// naming the operation.
Status ToStatus(std::string_view what, const std::exception& e);

// True when the whole transaction should simply be run again.
inline bool IsRetryable(const Status& s) { return s.code() == StatusCode::kAborted; }

class PgConn {
 public:
  // Connects (kUnavailable when the server cannot be reached).
  static Result<std::unique_ptr<PgConn>> Open(const std::string& conn_string);

  pqxx::connection& conn() { return *conn_; }

  // Runs `sql` as a prepared statement of this connection (prepared on first
  // use, keyed by the text), with `args` as parameters (nullptr = NULL).
  template <typename Txn, typename... Args>
  pqxx::result Exec(Txn& txn, const std::string& sql, Args&&... args) {
    return txn.exec_prepared(Name(sql), std::forward<Args>(args)...);
  }

 private:
  explicit PgConn(std::unique_ptr<pqxx::connection> c) : conn_(std::move(c)) {}
  const std::string& Name(const std::string& sql);

  std::unique_ptr<pqxx::connection> conn_;
  std::unordered_map<std::string, std::string> names_;  // sql -> statement name
};

// `text` as PostgreSQL's UTF8 text accepts it: invalid UTF-8 and NUL bytes
// become U+FFFD. Agents and operators can send any bytes (SQLite stores
// them as given); one bad string must not fail a whole batch here.
std::string CleanText(std::string_view text);

// A JSON value as text, invalid UTF-8 replaced rather than thrown on.
std::string SafeDump(const nlohmann::json& j);

// A PostgreSQL array literal ('{...}') built element by element, for
// `unnest($1::text[], ...)` and `= ANY($1)` parameters.
class PgArray {
 public:
  PgArray& Add(std::string_view text);
  PgArray& Add(const std::string& text) { return Add(std::string_view(text)); }
  PgArray& Add(const char* text) { return Add(std::string_view(text)); }
  PgArray& Add(int64_t v);
  PgArray& Add(bool v) { return Raw(v ? "t" : "f"); }
  PgArray& AddNull() { return Raw("NULL"); }
  PgArray& Add(const std::optional<int64_t>& v) { return v ? Add(*v) : AddNull(); }
  PgArray& Add(const std::optional<std::string>& v) { return v ? Add(std::string_view(*v)) : AddNull(); }
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  std::string str() const { return text_ + "}"; }

 private:
  PgArray& Raw(std::string_view token);
  std::string text_ = "{";
  size_t count_ = 0;
};

// A nullable text parameter: nullptr (SQL NULL) or the string's characters.
inline const char* OrNull(const std::optional<std::string>& v) {
  return v ? v->c_str() : nullptr;
}

// Reads a column as T, or nullopt when NULL.
template <typename T>
std::optional<T> Opt(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<T>();
}

}  // namespace apollo::store::postgres
