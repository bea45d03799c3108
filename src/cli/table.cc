#include "cli/table.h"

#include <algorithm>

#include "cli/rpc_error.h"
#include "core/clock.h"
#include "core/event.h"

namespace apollo::cli {

namespace {

size_t DisplayWidth(const std::string& s) {
  // Count UTF-8 lead bytes: continuation bytes are 10xxxxxx.
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::string RenderTable(const std::vector<TableRow>& rows) {
  if (rows.empty()) return "";
  size_t ncols = 0;
  for (const auto& r : rows) ncols = std::max(ncols, r.size());
  std::vector<std::vector<std::string>> cells(rows.size(), std::vector<std::string>(ncols, "-"));
  std::vector<size_t> width(ncols, 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t c = 0; c < rows[i].size(); ++c) {
      if (!rows[i][c].empty()) cells[i][c] = OneLine(rows[i][c]);
    }
    for (size_t c = 0; c < ncols; ++c) width[c] = std::max(width[c], DisplayWidth(cells[i][c]));
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < ncols; ++c) {
      line += row[c];
      if (c + 1 < ncols) line.append(width[c] - DisplayWidth(row[c]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string FormatMicros(int64_t us, const std::string& if_unset) {
  return us == 0 ? if_unset : FormatRfc3339(FromUnixMicros(us));
}

}  // namespace apollo::cli
