#include "store/postgres/pg_conn.h"

namespace apollo::store::postgres {

std::string ConnectionString(std::string_view url) {
  // Bounded waits on a dead or partitioned server: connect in 5 s, and a
  // connection whose sent data goes unacknowledged for 30 s is dropped.
  static constexpr std::pair<const char*, const char*> kDefaults[] = {
      {"connect_timeout", "5"}, {"tcp_user_timeout", "30000"}, {"keepalives_idle", "10"}};
  std::string s(url);
  bool is_url = s.starts_with("postgresql://") || s.starts_with("postgres://");
  for (const auto& [key, value] : kDefaults) {
    if (s.find(key) != std::string::npos) continue;
    if (is_url) {
      s += (s.find('?') == std::string::npos ? "?" : "&");
    } else {
      s += " ";
    }
    s += std::string(key) + "=" + value;
  }
  return s;
}

Status ToStatus(std::string_view what, const std::exception& e) {
  std::string where(what);
  std::string msg = e.what();
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return Status::Unavailable(where + ": PostgreSQL connection lost during commit; outcome "
                               "unknown, retry (writes are idempotent): " + msg);
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return Status::Unavailable(where + ": PostgreSQL unreachable: " + msg);
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr ||
      dynamic_cast<const pqxx::unique_violation*>(&e) != nullptr) {
    return Status::Aborted(where + ": concurrent write conflict: " + msg);
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    const std::string& state = sql->sqlstate();
    // Class 08: connection exception; 57P: operator intervention (shutdown).
    if (state.starts_with("08") || state.starts_with("57P")) {
      return Status::Unavailable(where + ": PostgreSQL unavailable (" + state + "): " + msg);
    }
    return Status::Internal(where + ": PostgreSQL error " + state + ": " + msg);
  }
  return Status::Internal(where + ": " + msg);
}

Result<std::unique_ptr<PgConn>> PgConn::Open(const std::string& conn_string) {
  try {
    auto c = std::make_unique<pqxx::connection>(conn_string);
    return std::unique_ptr<PgConn>(new PgConn(std::move(c)));
  } catch (const std::exception& e) {
    Status st = ToStatus("connecting", e);
    if (st.code() == StatusCode::kInternal) st = Status::Unavailable(st.message());
    return st;
  }
}

const std::string& PgConn::Name(const std::string& sql) {
  auto it = names_.find(sql);
  if (it != names_.end()) return it->second;
  std::string name = "apollo_" + std::to_string(names_.size());
  conn_->prepare(name, sql);
  return names_.emplace(sql, std::move(name)).first->second;
}

PgArray& PgArray::Raw(std::string_view token) {
  if (count_++ > 0) text_ += ',';
  text_ += token;
  return *this;
}

PgArray& PgArray::Add(int64_t v) { return Raw(std::to_string(v)); }

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

}  // namespace

std::string CleanText(std::string_view text) {
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

std::string SafeDump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

PgArray& PgArray::Add(std::string_view raw) {
  bool plain = true;
  for (char c : raw) plain = plain && c != 0 && static_cast<unsigned char>(c) < 0x80;
  std::string cleaned = plain ? std::string() : CleanText(raw);
  std::string_view text = plain ? raw : std::string_view(cleaned);
  if (count_++ > 0) text_ += ',';
  text_ += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') text_ += '\\';
    text_ += c;
  }
  text_ += '"';
  return *this;
}

}  // namespace apollo::store::postgres
