#pragma once

// The seam between the store engine and a SQL database (SQLite, PostgreSQL).
//
// The engine (src/store/engine/) holds every rule of the store and speaks to
// the database only through a Conn: statements written once, typed binds,
// materialized rows. A driver (src/store/sqlite/, src/store/postgres/) holds
// connection management, its dialect and its error mapping; nothing else.
//
// A Statement is SQL text written once for both dialects:
//  - `$1`, `$2`, ... are scalar parameters (bound from Params, in order).
//  - `/*@sqlite ...*/` and `/*@pg ...*/` hold text for one dialect only (an
//    index hint, a row lock, a DDL word); the other dialect drops it.
//  - `@rows` is a row set (RowSet) with the statement's `columns`, referred to
//    as `u.<column>`. It stands alone in a FROM or USING clause, or last in a
//    FROM list (`FROM tasks t, @rows`). PostgreSQL runs the statement once
//    over every row (`unnest(arrays) AS u(...)`: one round trip); SQLite runs
//    it once per row, with `u.<column>` bound as a parameter and the clause
//    naming @rows dropped (an in-process call each: no round trips to save).
//    The engine writes such statements so both readings mean the same: the
//    rows' keys are distinct, no aggregate spans rows, and results are the
//    concatenation of what each row yields.
//
// Errors are Status values with the codes of state_store.h: kUnavailable
// (database unreachable or busy: retry), kAborted (a concurrent writer won:
// run the transaction again), kDataLoss (corruption), kInternal (anything
// else, with the database's text).
//
// Thread-safety: a Conn is used by one thread at a time; a Driver may be
// called from any thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/status.h"

namespace apollo::store::sql {

// A parameter's or row-set column's type. PostgreSQL prepares statements
// with these types (so a NULL is still typed); SQLite binds by value.
enum class Type : uint8_t { kInt, kText, kBool };

struct Column {
  const char* name;
  Type type;
};

// SQL written once (see above). Statements are constants with static
// storage: drivers prepare each once per connection, keyed by its address.
struct Statement {
  const char* text;
  std::span<const Column> columns = {};  // of @rows, if the text has it
};

// One bound value. Text lives in its ValueList's buffer (one allocation
// for all the text of a statement, not one per value).
struct Value {
  Type type = Type::kInt;
  bool null = true;
  int64_t i = 0;     // kInt, kBool (0 / 1)
  uint32_t off = 0;  // kText: where in the list's text
  uint32_t len = 0;
};

// Appends typed values; shared by Params (scalars) and RowSet (cells).
// Add(v...) takes each value by its C++ type: integers and enums -> kInt,
// bool -> kBool, strings -> kText, an empty optional -> a typed NULL.
class ValueList {
 public:
  template <typename... T>
  ValueList& Add(const T&... v) {
    // One resize per row, not a push_back per cell: the writer adds ~40
    // cells per event.
    size_t at = values_.size();
    values_.resize(at + sizeof...(T));
    Value* out = values_.data() + at;
    (Put(*out++, v), ...);
    return *this;
  }

  const std::vector<Value>& values() const { return values_; }
  // A kText value's characters (valid until the list changes).
  std::string_view text(const Value& v) const {
    return std::string_view(text_).substr(v.off, v.len);
  }

 protected:
  template <typename T>
  static constexpr Type TypeOf() {
    if constexpr (std::is_same_v<T, bool>) return Type::kBool;
    if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) return Type::kInt;
    return Type::kText;
  }
  template <typename T>
  void Put(Value& out, const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      out = {Type::kBool, false, v ? 1 : 0, 0, 0};
    } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
      out = {Type::kInt, false, static_cast<int64_t>(v), 0, 0};
    } else {
      std::string_view s(v);
      out = {Type::kText, false, 0, static_cast<uint32_t>(text_.size()),
             static_cast<uint32_t>(s.size())};
      text_.append(s);
    }
  }
  template <typename T>
  void Put(Value& out, const std::optional<T>& v) {
    if (v) {
      Put(out, *v);
    } else {
      out = {TypeOf<T>(), true, 0, 0, 0};
    }
  }
  std::vector<Value> values_;
  std::string text_;
};

// The scalar parameters $1..$n of one execution, in order.
class Params : public ValueList {
 public:
  Params() = default;
  template <typename... T>
  explicit Params(const T&... v) {
    Add(v...);
  }
};

// The rows of @rows, appended cell by cell (or a row per Add) in column
// order.
class RowSet : public ValueList {
 public:
  explicit RowSet(const Statement& stmt) : columns_(stmt.columns) {}
  std::span<const Column> columns() const { return columns_; }
  size_t size() const { return columns_.empty() ? 0 : values_.size() / columns_.size(); }
  bool empty() const { return values_.empty(); }
  void Reserve(size_t rows) { values_.reserve(rows * columns_.size()); }
  // Cell (row, col).
  const Value& at(size_t row, size_t col) const { return values_[row * columns_.size() + col]; }

 private:
  std::span<const Column> columns_;
};

