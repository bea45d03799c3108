#pragma once

// Plain-text tables for apollo-cli's human output. Pure functions.

#include <cstdint>
#include <string>
#include <vector>

namespace apollo::cli {

using TableRow = std::vector<std::string>;

// Renders `rows` (the first is the header) as left-aligned columns separated
// by two spaces, one line per row, no trailing spaces. An empty cell is shown
// as "-"; every cell goes through OneLine() so server text cannot break the
// layout. Widths count UTF-8 code points. A row shorter than the header is
// padded with "-".
std::string RenderTable(const std::vector<TableRow>& rows);

// A time in microseconds since the Unix epoch as RFC 3339 UTC
// ("2024-04-05T12:34:56.789012Z"); 0 (never set) as `if_unset`.
std::string FormatMicros(int64_t us, const std::string& if_unset = "-");

}  // namespace apollo::cli
