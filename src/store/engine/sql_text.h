#pragma once

// Reading a Statement's text (sql.h) for a driver: the dialect blocks, the
// scalar parameters, the row set and its column references, so that each
// driver only says how its dialect writes them (sqlite/, postgres/).
//
// Thread-safety: pure functions.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "store/engine/sql.h"

namespace apollo::store::sql {

// `text` with the /*@<dialect> ...*/ blocks opened (their inside kept) and
// every other /*@name ...*/ block removed. Quoted text is left alone.
std::string KeepDialect(std::string_view text, std::string_view dialect);

// A statement cut into what each dialect writes differently.
struct Template {
  struct Piece {
    enum class Kind { kText, kParam, kRows, kRowRef };
    Kind kind = Kind::kText;
    std::string text;  // kText: SQL as written; kRows: the clause word before
                       // @rows ("FROM", "USING" or ","), cut from the text
    int index = 0;     // kParam: n of $n; kRowRef: the column's position
  };
  std::vector<Piece> pieces;
  int params = 0;  // the highest $n
  bool has_rows = false;
};

// How a dialect writes the pieces of a Template.
struct Spelling {
  std::function<std::string(int n)> param;                     // $n
  std::function<std::string(const Template::Piece&)> row_ref;  // u.<column>
  std::function<std::string(const Template::Piece&)> rows;     // <clause word> @rows
};
std::string Render(const Template& t, const Spelling& spelling);

// Parses the dialect-resolved text of `stmt` (KeepDialect first). Errors
// (kInternal) name the statement: a u.<column> not among its columns, @rows
// without columns or not after FROM / USING / a comma.
Result<Template> ParseTemplate(std::string_view text, std::span<const Column> columns);

}  // namespace apollo::store::sql