// A query's result, read by (row, column). Integers and booleans arrive
// parsed; NULL reads as 0 / "" (check IsNull where it matters).
class Rows {
 public:
  explicit Rows(int columns = 0) : columns_(columns) {}

  size_t size() const { return columns_ == 0 ? 0 : cells_.size() / columns_; }
  bool empty() const { return cells_.empty(); }
  bool IsNull(size_t row, int col) const { return cell(row, col).null; }
  int64_t Int(size_t row, int col) const { return cell(row, col).i; }
  bool Bool(size_t row, int col) const { return cell(row, col).i != 0; }
  std::optional<int64_t> OptInt(size_t row, int col) const {
    return IsNull(row, col) ? std::nullopt : std::optional<int64_t>(Int(row, col));
  }
  // Valid until the Rows change.
  std::string_view Text(size_t row, int col) const {
    const Cell& c = cell(row, col);
    return std::string_view(text_).substr(c.off, c.len);
  }
  std::string TakeText(size_t row, int col) const { return std::string(Text(row, col)); }

  // Drivers: a new row of columns() NULL cells, then Set* the others.
  void AddRow() { cells_.resize(cells_.size() + static_cast<size_t>(columns_)); }
  void SetInt(int col, int64_t v) { last(col) = Cell{v, 0, 0, false}; }
  void SetText(int col, const char* p, size_t n) {
    last(col) = Cell{0, static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(n), false};
    text_.append(p, n);
  }
  void Reserve(size_t rows) { cells_.reserve(rows * columns_); }
  int columns() const { return columns_; }
  void set_columns(int n) { columns_ = n; }

 private:
  struct Cell {
    int64_t i = 0;
    uint32_t off = 0;  // text: where in text_
    uint32_t len = 0;
    bool null = true;
  };
  size_t idx(size_t row, int col) const { return row * columns_ + col; }
  Cell& last(int col) { return cells_[cells_.size() - static_cast<size_t>(columns_) + col]; }
  const Cell& cell(size_t row, int col) const { return cells_[idx(row, col)]; }
  int columns_;
  std::vector<Cell> cells_;
  std::string text_;
};

enum class Access {
  kWrite,  // the database's write lock is taken at BEGIN (SQLite IMMEDIATE)
  kRead,   // one snapshot for every statement, read-only
};

class Conn {
 public:
  virtual ~Conn() = default;

  virtual Status Begin(Access access) = 0;
  // Runs what is deferred, then commits. kUnavailable "outcome unknown"
  // when the connection broke during COMMIT.
  virtual Status Commit() = 0;
  // Best effort; the connection is usable afterwards (or reports broken).
  virtual void Rollback() = 0;

  // Runs `stmt`, possibly later: a driver may defer it and send everything
  // deferred with the next Flush or Commit in one round trip (PostgreSQL
  // pipelines). By then `out` (if given) holds the rows it produced and
  // `changed` (if given) the rows it changed; both must stay valid until
  // then. `params` and `rows` are read before Exec returns. An error
  // surfaces from that Flush / Commit (the first one since the last).
  virtual void Exec(const Statement& stmt, const Params& params = {}, const RowSet* rows = nullptr,
                    Rows* out = nullptr, int64_t* changed = nullptr) = 0;
  // Runs everything deferred; the first error since the last Flush.
  virtual Status Flush() = 0;

  // Exec + Flush: the rows `stmt` produced. Over no rows: none, and no
  // flush (what is deferred rides with the next round trip).
  Result<Rows> Query(const Statement& stmt, const Params& params = {},
                     const RowSet* rows = nullptr) {
    if (rows && rows->empty()) return Rows();
    Rows out;
    Exec(stmt, params, rows, &out);
    Status st = Flush();
    if (!st.ok()) return st;
    return out;
  }
  // Exec + Flush: the rows `stmt` changed (over no rows: 0, no flush).
  Result<int64_t> Count(const Statement& stmt, const Params& params = {},
                        const RowSet* rows = nullptr) {
    if (rows && rows->empty()) return int64_t{0};
    int64_t n = 0;
    Exec(stmt, params, rows, nullptr, &n);
    Status st = Flush();
    if (!st.ok()) return st;
    return n;
  }

  // Runs a script of several statements without parameters (schema DDL,
  // migrations), rendered for this dialect first (the /*@...*/ blocks).
  virtual Status Script(std::string_view sql) = 0;

  // Between write transactions, on the writer thread: housekeeping that
  // must not delay a commit's callers (SQLite: a WAL checkpoint the
  // background thread could not keep up with).
  virtual void Idle() {}

  // False once the connection is known broken; the owner drops it.
  virtual bool healthy() const { return true; }
};

enum class Role {
  kWriter,  // the one connection that writes (SQLite: sequences, WAL hook)
  kReader,
};

class Driver {
 public:
  virtual ~Driver() = default;
  // "sqlite" or "pg": the /*@name ...*/ blocks this driver keeps.
  virtual std::string_view dialect() const = 0;
  // A new connection (kUnavailable when the database cannot be reached).
  virtual Result<std::unique_ptr<Conn>> Connect(Role role) = 0;
};

}  // namespace apollo::store::sql
