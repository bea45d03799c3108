#include "store/postgres/pg_text.h"

#include <utility>

namespace apollo::store::postgres {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 (RFC 3629: no overlongs,
// no surrogates, nothing above U+10FFFF).
size_t Utf8Len(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size() || c == 0) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xC2) return 0;
  if (n == 3 && ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && b(i + 1) < 0x90) || c > 0xF4 || (c == 0xF4 && b(i + 1) >= 0x90))) {
    return 0;
  }
  return n;
}

bool PlainAscii(std::string_view s) {
  for (char c : s) {
    if (c == 0 || static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

std::string ConnectionString(std::string_view url) {
  // Bounded waits on a dead or partitioned server: connect in 5 s, and a
  // connection whose sent data goes unacknowledged for 30 s is dropped. A
  // transaction left open by a client that stopped (SIGSTOP, a long GC-like
  // pause) is ended by the server after 5 s, so its locks (a fenced write's
  // share lock on a lease row, lease.h) cannot stop another replica taking
  // over; the store's own transactions never sit idle that long.
  static constexpr std::pair<const char*, const char*> kDefaults[] = {
      {"connect_timeout", "5"},
      {"tcp_user_timeout", "30000"},
      {"keepalives_idle", "10"},
      {"options", "-c idle_in_transaction_session_timeout=5000"}};
  std::string s(url);
  bool is_url = s.starts_with("postgresql://") || s.starts_with("postgres://");
  for (const auto& [key, value] : kDefaults) {
    if (s.find(key) != std::string::npos) continue;
    if (is_url) {
      s += (s.find('?') == std::string::npos ? "?" : "&");
    } else {
      s += " ";
    }
    std::string v(value);
    if (!is_url && v.find(' ') != std::string::npos) v = "'" + v + "'";
    if (is_url) {
      for (size_t at = v.find_first_of(" ="); at != std::string::npos;
           at = v.find_first_of(" =", at)) {
        v.replace(at, 1, v[at] == ' ' ? "%20" : "%3D");
      }
    }
    s += std::string(key) + "=" + v;
  }
  return s;
}

std::string CleanText(std::string_view text) {
  if (PlainAscii(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8Len(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string ArrayLiteral(const sql::RowSet& rows, size_t col) {
  std::string out = "{";
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r > 0) out += ',';
    const sql::Value& v = rows.at(r, col);
    if (v.null) {
      out += "NULL";
    } else if (v.type == sql::Type::kInt) {
      out += std::to_string(v.i);
    } else if (v.type == sql::Type::kBool) {
      out += v.i ? 't' : 'f';
    } else {
      std::string cleaned = CleanText(rows.text(v));
      out += '"';
      for (char c : cleaned) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
  }
  out += '}';
  return out;
}

std::string_view ArrayType(sql::Type t) {
  switch (t) {
    case sql::Type::kInt:
      return "bigint[]";
    case sql::Type::kBool:
      return "boolean[]";
    case sql::Type::kText:
      return "text[]";
  }
  return "text[]";
}

}  // namespace apollo::store::postgres
