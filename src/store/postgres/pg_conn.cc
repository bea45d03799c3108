#include "store/postgres/pg_conn.h"

namespace apollo::store::postgres {

std::string ConnectionString(std::string_view url) {
  std::string s(url);
  if (s.find("connect_timeout") != std::string::npos) return s;
  bool is_url = s.starts_with("postgresql://") || s.starts_with("postgres://");
  if (!is_url) return s + " connect_timeout=5";
  return s + (s.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=5";
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

PgArray& PgArray::Add(std::string_view text) {
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
